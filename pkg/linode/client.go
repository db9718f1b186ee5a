package linode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linode/linodego"
	"k8s.io/utils/clock"

	"github.com/linode/karpenter-provider-linode/pkg/version"
)

// ClientOptions configure NewClient.
type ClientOptions struct {
	// Credentials hold the Linode personal access token. It is sent in the Authorization header
	// and nowhere else: the client never logs requests (linodego's debug output would print it).
	Credentials *Credentials
	// URL is the API root without the version, e.g. https://api.linode.com or the emulator's URL.
	URL string
	// Version is "v4", or "v4beta" for LKE Enterprise.
	Version string
	// UserAgent identifies the provider and its version in Linode's logs.
	UserAgent string
	// RetryCount bounds linodego's own retries of 429, 503 and "Linode busy" answers. linodego
	// defaults to 1000, which turns a rate-limit storm into a reconcile that never returns.
	RetryCount int
	// RetryMaxWait caps the wait between those retries (linodego honours Retry-After below it).
	RetryMaxWait time.Duration
	// Timeout bounds one HTTP request, from when it has its turn in the rate limits.
	Timeout time.Duration
	// Budgets are the rate limits the client paces each class of requests to (see Pacer); a
	// class without one is sent as it comes.
	Budgets map[RouteClass]Budget
	// MaxTurnWait bounds the wait for a turn of a request whose context sets no earlier bound.
	MaxTurnWait time.Duration
	// Pacer, when set, paces this client with the other clients of the token that share it;
	// Budgets and MaxTurnWait are then the Pacer's.
	Pacer *Pacer
}

// UserAgentProduct names the provider in its user agent, before the version: every request the
// controller sends has "karpenter-provider-linode/<version>".
const UserAgentProduct = "karpenter-provider-linode"

// DefaultClientOptions are the production defaults; the caller fills in Token and URL.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{
		URL:          "https://api.linode.com",
		Version:      "v4",
		UserAgent:    UserAgentProduct + "/" + version.Version(),
		RetryCount:   5,
		RetryMaxWait: 30 * time.Second,
		Timeout:      30 * time.Second,
		Budgets:      DefaultBudgets(),
		MaxTurnWait:  DefaultMaxTurnWait,
	}
}

// Client is a linodego client whose requests take turns in the token's rate limits. Its creates
// and deletes of Linodes and pools take their turn before linodego's first attempt, so that one
// whose turn is too far off fails with a TurnError, unsent.
type Client struct {
	*linodego.Client
	pacer *Pacer
}

var _ API = (*Client)(nil)

// CreateInstance creates a Linode once it has a turn.
func (c *Client) CreateInstance(ctx context.Context, opts InstanceCreateOptions) (*linodego.Instance, error) {
	ctx, err := c.pacer.hold(ctx, ClassLinodeCreate)
	if err != nil {
		return nil, err
	}
	defer c.pacer.release(ctx)
	return sendJSON[linodego.Instance](ctx, c.Client, http.MethodPost, "linode/instances", opts)
}

// UpdateInstanceConfig changes what opts sets of a Linode's configuration profile.
func (c *Client) UpdateInstanceConfig(ctx context.Context, linodeID, configID int, opts ConfigUpdateOptions) (*linodego.InstanceConfig, error) {
	return sendJSON[linodego.InstanceConfig](ctx, c.Client, http.MethodPut, fmt.Sprintf("linode/instances/%d/configs/%d", linodeID, configID), opts)
}

// DeleteInstance deletes a Linode once it has a turn.
func (c *Client) DeleteInstance(ctx context.Context, linodeID int) error {
	ctx, err := c.pacer.hold(ctx, ClassLinodeDelete)
	if err != nil {
		return err
	}
	defer c.pacer.release(ctx)
	return c.Client.DeleteInstance(ctx, linodeID)
}

// CreateLKENodePool creates an LKE node pool once it has a turn.
func (c *Client) CreateLKENodePool(ctx context.Context, clusterID int, opts NodePoolCreateOptions) (*linodego.LKENodePool, error) {
	ctx, err := c.pacer.hold(ctx, ClassPoolCreate)
	if err != nil {
		return nil, err
	}
	defer c.pacer.release(ctx)
	return sendJSON[linodego.LKENodePool](ctx, c.Client, http.MethodPost, fmt.Sprintf("lke/clusters/%d/pools", clusterID), opts)
}

