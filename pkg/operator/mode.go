package operator

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// modes are the ways the controller launches nodes, by KARPENTER_MODE. A new mode is a package
// in pkg/providers, a Mode here, and its name in pkg/mode.
var modes = map[mode.Mode]Mode{
	mode.LKE:      LKE{},
	mode.Instance: Instance{},
}

// ModeNamed returns the mode KARPENTER_MODE names.
func ModeNamed(name mode.Mode) (Mode, error) {
	m, ok := modes[name]
	if !ok {
		return nil, fmt.Errorf("KARPENTER_MODE %q is not a mode of this build", name)
	}
	return m, nil
}

// Mode is one way of launching nodes. The controller builds everything that does not depend on
// the mode (the instance types, the cloud provider, core's controllers and the provider's own)
// around the parts the mode builds.
type Mode interface {
	// Discover is the mode's start-up check: it asks the Linode API for what the mode launches
	// into (LKE mode: the cluster CLUSTER_NAME labels). It runs once, before anything else
	// starts; an *options.ConfigError means the settings are wrong and the controller exits with
	// its message, any other error is the API's own failure and Discover is called again.
	Discover(ctx context.Context, api linode.API, opts *options.Options) (Target, error)
	// Webhooks are the mode's admission webhooks, served on the controller's webhook server with
	// its managed certificate unless DISABLE_WEBHOOK is set. They serve before Discover succeeds
	// and whatever the Linode API does, so they decide from the Kubernetes cache (kubeClient)
	// alone.
	Webhooks(kubeClient client.Reader) []Webhook
}

// Target is what a mode's start-up check found, ready to build the mode's parts.
type Target interface {
	// Mode is the mode's name.
	Mode() mode.Mode
	// Region is where nodes launch.
	Region() string
	// String says what the controller launches into, for the start-up log.
	String() string
	// Build makes the mode's parts, once, after the start-up checks passed.
	Build(ctx context.Context, deps Dependencies) (*Parts, error)
}

// Dependencies are what the controller shares with a mode's parts.
type Dependencies struct {
	// KubeClient reads through the manager's cache.
	KubeClient client.Client
	// APIReader reads past the cache, for decisions that must not act twice on a stale read.
	APIReader client.Reader
	// RESTConfig is the controller's own connection to the API server, for what a mode reads
	// of the cluster itself (its endpoint and CA).
	RESTConfig *rest.Config
	// Recorder publishes Kubernetes events.
	Recorder events.Recorder
	API      linode.API
	// Unavailable is shared with the instance types: plans a region had no capacity for.
	Unavailable *cache.UnavailableOfferings
}

// Parts are what a mode brings to the controller.
type Parts struct {
	// Nodes launches, finds and removes the mode's nodes.
	Nodes nodeprovider.Provider
	// OwnershipTag is on every Linode resource the mode launches; garbage collection deletes
	// nothing without it.
	OwnershipTag string
	// Resolvers and Validators are what the NodeClass controller checks on top of what it checks
	// in every mode (the firewall, and the conditions of fields the mode ignores).
	Resolvers  []nodeclass.Resolver
	Validators []nodeclass.Validator
	// Controllers run beside core's and the provider's own.
	Controllers []controller.Controller
}

// Webhook is an admission webhook, registered on the controller's webhook server at its path.
type Webhook interface {
	Register(server webhook.Server)
}
