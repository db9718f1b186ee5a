package operator

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/option"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/metrics"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	corecontrollers "sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/maintenance"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nomination"
	catalogue "github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype/capacity"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/sizing"
)

// NewControllers builds the Linode cloud provider for target and returns Karpenter core's
// controllers driving it, followed by the provider's own.
func NewControllers(ctx context.Context, core *coreoperator.Operator, api linode.API, credentials *linode.Credentials, target Target) ([]controller.Controller, error) {
	provider, err := NewLinode(ctx, core.GetClient(), core.GetAPIReader(), core.GetConfig(), core.EventRecorder, core.Clock, api, credentials, target)
	if err != nil {
		return nil, err
	}
	overlayUndecoratedCloudProvider := metrics.Decorate(provider.CloudProvider)
	cloudProvider := overlay.Decorate(overlayUndecoratedCloudProvider, core.GetClient(), core.InstanceTypeStore)
	repairPolicyMatcher, err := health.NewRepairPolicyMatcher(ctx, cloudProvider)
	if err != nil {
		return nil, fmt.Errorf("the cloud provider's repair policies: %w", err)
	}
	clusterState := state.NewCluster(core.Clock, core.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(repairPolicyMatcher))
	provider.Sizing.Track(clusterState)
	provider.Sizing.ModelOverlays(core.InstanceTypeStore)
	if err := provider.Sizing.ReadFromInformers(ctx, core.GetCache()); err != nil {
		return nil, err
	}

	controllers := corecontrollers.NewControllers(ctx, core.Manager, core.Clock, core.GetClient(), core.EventRecorder,
		cloudProvider, overlayUndecoratedCloudProvider, clusterState, core.InstanceTypeStore, core.PredictionStore)
	controllers = append(controllers, provider.Controllers...)
	return append(controllers, nomination.NewController(core.GetClient(), clusterState, core.Clock)), nil
}

// Linode is the provider's side of the controller in the target's mode: the cloud provider core
// drives, the parts behind it, and the provider's own controllers. The controller
// and the tests build it the same way, with NewLinode.
type Linode struct {
	Mode          mode.Mode
	InstanceTypes *instancetype.DefaultProvider
	// Unavailable are the plans a region recently had no capacity for.
	Unavailable   *cache.UnavailableOfferings
	Nodes         nodeprovider.Provider
	CloudProvider *cloudprovider.CloudProvider
	// Sizing offers every plan until it is given core's cluster state (Sizing.Track), which core
	// builds from the cloud provider. With SIZING_POLICY=disabled the cloud provider does not
	// consult it.
	Sizing *sizing.Policy
	// Controllers are the provider's own controllers, the mode's included.
	Controllers []controller.Controller
}

// NewLinode builds the mode's parts for target and the rest of the provider around them, with
// the settings in ctx. kubeClient reads through the manager's cache in the controller, apiReader
// past it; restConfig is its connection to the API server, which LKE mode does not need; clk is
// the time Linode's maintenance windows are compared with; credentials, when not nil, are the
// token api sends, whose refusal NodeClasses report.
func NewLinode(ctx context.Context, kubeClient client.Client, apiReader client.Reader, restConfig *rest.Config, recorder events.Recorder, clk clock.Clock, api linode.API, credentials *linode.Credentials, target Target) (*Linode, error) {
	opts := options.FromContext(ctx)
	unavailable := cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	instanceTypes := instancetype.NewDefaultProvider(api, target.Region(), target.Mode(), unavailable,
		instancetype.WithHypervisorMemoryPercent(opts.HypervisorMemoryPercent))
	parts, err := target.Build(ctx, Dependencies{KubeClient: kubeClient, APIReader: apiReader, RESTConfig: restConfig, Recorder: recorder, API: api, Unavailable: unavailable})
	if err != nil {
		return nil, err
	}
	sizer := sizing.NewPolicy(kubeClient, recorder, sizing.Tradeoff{LargeFleetNodes: opts.SizingLargeFleetNodes, Tolerance: opts.SizingTolerancePercent / 100}, clk)
	sizer.LimitTime(opts.SizingTimeBudget)
	cloudProviderOptions := []cloudprovider.Option{cloudprovider.WithRecorder(recorder)}
	if opts.SizingPolicy != v1.SizingPolicyDisabled {
		cloudProviderOptions = append(cloudProviderOptions, cloudprovider.WithSizer(sizer))
	}
	return &Linode{
		Mode:          target.Mode(),
		InstanceTypes: instanceTypes,
		Unavailable:   unavailable,
		Nodes:         parts.Nodes,
		CloudProvider: cloudprovider.New(kubeClient, instanceTypes, parts.Nodes, target.Mode(), cloudProviderOptions...),
		Sizing:        sizer,
		Controllers: append([]controller.Controller{
			catalogue.NewController(instanceTypes, opts.CatalogueRefreshInterval),
			capacity.NewController(instanceTypes),
			nodeclass.NewController(kubeClient, recorder, api, tokenStatus(credentials), target.Mode(), parts.Resolvers, parts.Validators),
			nodeclass.NewHashController(kubeClient, target.Mode()),
			garbagecollection.NewController(kubeClient, recorder, parts.Nodes, parts.OwnershipTag, garbageCollectionOptions(opts)...),
			garbagecollection.NewDeletedNodeController(kubeClient, apiReader, recorder, parts.Nodes, parts.OwnershipTag),
			maintenance.NewController(kubeClient, api, parts.Nodes, recorder, maintenance.WithClock(clk),
				maintenance.WithInterval(opts.MaintenancePollInterval), maintenance.WithLeadTime(opts.MaintenanceLeadTime)),
		}, parts.Controllers...),
	}, nil
}

// garbageCollectionOptions shorten the garbage collector's grace period to the setting's, and its
// interval with it, so that a leak is collected within one grace period and one interval.
func garbageCollectionOptions(opts *options.Options) []option.Function[garbagecollection.Options] {
	return []option.Function[garbagecollection.Options]{
		garbagecollection.WithGracePeriod(opts.GarbageCollectionGracePeriod),
		garbagecollection.WithInterval(min(garbagecollection.DefaultInterval, opts.GarbageCollectionGracePeriod/2)),
	}
}

// tokenStatus is the credentials' verdict for the NodeClass controller, nil when none watch it.
func tokenStatus(credentials *linode.Credentials) nodeclass.TokenStatus {
	if credentials == nil {
		return nil
	}
	return credentials
}