// DeleteLKENodePool deletes an LKE node pool once it has a turn.
func (c *Client) DeleteLKENodePool(ctx context.Context, clusterID, poolID int) error {
	ctx, err := c.pacer.hold(ctx, ClassPoolDelete)
	if err != nil {
		return err
	}
	defer c.pacer.release(ctx)
	return c.Client.DeleteLKENodePool(ctx, clusterID, poolID)
}

// DeleteLKENodePoolNode deletes one node of an LKE pool once it has a turn.
func (c *Client) DeleteLKENodePoolNode(ctx context.Context, clusterID int, nodeID string) error {
	ctx, err := c.pacer.hold(ctx, ClassPoolDelete)
	if err != nil {
		return err
	}
	defer c.pacer.release(ctx)
	return c.Client.DeleteLKENodePoolNode(ctx, clusterID, nodeID)
}

// Wrap returns a client that sends its requests through client, as its maker configured it (the
// tests' emulator client): its creates and deletes take no turns.
func Wrap(client *linodego.Client) *Client {
	return &Client{Client: client, pacer: NewPacer(nil, 0, clock.RealClock{})}
}

// NewClient returns a client configured from opts.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Credentials == nil || opts.Credentials.Token() == "" {
		return nil, errors.New("a Linode API token is required")
	}
	if err := CheckAPIURL(opts.URL); err != nil {
		return nil, fmt.Errorf("Linode API URL %w", err)
	}
	if opts.Version != "v4" && opts.Version != "v4beta" {
		return nil, fmt.Errorf("Linode API version %q is not v4 or v4beta", opts.Version)
	}
	pacer := opts.Pacer
	if pacer == nil {
		pacer = NewPacer(opts.Budgets, opts.MaxTurnWait, clock.RealClock{})
	}
	// The credentials' transport adds the token to each request, so that a rotated token is used
	// from the next request on, and learns from each answer whether the API accepts it. The
	// pacing transport holds each request back until its turn, then times it.
	transport := &pacingTransport{pacer: pacer, timeout: opts.Timeout, base: opts.Credentials.Transport(http.DefaultTransport)}
	client := linodego.NewClient(&http.Client{Transport: transport, CheckRedirect: keepBodiesAtTheAPI})
	client.SetUserAgent(opts.UserAgent)
	client.SetBaseURL(strings.TrimSuffix(opts.URL, "/"))
	client.SetAPIVersion(opts.Version)
	client.SetRetryCount(opts.RetryCount)
	client.SetRetryMaxWaitTime(opts.RetryMaxWait)
	client.SetDebug(false)
	client.OnAfterResponse(errorStatusesAreErrors)
	// The catalogue provider refreshes on its own schedule and must see the API's answer, not a
	// client-side copy up to a minute old.
	client.UseCache(false)
	return &Client{Client: &client, pacer: pacer}, nil
}

// errorStatusesAreErrors makes every answer of 400 or more an error with its status. linodego
// takes one whose JSON body lists no errors (a proxy's "{}", an empty body) for a success, and
// would hand back a zero Linode or pool: a 500 read as a Linode with no status, a 404 as one that
// exists.
func errorStatusesAreErrors(resp *linodego.Response) error {
	if !resp.IsError() {
		return nil
	}
	if apiErr, ok := resp.Error().(*linodego.APIError); ok && len(apiErr.Errors) > 0 {
		return nil
	}
	return &linodego.Error{Code: resp.StatusCode(), Response: resp.RawResponse,
		Message: fmt.Sprintf("the Linode API answered %s without a reason", resp.Status())}
}

// maxRedirects is how many redirects a request follows, as http.Client's default policy.
const maxRedirects = 10

// keepBodiesAtTheAPI refuses a redirect that would send a request's body to another host or
// scheme than the API's: a 307 or 308 sends it again, and a create's body holds user data with
// a bootstrap token, SSH keys and the like. (The token never follows a redirect there: see
// leavesTheAPI.) Redirects of requests without a body, and within the API, are followed.
func keepBodiesAtTheAPI(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0]
	if req.URL.Scheme == first.URL.Scheme && req.URL.Host == first.URL.Host {
		return nil
	}
	if req.Body != nil && req.Body != http.NoBody {
		return fmt.Errorf("the Linode API redirected %s %s to %s://%s, another host or scheme; not followed, as that would send the request's body (user data, SSH keys) there: check the API URL and any proxy in between",
			first.Method, first.URL.Path, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// CheckAPIURL accepts an https URL, and an http URL only on the loopback interface (an emulator
// or a proxy on the same machine): anywhere else http would send the token in clear.
func CheckAPIURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an https URL: use https://api.linode.com", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("%q is plain http to another machine, which would send the token in clear: use https (plain http is accepted on loopback only, for an emulator)", raw)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
