package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/linode/linodego"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// CheckLinode asks the Linode API whether the settings make sense: that it accepts the token,
// that the mode finds what it launches into (LKE mode: the cluster), and that the region exists.
// A *options.ConfigError means the settings are wrong, a *TokenRefusedError that the token is;
// any other error is the API's own failure and worth retrying.
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

// TokenRefusedError is a token the Linode API refuses at start-up. Unlike a ConfigError it does
// not stop the controller: the webhooks serve without a token, and a valid token put in the
// controller's Secret is read from its file without a restart.
type TokenRefusedError struct {
	Status int
}

func (e *TokenRefusedError) Error() string {
	return fmt.Sprintf("the Linode API refuses LINODE_TOKEN (%d %s): put a current personal access token with read/write access to Kubernetes and Linodes in the controller's Secret (helm: apiToken or existingSecret); the controller reads it without a restart",
		e.Status, http.StatusText(e.Status))
}

// classify turns a refused token into a TokenRefusedError and leaves every other failure as it
// is: a 5xx, a 429 or a timeout says nothing about the settings.
func classify(err error) error {
	if linode.IsUnauthorized(err) {
		status := http.StatusUnauthorized
		var apiErr *linodego.Error
		if errors.As(err, &apiErr) {
			status = apiErr.Code
		}
		return &TokenRefusedError{Status: status}
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

// firstCheckTimeout bounds the start-up check that runs before the webhooks serve: an API that
// does not answer delays them by no more than this.
const firstCheckTimeout = 10 * time.Second

// firstCheck asks the Linode API once, within firstCheckTimeout, whether the settings are right.
// It returns the target when the API confirms them, a ConfigError when it proves them wrong, and
// neither when it could not tell (an outage, a refused token): WaitForLinode asks again once the
// webhooks serve.
func firstCheck(ctx context.Context, api linode.API, opts *options.Options, m Mode, credentials *linode.Credentials) (Target, error) {
	checkCtx, cancel := context.WithTimeout(ctx, firstCheckTimeout)
	defer cancel()
	target, err := CheckLinode(checkCtx, api, opts, m)
	var configErr *options.ConfigError
	if err == nil || errors.As(err, &configErr) {
		return target, err
	}
	log.FromContext(ctx).Info("Linode API unavailable; serving the webhooks and retrying", "error", credentials.Redact(err.Error()))
	return nil, nil
}

// WaitForLinode runs CheckLinode until it succeeds or proves a setting wrong, waiting between
// attempts while the API fails or refuses the token. A controller that exited then would
// crash-loop through an outage, its webhooks with it; this one keeps serving and says why it
// waits. Before each attempt it re-reads the token file, so a token put in the Secret ends the
// wait.
func WaitForLinode(ctx context.Context, api linode.API, opts *options.Options, m Mode, credentials *linode.Credentials, backoff Backoff) (Target, error) {
	wait := backoff.Initial
	for attempt := 1; ; attempt++ {
		if _, err := credentials.Reload(); err != nil {
			log.FromContext(ctx).Error(err, "keeping the Linode API token in use")
		}
		target, err := CheckLinode(ctx, api, opts, m)
		if err == nil {
			return target, nil
		}
		var configErr *options.ConfigError
		if errors.As(err, &configErr) {
			return nil, configErr
		}
		log.FromContext(ctx).Info("Linode API unavailable, retrying", "error", credentials.Redact(err.Error()), "attempt", attempt, "retryIn", wait.String())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, backoff.Max)
	}
}
