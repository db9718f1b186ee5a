package linode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

// TokenRefused is 1 while the Linode API refuses the controller's token (401, or 403 for lack of
// scope), 0 once it accepts it.
var TokenRefused = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
	Namespace: metrics.Namespace,
	Subsystem: "linode_api",
	Name:      "token_refused",
	Help:      "1 while the Linode API refuses the controller's token (revoked, expired, or lacking a scope), 0 while it accepts it.",
}, nil, opmetrics.Beta)

// DefaultTokenCheckInterval is how often Watch re-reads the token file and, while the API
// refuses the token, asks the API again.
const DefaultTokenCheckInterval = 10 * time.Second

// Credentials are the API token the client sends and what the API last said about it. A token
// read from a file (a mounted Secret, which the kubelet updates in place) is re-read when it
// changes, so a rotated token takes effect without a restart.
type Credentials struct {
	file string

	mu     sync.Mutex
	token  string
	seen   []string // every token used, for redaction
	status tokenStatus
	// changed is closed and replaced whenever the API's verdict on the token changes.
	changed chan struct{}
}

type tokenStatus struct {
	refused bool
	reason  string
}

// StaticCredentials are a token that never changes.
func StaticCredentials(token string) *Credentials {
	TokenRefused.Set(0, nil)
	return &Credentials{token: token, seen: []string{token}, changed: make(chan struct{})}
}

// CredentialsFromFile reads the token from file, and re-reads it whenever Reload or Watch finds
// it changed.
func CredentialsFromFile(file string) (*Credentials, error) {
	TokenRefused.Set(0, nil)
	c := &Credentials{file: file, changed: make(chan struct{})}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Token is the token to send now.
func (c *Credentials) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Reload re-reads the token file, if any, and reports whether the token changed.
func (c *Credentials) Reload() (bool, error) {
	if c.file == "" {
		return false, nil
	}
	raw, err := os.ReadFile(c.file)
	if err != nil {
		return false, fmt.Errorf("reading the Linode API token from %s: %w", c.file, err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return false, fmt.Errorf("the Linode API token file %s is empty", c.file)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if token == c.token {
		return false, nil
	}
	c.token = token
	c.seen = append(c.seen, token)
	return true, nil
}

// Refused reports whether the API refused the token on its last answer, and why.
func (c *Credentials) Refused() (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status.refused, c.status.reason
}

// Changed is closed when the API's verdict on the token next changes.
func (c *Credentials) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Redact removes every token these credentials have held from a message. linodego never puts the
// token in an error, but an error can echo user input.
func (c *Credentials) Redact(message string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, token := range c.seen {
		if token != "" {
			message = strings.ReplaceAll(message, token, "[redacted]")
		}
	}
	return message
}

// Watch re-reads the token file every interval and, while the API refuses the token, calls probe
// (a cheap authenticated request through the client) so that a restored or rotated token is
// noticed without waiting for other traffic. It returns when ctx is done.
func (c *Credentials) Watch(ctx context.Context, interval time.Duration, probe func(context.Context) error) {
	go c.logVerdicts(ctx)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		changed, err := c.Reload()
		if err != nil {
			log.FromContext(ctx).Error(err, "keeping the Linode API token in use")
		}
		if changed {
			log.FromContext(ctx).Info("the Linode API token changed; using the new one")
		}
		if refused, _ := c.Refused(); refused || changed {
			_ = probe(ctx)
		}
	}, interval)
}

// logVerdicts logs each change of the API's verdict on the token, with what to do about it.
func (c *Credentials) logVerdicts(ctx context.Context) {
	for {
		changed := c.Changed()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		if refused, reason := c.Refused(); refused {
			log.FromContext(ctx).Error(errors.New(reason), "the Linode API refuses the token; launches and deletions wait until it accepts one")
		} else {
			log.FromContext(ctx).Info("the Linode API accepts the token again")
		}
	}
}

// Transport sends every request through base with the current token, and learns from each
// answer whether the API accepts it.
func (c *Credentials) Transport(base http.RoundTripper) http.RoundTripper {
	return &authTransport{credentials: c, base: base}
}

// observe records the API's verdict on the token from an answer to a request for path, its status
// and, for a 403, its reason: Linode also answers 403 to a plan the region cannot launch, which
// says nothing about the token, and to a read of the account's events or maintenance by a token
// without the read-only Account and Events scopes, which only the maintenance controller needs.
func (c *Credentials) observe(path string, status int, body []byte) {
	var next tokenStatus
	switch {
	case status == http.StatusForbidden && needsOptionalScope(path):
		return
	case status == http.StatusUnauthorized:
		next = tokenStatus{refused: true, reason: "the Linode API refuses the token (401 Unauthorized): it was revoked, expired or mistyped; put a valid personal access token in the controller's Secret"}
	case status == http.StatusForbidden && !isRefusalText(body):
		next = tokenStatus{refused: true, reason: "the Linode API refuses the token (403 Forbidden): it lacks a scope the controller needs; give it read/write access to Kubernetes and Linodes"}
	case status == http.StatusTooManyRequests || status >= http.StatusInternalServerError:
		// Proxies and the rate limiter answer before the token is checked.
		return
	default:
		next = tokenStatus{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if next == c.status {
		return
	}
	c.status = next
	close(c.changed)
	c.changed = make(chan struct{})
	TokenRefused.Set(map[bool]float64{true: 1, false: 0}[next.refused], nil)
}

// needsOptionalScope reports whether a request reads what the controller can run without: the
// account's events and maintenance, and the maintenance policies.
func needsOptionalScope(path string) bool {
	return strings.Contains(path, "/account/") || strings.Contains(path, "/maintenance/")
}

// isRefusalText reports whether a 403's body is Linode refusing a plan or a limit.
func isRefusalText(body []byte) bool {
	var answer struct {
		Errors []struct {
			Reason string `json:"reason"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &answer) != nil {
		return false
	}
	for _, e := range answer.Errors {
		text := normalized(e.Reason)
		if containsAny(text, capacityPhrases) || containsAny(text, accountLimitPhrases) {
			return true
		}
	}
	return false
}

type authTransport struct {
	credentials *Credentials
	base        http.RoundTripper
}

// maxErrorBody bounds how much of a 403's body is read to tell a refused plan from a refused token.
const maxErrorBody = 64 << 10

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not modify the request it was given.
	req = req.Clone(req.Context())
	if leavesTheAPI(req) {
		// Whoever answers a redirect to another host or scheme must not receive the token, and
		// its answer says nothing about it.
		req.Header.Del("Authorization")
		return t.base.RoundTrip(req)
	}
	req.Header.Set("Authorization", "Bearer "+t.credentials.Token())
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var body []byte
	if resp.StatusCode == http.StatusForbidden {
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	t.credentials.observe(req.URL.Path, resp.StatusCode, body)
	recordAnswer(req, resp)
	return resp, nil
}

// leavesTheAPI reports whether the request follows a redirect away from the scheme and host the
// client first asked: http.Client sets Response on each request it makes to follow one.
func leavesTheAPI(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	return first.URL.Scheme != req.URL.Scheme || first.URL.Host != req.URL.Host
}
