package operator

import (
	"context"
	"fmt"
	"slices"

	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
)

// Instance is instance mode: plain Linodes in LINODE_REGION that join a self-managed cluster
// through cloud-init and the kubelet's TLS bootstrap.
type Instance struct {
	// ProviderOptions tune the node provider; tests shorten its listing's lifetime.
	ProviderOptions []option.Function[instance.Options]
}

// Discover checks that LINODE_REGION can give nodes their user data: cloud-init reads it from
// Linode's Metadata service, which not every region has. A region that does not exist is
// CheckLinode's to report.
func (m Instance) Discover(ctx context.Context, api linode.API, opts *options.Options) (Target, error) {
	regions, err := api.ListRegions(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing regions: %w", err)
	}
	target := &InstanceTarget{RegionInfo: linodego.Region{ID: opts.Region}, endpoint: opts.ClusterEndpoint, providerOptions: m.ProviderOptions}
	i := slices.IndexFunc(regions, func(r linodego.Region) bool { return r.ID == opts.Region })
	if i < 0 {
		return target, nil
	}
	target.RegionInfo = regions[i]
	if !slices.Contains(target.RegionInfo.Capabilities, instance.CapabilityMetadata) {
		withMetadata := slices.Collect(func(yield func(string) bool) {
			for _, r := range regions {
				if slices.Contains(r.Capabilities, instance.CapabilityMetadata) && !yield(r.ID) {
					return
				}
			}
		})
		slices.Sort(withMetadata)
		return nil, &options.ConfigError{Message: fmt.Sprintf("LINODE_REGION %q has no Metadata service, which instance mode's nodes read their user data from: use a region with it, e.g. %v (helm: region)",
			opts.Region, withMetadata[:min(len(withMetadata), 5)])}
	}
	return target, nil
}

// Webhooks are none: instance mode's kubelets register with Karpenter's taints themselves.
func (m Instance) Webhooks(client.Reader) []Webhook { return nil }

// InstanceTarget is the region instance mode launches into; the cluster the nodes join is found
// when the parts are built, with the controller's Kubernetes client.
type InstanceTarget struct {
	// RegionInfo is LINODE_REGION, with its capabilities.
	RegionInfo      linodego.Region
	endpoint        string
	providerOptions []option.Function[instance.Options]
	// Cluster is what Build found of the cluster the nodes join.
	Cluster *instance.Cluster
}

// Mode is instance.
func (t *InstanceTarget) Mode() mode.Mode { return mode.Instance }

// Region is LINODE_REGION.
func (t *InstanceTarget) Region() string { return t.RegionInfo.ID }

func (t *InstanceTarget) String() string {
	return "plain Linodes in " + t.RegionInfo.ID + " (instance mode)"
}

// Build finds the cluster the nodes join (its endpoint, CA and identity) and checks that the
// endpoint answers with that CA, then makes the Linode provider, which derives each node's
// bootstrap token from the key the node identity component keeps (that component, not the
// controller, issues the tokens and approves the nodes' certificates), the image, subnet,
// placement group and maintenance policy resolvers, the region's validator, and the controller of
// Linodes left powered off.
func (t *InstanceTarget) Build(ctx context.Context, deps Dependencies) (*Parts, error) {
	reader, err := client.New(deps.RESTConfig, client.Options{Scheme: deps.KubeClient.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	cluster, err := instance.DiscoverCluster(ctx, reader, deps.RESTConfig, t.endpoint)
	if err != nil {
		return nil, err
	}
	if err := cluster.CheckReachable(ctx); err != nil {
		return nil, err
	}
	t.Cluster = cluster
	log.FromContext(ctx).Info("nodes join the cluster at", "endpoint", cluster.Endpoint, "endpoint-from", cluster.EndpointSource, "ca-from", cluster.CASource, "cluster-uid", cluster.UID)
	tokens := bootstraptoken.NewKeyFile(options.FromContext(ctx).BootstrapTokenKeyFile, deps.KubeClient)
	resolved := instance.NewResolved()
	nodes := instance.NewProvider(deps.API, t.RegionInfo.ID, cluster, resolved, tokens, instance.NewClusterKubeletConfig(reader, clock.RealClock{}), deps.Unavailable, t.providerOptions...)
	return &Parts{
		Nodes:        nodes,
		OwnershipTag: cluster.OwnerTag(),
		Resolvers: []nodeclass.Resolver{
			instance.NewImageResolver(deps.API, resolved),
			instance.NewSubnetResolver(deps.API, t.RegionInfo.ID, resolved),
			instance.NewPlacementGroupResolver(deps.API, t.RegionInfo.ID, resolved),
			instance.NewMaintenancePolicyResolver(deps.API, t.RegionInfo.ID),
		},
		Validators: []nodeclass.Validator{instance.NewValidator(t.RegionInfo, cluster), instance.NewInterfaceGenerationValidator(deps.API)},
		Controllers: []controller.Controller{
			instance.NewOfflineController(deps.KubeClient, nodes, deps.Recorder, clock.RealClock{}, instance.OfflineToleration),
		},
	}, nil
}
