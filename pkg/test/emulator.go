package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linode/linodego"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// Emulator is the Linode API emulator, started, with a linodego client aimed at it.
type Emulator struct {
	*emulator.Emulator
	// Clock is the emulator's clock; it stands still until the test steps it.
	Clock *clocktesting.FakeClock
	// Client retries nothing; a test that wants linodego's retries sets them.
	Client *linodego.Client
	// API is the controller's client over Client, unpaced: what the provider is built on.
	API  *linode.Client
	sent *sentLog
}

// StartEmulator starts the emulator as tests use it: no rate limits, every state machine done by
// the next request (delays scaled to zero), and a clock that stands still. opts come after those
// and override them. The caller closes it.
func StartEmulator(opts ...emulator.Option) (*Emulator, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := emulator.New(append([]emulator.Option{emulator.WithClock(clk), emulator.WithoutRateLimits(), emulator.WithDelayScale(0)}, opts...)...)
	if err := e.Start(); err != nil {
		return nil, err
	}
	sent := &sentLog{base: http.DefaultTransport}
	client := newClient(e, sent)
	return &Emulator{Emulator: e, Clock: clk, Client: client, API: linode.Wrap(client), sent: sent}, nil
}

// newClient is the emulator's own client (emulator.NewClient) sending through transport.
func newClient(e *emulator.Emulator, transport http.RoundTripper) *linodego.Client {
	c := linodego.NewClient(&http.Client{Timeout: 30 * time.Second, Transport: transport})
	c.SetBaseURL(e.URL())
	c.SetAPIVersion("v4")
	c.SetToken(e.Token())
	c.SetRetryCount(0)
	c.SetRetryWaitTime(10 * time.Millisecond)
	c.SetRetryMaxWaitTime(100 * time.Millisecond)
	c.UseCache(false)
	return &c
}

// Calls is how many API requests the emulator answered since its counters were last reset.
func (e *Emulator) Calls() int {
	total := 0
	for _, n := range e.Counters() {
		total += n
	}
	return total
}

// RecordSent makes Client keep every request it sends from now on, body and all, for Sent.
func (e *Emulator) RecordSent() { e.sent.recording.Store(true) }

// Sent are the requests Client sent since RecordSent, in order, whatever their answers.
func (e *Emulator) Sent() []SentRequest {
	e.sent.mu.Lock()
	defer e.sent.mu.Unlock()
	return slices.Clone(e.sent.requests)
}

// SentTo are the requests Client sent to route, "METHOD /template" as the emulator names routes
// (e.g. "POST /lke/clusters/{clusterId}/pools").
func (e *Emulator) SentTo(route string) []SentRequest {
	return slices.DeleteFunc(e.Sent(), func(r SentRequest) bool { return !r.Matches(route) })
}

// SentRequest is a request as it went on the wire.
type SentRequest struct {
	Method string
	// Path is below the API version, e.g. /lke/clusters/1/pools.
	Path string
	Body []byte
}

// Matches reports whether the request went to route, "METHOD /template" with a {name} for each
// segment that varies.
func (r SentRequest) Matches(route string) bool {
	method, template, _ := strings.Cut(route, " ")
	want, got := strings.Split(strings.Trim(template, "/"), "/"), strings.Split(strings.Trim(r.Path, "/"), "/")
	if method != r.Method || len(want) != len(got) {
		return false
	}
	for i := range want {
		if !strings.HasPrefix(want[i], "{") && want[i] != got[i] {
			return false
		}
	}
	return true
}

// Object is the request's body as a JSON object, nil when it has none.
func (r SentRequest) Object() (map[string]any, error) {
	if len(r.Body) == 0 {
		return nil, nil
	}
	var object map[string]any
	if err := json.Unmarshal(r.Body, &object); err != nil {
		return nil, fmt.Errorf("%s %s sent %q, not a JSON object: %w", r.Method, r.Path, r.Body, err)
	}
	return object, nil
}

func (r SentRequest) String() string { return r.Method + " " + r.Path + " " + string(r.Body) }

// sentLog is the client's transport: it keeps what each request sends while recording is on.
type sentLog struct {
	base      http.RoundTripper
	recording atomic.Bool
	mu        sync.Mutex
	requests  []SentRequest
}

func (l *sentLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if !l.recording.Load() {
		return l.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		read, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = read
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	path := req.URL.Path
	if rest, ok := strings.CutPrefix(path, "/v4beta"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(path, "/v4"); ok {
		path = rest
	}
	l.mu.Lock()
	l.requests = append(l.requests, SentRequest{Method: req.Method, Path: path, Body: body})
	l.mu.Unlock()
	return l.base.RoundTrip(req)
}

// StartEmulatorForTest starts the emulator as StartEmulator does, fails the test if it cannot,
// and closes it when the test ends, failing the test if it refused a request body by Linode's
// request rules.
func StartEmulatorForTest(t testing.TB, opts ...emulator.Option) *Emulator {
	t.Helper()
	e, err := StartEmulator(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, refused := range e.RefusedBodies() {
			t.Errorf("Linode's request rules refused %s", refused)
		}
		_ = e.Close()
	})
	return e
}

// RefusedBodies are the requests whose bodies Linode's request rules refused (the emulator
// answered them 400, as the real API would), as "METHOD path: field: reason (rule's source);
// body ...". A test that passes with one of them passes with a body the real API refuses.
func (e *Emulator) RefusedBodies() []string {
	var out []string
	for _, r := range e.RefusedRequests() {
		out = append(out, fmt.Sprintf("%s %s: %s: %s (%s); body %s", r.Method, r.Path, r.Field, r.Reason, r.Source, r.Body))
	}
	return out
}

// LKEModeNode is a node an LKE-mode Karpenter launched for the NodeClaim, beside the test's own
// nodes in the same account: a single-node pool, tagged as the LKE provider tags the pools it
// launches, in a new LKE cluster of the enterprise tier, labelled clusterLabel, whose pools give
// their Linodes their tags. It returns the pool's Linode, running, which so carries the
// NodeClaim's tag and the LKE cluster's ownership tag.
func (e *Emulator) LKEModeNode(ctx context.Context, clusterLabel, nodeClaimName string) (*linodego.Instance, error) {
	clusterID, err := e.AddLKECluster(clusterLabel, Region, "enterprise")
	if err != nil {
		return nil, err
	}
	pool, err := e.Client.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-standard-2", Label: &nodeClaimName,
		Tags: []string{nodeprovider.LKEClusterTag(clusterID), nodeprovider.NodeClaimTag(nodeClaimName), nodeprovider.NodePoolTag("default")},
	})
	if err != nil {
		return nil, err
	}
	e.Tick()
	for _, in := range e.Instances() {
		if in.LKEPoolID == pool.ID {
			return e.Client.GetInstance(ctx, in.ID)
		}
	}
	return nil, fmt.Errorf("LKE created no Linode for node pool %d", pool.ID)
}
