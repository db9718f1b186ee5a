package linode_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// The emulator's budgets in these tests run the same logic as Linode's 20 creates per 15 s, ten
// times faster.
const (
	fastCreates = 20
	fastWindow  = 1500 * time.Millisecond
	burst       = 60
)

func startLimitedEmulator(t *testing.T, limits emulator.RateLimits) *emulator.Emulator {
	t.Helper()
	emu := emulator.New(emulator.WithDelayScale(0), emulator.WithRateLimits(limits))
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

func pacedClient(t *testing.T, emu *emulator.Emulator, change func(*linode.ClientOptions)) *linode.Client {
	t.Helper()
	options := linode.DefaultClientOptions()
	options.URL, options.Credentials = emu.URL(), linode.StaticCredentials(emulator.DefaultToken)
	change(&options)
	client, err := linode.NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// calls counts the requests the emulator received on route, and those it answered 429.
func calls(emu *emulator.Emulator, route string) (sent, refused int) {
	for _, r := range emu.Requests() {
		if r.Route == route {
			sent++
			if r.Status == http.StatusTooManyRequests {
				refused++
			}
		}
	}
	return sent, refused
}

// createAtOnce makes n creates at the same moment and waits for them; each failure fails the test.
func createAtOnce(t *testing.T, client *linode.Client, n int) {
	t.Helper()
	create := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := client.CreateInstance(context.Background(), create); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// slowWay is a proxy to emu that holds a Linode create lag before passing it on when
// delays(n) says so of the nth create to reach it: the create's way to the API is slow.
func slowWay(t *testing.T, emu *emulator.Emulator, lag time.Duration, delays func(n int32) bool) string {
	t.Helper()
	target, err := url.Parse(emu.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var creates atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/linode/instances") && delays(creates.Add(1)) {
			time.Sleep(lag)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	return server.URL
}

// TestBurstOfCreatesWithinTheBudget launches 60 Linodes at once, then 60 single-node LKE pools,
// against an emulator enforcing 20 creates per 1.5 s for each: paced to that budget, the client
// makes one create call per node, none answered 429, and the last leaves two windows after the
// first, the floor the budget sets (3 windows of 20). Unpaced, with linodego's retries, the API
// refuses the creates over the budget, each refusal a call more.
func TestBurstOfCreatesWithinTheBudget(t *testing.T) {
	floor := 2 * fastWindow
	limits := emulator.RateLimits{LinodeCreates: fastCreates, LinodeCreateWindow: fastWindow, LKEPoolCreates: fastCreates, LKEPoolCreateWindow: fastWindow}
	for _, kind := range []struct {
		name, route string
		class       linode.RouteClass
		create      func(context.Context, *linode.Client, int, int) error
	}{
		{name: "instances", route: "POST /linode/instances", class: linode.ClassLinodeCreate, create: func(ctx context.Context, c *linode.Client, _, i int) error {
			_, err := c.CreateInstance(ctx, linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: fmt.Sprintf("node-%d", i)}})
			return err
		}},
		{name: "LKE pools", route: "POST /lke/clusters/{clusterId}/pools", class: linode.ClassPoolCreate, create: func(ctx context.Context, c *linode.Client, cluster, _ int) error {
			_, err := c.CreateLKENodePool(ctx, cluster, linode.NodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
			return err
		}},
	} {
		for _, paced := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s paced %t", kind.name, paced), func(t *testing.T) {
				emu := startLimitedEmulator(t, limits)
				cluster, err := emu.AddLKECluster("pacing", "us-ord", "standard")
				if err != nil {
					t.Fatal(err)
				}
				client := pacedClient(t, emu, func(o *linode.ClientOptions) {
					o.RetryMaxWait = fastWindow
					o.Budgets[kind.class] = linode.Budget{Requests: fastCreates, Window: fastWindow}
					if !paced {
						o.Budgets = nil
					}
				})
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, burst)
				for i := range burst {
					wg.Go(func() {
						if err := kind.create(context.Background(), client, cluster, i); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				took := time.Since(start)
				close(errs)
				sent, refused := calls(emu, kind.route)
				if !paced {
					if refused == 0 || sent == burst {
						t.Fatalf("unpaced: %d create calls for %d nodes, %d answered 429; the test's budget does not bind", sent, burst, refused)
					}
					t.Logf("unpaced, %d creates: %d calls, %d answered 429, %d failed, %v", burst, sent, refused, len(errs), took.Round(time.Millisecond))
					return
				}
				for err := range errs {
					t.Error(err)
				}
				if sent != burst || refused != 0 {
					t.Fatalf("%d create calls for %d nodes, %d answered 429", sent, burst, refused)
				}
				if took < floor || took > floor+fastWindow/2 {
					t.Fatalf("%d creates took %v, want just over the budget's floor of %v", burst, took, floor)
				}
				t.Logf("%d creates: %d calls, 0 answered 429, %v (floor %v)", burst, sent, took.Round(time.Millisecond), floor)
			})
		}
	}
}

// TestAnotherUserOfTheTokenLeavesLess: another client of the token spends 3 of a budget of 5
// creates; the paced client learns it from the API's X-RateLimit-Remaining on its first answer
// and holds the creates over what is left until the API's window resets, instead of having them
// refused. Without the headers' count it would send all three at once into one remaining slot.
func TestAnotherUserOfTheTokenLeavesLess(t *testing.T) {
	const budget, window = 5, 2 * time.Second
	emu := startLimitedEmulator(t, emulator.RateLimits{LinodeCreates: budget, LinodeCreateWindow: window})
	other := linode.Wrap(emu.NewClient())
	ctx := context.Background()
	create := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}}
	for range 3 {
		if _, err := other.CreateInstance(ctx, create); err != nil {
			t.Fatal(err)
		}
	}
	client := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.RetryCount = 0
		o.Budgets[linode.ClassLinodeCreate] = linode.Budget{Requests: budget, Window: window}
	})
	if _, err := client.CreateInstance(ctx, create); err != nil {
		t.Fatal(err)
	}
	createAtOnce(t, client, 3)
	if sent, refused := calls(emu, "POST /linode/instances"); sent != 7 || refused != 0 {
		t.Fatalf("%d creates sent (3 by the other client), %d answered 429", sent, refused)
	}
}

