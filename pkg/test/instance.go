package test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/awslabs/operatorpkg/option"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// Instance is the provider in instance mode, built by the operator's own constructor exactly as
// the controller builds it, over the emulator and a Kubernetes API server whose nodes join
// through TLS bootstrap.
type Instance struct {
	*operator.Linode
	Target *operator.InstanceTarget
	// TokenKey is the bootstrap token key the provider derives its nodes' tokens from, as the
	// node identity component would keep it.
	TokenKey bootstraptoken.Key
}

// InstanceOptions are what a test changes from the defaults: Region, and the API server's own
// address as the cluster endpoint.
type InstanceOptions struct {
	region   string
	endpoint *string
	provider []option.Function[instance.Options]
	recorder events.Recorder
	pacer    *linode.Pacer
	keyDir   string
}

// WithBootstrapTokenKeyDir writes the bootstrap token key into a file in dir, as the chart mounts
// it into the controller's pod; without it the provider has no key, and refuses launches.
func WithBootstrapTokenKeyDir(dir string) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.keyDir = dir }
}

// WithInstanceRegion sets the region nodes launch in.
func WithInstanceRegion(region string) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.region = region }
}

// WithClusterEndpoint sets CLUSTER_ENDPOINT; "" leaves it unset, so the provider looks for
// kube-public/cluster-info.
func WithClusterEndpoint(endpoint string) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.endpoint = &endpoint }
}

// WithInstanceProviderOptions tunes the instance node provider further. By default it lists the
// Linodes anew for every call, so that each call sees the emulator's latest state.
func WithInstanceProviderOptions(opts ...option.Function[instance.Options]) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.provider = append(o.provider, opts...) }
}

// WithInstanceRecorder records the events of the provider's controllers; by default they are
// dropped.
func WithInstanceRecorder(recorder events.Recorder) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.recorder = recorder }
}

// WithInstancePacer builds the provider over a client of the controller's kind that takes turns
// in the pacer's rate limits, instead of the emulator's own client.
func WithInstancePacer(pacer *linode.Pacer) option.Function[InstanceOptions] {
	return func(o *InstanceOptions) { o.pacer = pacer }
}

// InstanceSettings are the provider's settings in instance mode for the API server at endpoint.
func InstanceSettings(region, endpoint string) *options.Options {
	settings := Options()
	settings.Mode, settings.ClusterName, settings.Region, settings.ClusterEndpoint = mode.Instance, "", region, endpoint
	return settings
}

// NewInstance checks the settings and builds the provider in instance mode as the controller
// does, for the API server restConfig connects to; kubeClient reads and writes there. The
// catalogue is read before NewInstance returns, as the catalogue controller would have.
func NewInstance(ctx context.Context, emu *Emulator, kubeClient client.Client, restConfig *rest.Config, opts ...option.Function[InstanceOptions]) (*Instance, error) {
	o := option.Resolve(append([]option.Function[InstanceOptions]{
		WithInstanceRegion(Region),
		WithClusterEndpoint(restConfig.Host),
		WithInstanceRecorder(events.NewRecorder(&record.FakeRecorder{})),
	}, opts...)...)
	settings := InstanceSettings(o.region, *o.endpoint)
	key := make(bootstraptoken.Key, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if o.keyDir != "" {
		settings.BootstrapTokenKeyFile = filepath.Join(o.keyDir, bootstraptoken.KeySecretKey)
		if err := os.WriteFile(settings.BootstrapTokenKeyFile, key, 0o600); err != nil {
			return nil, err
		}
	}
	ctx = options.ToContext(ctx, settings)
	mode := operator.Instance{ProviderOptions: append([]option.Function[instance.Options]{instance.WithListingTTL(0)}, o.provider...)}
	target, err := operator.CheckLinode(ctx, emu.API, settings, mode)
	if err != nil {
		return nil, err
	}
	var api linode.API = emu.API
	if o.pacer != nil {
		clientOptions := linode.DefaultClientOptions()
		clientOptions.URL, clientOptions.Credentials, clientOptions.RetryCount, clientOptions.Pacer = emu.URL(), linode.StaticCredentials(emulator.DefaultToken), 0, o.pacer
		client, err := linode.NewClient(clientOptions)
		if err != nil {
			return nil, err
		}
		api = client
	}
	provider, err := operator.NewLinode(ctx, kubeClient, kubeClient, restConfig, o.recorder, emu.Clock, api, nil, target)
	if err != nil {
		return nil, err
	}
	if err := provider.InstanceTypes.UpdateCatalogue(ctx); err != nil {
		return nil, fmt.Errorf("reading the catalogue: %w", err)
	}
	return &Instance{Linode: provider, Target: target.(*operator.InstanceTarget), TokenKey: key}, nil
}

// Linodes is the instance node provider.
func (i *Instance) Linodes() *instance.Provider {
	return i.Nodes.(*instance.Provider)
}
