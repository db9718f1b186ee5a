package test

import (
	"context"
	"fmt"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/option"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// LKE is the provider in LKE mode over an LKE cluster in the emulator, built by the operator's
// own constructor (operator.NewLinode) exactly as the controller builds it.
type LKE struct {
	*operator.Linode
	Cluster *lke.Cluster
}

// LKEOptions are what a test changes from the defaults: the cluster ClusterName, standard tier,
// in Region.
type LKEOptions struct {
	clusterName string
	tier        lke.Tier
	region      string
	provider    []option.Function[lke.Options]
	recorder    events.Recorder
	credentials *linode.Credentials
	pacer       *linode.Pacer
	settings    []func(*options.Options)
}

// WithCluster names the LKE cluster to create, and its tier and region.
func WithCluster(label string, tier lke.Tier, region string) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.clusterName, o.tier, o.region = label, tier, region }
}

// WithNodeProviderOptions tunes the LKE node provider further. By default it polls every
// millisecond for the emulator's instant launches and gives up on a launch after 5 s.
func WithNodeProviderOptions(opts ...option.Function[lke.Options]) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.provider = append(o.provider, opts...) }
}

// WithRecorder records the events of the provider's controllers; by default they are dropped.
func WithRecorder(recorder events.Recorder) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.recorder = recorder }
}

// WithCredentials builds the provider over a client sending the credentials' token, as the
// controller's does, instead of the emulator's own client; the NodeClass controller reports their
// verdict.
func WithCredentials(credentials *linode.Credentials) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.credentials = credentials }
}

// WithPacer builds the provider over a client of the controller's kind that takes turns in the
// pacer's rate limits, sending the emulator's token unless WithCredentials names others.
func WithPacer(pacer *linode.Pacer) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.pacer = pacer }
}

// WithSettings changes the provider's settings from Options' defaults.
func WithSettings(change func(*options.Options)) option.Function[LKEOptions] {
	return func(o *LKEOptions) { o.settings = append(o.settings, change) }
}

// NewLKE creates an LKE cluster in the emulator, discovers it and builds the provider over it
// as the controller does, reading NodeClasses through kubeClient (nil when the test needs no
// Kubernetes). The catalogue is read before NewLKE returns, as the catalogue controller would
// have, so that GetInstanceTypes answers at once.
func NewLKE(ctx context.Context, emu *Emulator, kubeClient client.Client, opts ...option.Function[LKEOptions]) (*LKE, error) {
	o := option.Resolve(append([]option.Function[LKEOptions]{
		WithCluster(ClusterName, lke.TierStandard, Region),
		WithRecorder(events.NewRecorder(&record.FakeRecorder{})),
	}, opts...)...)
	if _, err := emu.AddLKECluster(o.clusterName, o.region, string(o.tier)); err != nil {
		return nil, err
	}
	settings := Options()
	settings.ClusterName = o.clusterName
	for _, change := range o.settings {
		change(settings)
	}
	ctx = options.ToContext(ctx, settings)
	mode := operator.LKE{ProviderOptions: append([]option.Function[lke.Options]{lke.WithPollInterval(time.Millisecond), lke.WithLaunchTimeout(5 * time.Second)}, o.provider...)}
	target, err := operator.CheckLinode(ctx, emu.API, settings, mode)
	if err != nil {
		return nil, err
	}
	var api linode.API = emu.API
	if o.credentials != nil || o.pacer != nil {
		// The controller's client: the token the credentials hold, their verdict learnt from each answer.
		clientOptions := linode.DefaultClientOptions()
		clientOptions.URL, clientOptions.Credentials, clientOptions.RetryCount, clientOptions.Pacer = emu.URL(), o.credentials, 0, o.pacer
		if clientOptions.Credentials == nil {
			clientOptions.Credentials = linode.StaticCredentials(emulator.DefaultToken)
		}
		client, err := linode.NewClient(clientOptions)
		if err != nil {
			return nil, err
		}
		api = client
	}
	provider, err := operator.NewLinode(ctx, kubeClient, kubeClient, nil, o.recorder, emu.Clock, api, o.credentials, target)
	if err != nil {
		return nil, err
	}
	if err := provider.InstanceTypes.UpdateCatalogue(ctx); err != nil {
		return nil, fmt.Errorf("reading the catalogue: %w", err)
	}
	return &LKE{Linode: provider, Cluster: target.(*operator.LKETarget).Cluster}, nil
}

// Pools is the LKE node provider.
func (l *LKE) Pools() *lke.Provider {
	return l.Nodes.(*lke.Provider)
}

// ControllerOf is the provider's controller of type C, e.g. *nodeclass.Controller.
func ControllerOf[C controller.Controller](provider *operator.Linode) C {
	for _, c := range provider.Controllers {
		if found, ok := c.(C); ok {
			return found
		}
	}
	panic(fmt.Sprintf("the provider has no %T controller", *new(C)))
}
