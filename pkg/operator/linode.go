package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/linodego"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// CheckLinode asks the Linode API whether the settings make sense: that it accepts the token,
// that the mode finds what it launches into (LKE mode: the cluster), and that the region exists.
// A *options.ConfigError means the settings are wrong; any other error is the API's own failure
// and worth retrying.
func CheckLinode(ctx context.Context, api linode.API, opts *options.Options, m Mode) (Target, error) {
	target, err := m.Discover(ctx, api, opts)
	if err != nil {
		return nil, classify(err)
	}
	regions, err := api.ListRegions(ctx, nil)
	if err != nil {
		return nil, classify(err)
	}
	if !slices.ContainsFunc(regions, func(r linodego.Region) bool { return r.ID == target.Region() }) {
		return nil, &options.ConfigError{Message: fmt.Sprintf("LINODE_REGION %q is not a Linode region: use one of %s (helm: region)",
			target.Region(), strings.Join(regionIDs(regions), ", "))}
	}
	return target, nil
}

// classify turns a refused token into a ConfigError and leaves every other failure retryable:
// a 5xx, a 429 or a timeout says nothing about the settings.
func classify(err error) error {
	if linode.IsUnauthorized(err) {
		status := http.StatusUnauthorized
		var apiErr *linodego.Error
		if errors.As(err, &apiErr) {
			status = apiErr.Code
		}
		return &options.ConfigError{Message: fmt.Sprintf("the Linode API refused LINODE_TOKEN (%d %s): use a current personal access token with read/write access to Kubernetes and Linodes (helm: apiToken or existingSecret), then restart the controller",
			status, http.StatusText(status))}
	}
	return err
}

func regionIDs(regions []linodego.Region) []string {
	ids := make([]string, 0, len(regions))
	for _, r := range regions {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// Backoff bounds the waits between start-up checks while the Linode API is failing.
type Backoff struct {
	Initial, Max time.Duration
}

// DefaultBackoff doubles from 1s to 1m: quick recovery from a blip, and at most one request a
// minute during an outage.
var DefaultBackoff = Backoff{Initial: time.Second, Max: time.Minute}

// WaitForLinode runs CheckLinode until it succeeds or fails for a reason only the user can fix,
// waiting between attempts while the API fails transiently. A controller that exited on a
// Linode outage would crash-loop through it; this one stays up, not ready, and says why.
// status receives the reason the controller is not ready yet.
func WaitForLinode(ctx context.Context, api linode.API, opts *options.Options, m Mode, credentials *linode.Credentials, backoff Backoff, status *StartupStatus) (Target, error) {
	wait := backoff.Initial
	for attempt := 1; ; attempt++ {
		target, err := CheckLinode(ctx, api, opts, m)
		if err == nil {
			return target, nil
		}
		var configErr *options.ConfigError
		if errors.As(err, &configErr) {
			return nil, configErr
		}
		reason := credentials.Redact(fmt.Sprintf("waiting for the Linode API at %s: %v", opts.APIURL, err))
		status.set(reason)
		log.FromContext(ctx).Info("Linode API unavailable, retrying", "error", credentials.Redact(err.Error()), "attempt", attempt, "retryIn", wait.String())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, backoff.Max)
	}
}

// StartupStatus is why the controller is not ready yet, for the readiness probe.
type StartupStatus struct {
	mu     sync.Mutex
	reason string
}

func (s *StartupStatus) set(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reason = reason
}

// Reason returns why the controller is not ready yet.
func (s *StartupStatus) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == "" {
		return "checking the settings against the Linode API"
	}
	return s.reason
}
