package linode

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linode/linodego"
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
	// UserAgent identifies the provider in Linode's logs.
	UserAgent string
	// RetryCount bounds linodego's own retries of 429, 503 and "Linode busy" answers. linodego
	// defaults to 1000, which turns a rate-limit storm into a reconcile that never returns.
	RetryCount int
	// RetryMaxWait caps the wait between those retries (linodego honours Retry-After below it).
	RetryMaxWait time.Duration
	// Timeout bounds one HTTP request.
	Timeout time.Duration
	// CreatesPerWindow and CreateWindow are Linode's budget for creating Linodes: the client
	// sends no more creates than that in any window, and holds the rest back. Zero sends them
	// as they come.
	CreatesPerWindow int
	CreateWindow     time.Duration
}

// DefaultClientOptions are the production defaults; the caller fills in Token and URL.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{
		URL:          "https://api.linode.com",
		Version:      "v4",
		UserAgent:    "karpenter-provider-linode",
		RetryCount:   5,
		RetryMaxWait: 30 * time.Second,
		Timeout:      30 * time.Second,
		// Linode's published budget, per token.
		CreatesPerWindow: 20,
		CreateWindow:     15 * time.Second,
	}
}

// NewClient returns a linodego client configured from opts.
func NewClient(opts ClientOptions) (*linodego.Client, error) {
	if opts.Credentials == nil || opts.Credentials.Token() == "" {
		return nil, errors.New("a Linode API token is required")
	}
	if err := CheckAPIURL(opts.URL); err != nil {
		return nil, fmt.Errorf("Linode API URL %w", err)
	}
	if opts.Version != "v4" && opts.Version != "v4beta" {
		return nil, fmt.Errorf("Linode API version %q is not v4 or v4beta", opts.Version)
	}
	// The credentials' transport adds the token to each request, so that a rotated token is used
	// from the next request on, and learns from each answer whether the API accepts it.
	client := linodego.NewClient(&http.Client{Timeout: opts.Timeout, Transport: opts.Credentials.Transport(http.DefaultTransport)})
	if opts.CreatesPerWindow > 0 && opts.CreateWindow > 0 {
		client.OnBeforeRequest(newCreatePacer(opts.CreatesPerWindow, opts.CreateWindow).beforeRequest)
	}
	client.SetUserAgent(opts.UserAgent)
	client.SetBaseURL(strings.TrimSuffix(opts.URL, "/"))
	client.SetAPIVersion(opts.Version)
	client.SetRetryCount(opts.RetryCount)
	client.SetRetryMaxWaitTime(opts.RetryMaxWait)
	client.SetDebug(false)
	// The catalogue provider refreshes on its own schedule and must see the API's answer, not a
	// client-side copy up to a minute old.
	client.UseCache(false)
	return &client, nil
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