// TestCreateBeyondItsBoundIsNotSent: a create whose turn comes later than it may wait fails at
// once, unsent, with an error the provider retries; other requests are not held back.
func TestCreateBeyondItsBoundIsNotSent(t *testing.T) {
	emu := startLimitedEmulator(t, emulator.RateLimits{})
	client := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.Budgets[linode.ClassLinodeCreate] = linode.Budget{Requests: 1, Window: time.Hour}
		o.MaxTurnWait = time.Minute
	})
	create := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}}
	if _, err := client.CreateInstance(context.Background(), create); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := client.CreateInstance(context.Background(), create)
	if !linode.IsNoTurn(err) || !linode.IsRetryable(err) || time.Since(start) > time.Second {
		t.Fatalf("a second create within the hour's budget of one: %v after %v, want a retryable TurnError at once", err, time.Since(start))
	}
	if n := emu.Counters()["POST /linode/instances"]; n != 1 {
		t.Fatalf("%d creates reached the API, want 1", n)
	}
	if _, err := client.ListInstances(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestTimeoutStartsAtTheTurn: a request's timeout bounds it from when it leaves, so a listing
// that waited its turn longer than the timeout still goes, and a request the API never answers
// fails once the timeout has passed.
func TestTimeoutStartsAtTheTurn(t *testing.T) {
	const timeout = 500 * time.Millisecond
	emu := startLimitedEmulator(t, emulator.RateLimits{})
	client := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.Timeout, o.RetryCount = timeout, 0
		o.Budgets[linode.ClassList] = linode.Budget{Requests: 1, Window: 2 * timeout}
	})
	ctx := context.Background()
	for range 2 {
		if _, err := client.ListRegions(ctx, nil); err != nil {
			t.Fatalf("a listing that waited %v for its turn, timeout %v: %v", 2*timeout, timeout, err)
		}
	}
	emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/regions", Hang: true})
	start := time.Now()
	if _, err := client.ListRegions(ctx, nil); err == nil || time.Since(start) > 4*timeout {
		t.Fatalf("a request the API never answers: %v after %v, want a timeout after %v", err, time.Since(start), timeout)
	}
}

