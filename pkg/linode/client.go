package linode

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linode/linodego"
)

// ClientOptions configure NewClient.
type ClientOptions struct {
	// Token is the Linode personal access token. It is sent in the Authorization header and
	// nowhere else: the client never logs requests (linodego's debug output would print it).
	Token string
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
	}
}

// NewClient returns a linodego client configured from opts.
func NewClient(opts ClientOptions) (*linodego.Client, error) {
	if opts.Token == "" {
		return nil, errors.New("a Linode API token is required")
	}
	if _, err := url.ParseRequestURI(opts.URL); err != nil || !strings.HasPrefix(opts.URL, "http") {
		return nil, fmt.Errorf("Linode API URL %q is not an http(s) URL", opts.URL)
	}
	if opts.Version != "v4" && opts.Version != "v4beta" {
		return nil, fmt.Errorf("Linode API version %q is not v4 or v4beta", opts.Version)
	}
	client := linodego.NewClient(&http.Client{Timeout: opts.Timeout})
	client.SetToken(opts.Token)
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