// TestLateArrivalsDelayTheNextWindow: the first window's creates reach the API 300 ms after they
// leave (a loaded network or API front end), so the API's window starts that much later than the
// client's turns. The client counts each request in its windows from when the answer came, not
// from its turn, and holds the next window's creates until the API's has passed: no 429. Counted
// from the turns, the next window's creates would arrive inside the API's first window.
func TestLateArrivalsDelayTheNextWindow(t *testing.T) {
	const lag = 300 * time.Millisecond
	emu := startLimitedEmulator(t, emulator.RateLimits{LinodeCreates: fastCreates, LinodeCreateWindow: fastWindow})
	client := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.URL = slowWay(t, emu, lag, func(n int32) bool { return n <= fastCreates })
		o.Budgets[linode.ClassLinodeCreate] = linode.Budget{Requests: fastCreates, Window: fastWindow}
	})
	createAtOnce(t, client, 2*fastCreates)
	if sent, refused := calls(emu, "POST /linode/instances"); sent != 2*fastCreates || refused != 0 {
		t.Fatalf("%d create calls for %d nodes, %d answered 429", sent, 2*fastCreates, refused)
	}
}

// TestARequestInFlightKeepsItsPlace: with a budget of one create a second, a create takes 1.3 s
// to reach the API, longer than the window. The next create waits for its answer and a window
// after it: both are accepted. Had the first dropped out of the client's window a window after
// it left, the second would reach the API first and the first would be answered 429.
func TestARequestInFlightKeepsItsPlace(t *testing.T) {
	const window, lag = time.Second, 1300 * time.Millisecond
	emu := startLimitedEmulator(t, emulator.RateLimits{LinodeCreates: 1, LinodeCreateWindow: window})
	client := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.URL = slowWay(t, emu, lag, func(n int32) bool { return n == 2 })
		o.RetryCount = 0
		o.Budgets[linode.ClassLinodeCreate] = linode.Budget{Requests: 1, Window: window}
	})
	// The first create, answered at once, warms the client's books.
	createAtOnce(t, client, 1)
	createAtOnce(t, client, 2)
	if sent, refused := calls(emu, "POST /linode/instances"); sent != 3 || refused != 0 {
		t.Fatalf("%d create calls for 3 Linodes, %d answered 429", sent, refused)
	}
}

// TestAClientTakingOverMidBurstAsksBeforeItBursts: a leader spent 4 of a budget of 5 creates and
// died; its standby takes over with a burst of 4 creates and books that know nothing of the
// API's window. Its first create goes alone, and its answer's X-RateLimit-Remaining holds the
// other three until the window resets: no 429. Sent at once, three would be refused.
func TestAClientTakingOverMidBurstAsksBeforeItBursts(t *testing.T) {
	const budget, window = 5, 2 * time.Second
	emu := startLimitedEmulator(t, emulator.RateLimits{LinodeCreates: budget, LinodeCreateWindow: window})
	oldLeader := linode.Wrap(emu.NewClient())
	ctx := context.Background()
	create := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}}
	for range budget - 1 {
		if _, err := oldLeader.CreateInstance(ctx, create); err != nil {
			t.Fatal(err)
		}
	}
	standby := pacedClient(t, emu, func(o *linode.ClientOptions) {
		o.RetryCount = 0
		o.Budgets[linode.ClassLinodeCreate] = linode.Budget{Requests: budget, Window: window}
	})
	createAtOnce(t, standby, 4)
	if sent, refused := calls(emu, "POST /linode/instances"); sent != budget-1+4 || refused != 0 {
		t.Fatalf("%d creates sent (%d by the old leader), %d answered 429", sent, budget-1, refused)
	}
}
