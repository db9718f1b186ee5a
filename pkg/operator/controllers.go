package operator

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/metrics"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	corecontrollers "sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	catalogue "github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype/capacity"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// NewControllers builds the Linode cloud provider for target and returns Karpenter core's
// controllers driving it, followed by the provider's own.
func NewControllers(ctx context.Context, core *coreoperator.Operator, api linode.API, target *Target) ([]controller.Controller, error) {
	opts := options.FromContext(ctx)
	unavailable := cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	instanceTypes := instancetype.NewDefaultProvider(api, target.Region, opts.Mode, unavailable,
		instancetype.WithHypervisorMemoryPercent(opts.HypervisorMemoryPercent))
	nodes, cluster, err := newNodeProvider(ctx, api, opts, unavailable)
	if err != nil {
		return nil, err
	}

	linodeCloudProvider := cloudprovider.New(core.GetClient(), instanceTypes, nodes)
	overlayUndecoratedCloudProvider := metrics.Decorate(linodeCloudProvider)
	cloudProvider := overlay.Decorate(overlayUndecoratedCloudProvider, core.GetClient(), core.InstanceTypeStore)
	repairPolicyMatcher, err := health.NewRepairPolicyMatcher(ctx, cloudProvider)
	if err != nil {
		return nil, fmt.Errorf("the cloud provider's repair policies: %w", err)
	}
	clusterState := state.NewCluster(core.Clock, core.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(repairPolicyMatcher))

	controllers := corecontrollers.NewControllers(ctx, core.Manager, core.Clock, core.GetClient(), core.EventRecorder,
		cloudProvider, overlayUndecoratedCloudProvider, clusterState, core.InstanceTypeStore, core.PredictionStore)
	controllers = append(controllers, linodeControllers(core, opts, api, instanceTypes, nodes, cluster)...)
	var nodeWebhook *node.Webhook
	if cluster != nil && !opts.DisableWebhook {
		nodeWebhook = node.NewWebhook(core.GetClient(), nodes, cluster.ID)
	}
	webhookControllers, err := serveWebhooks(core, opts, nodeWebhook)
	if err != nil {
		return nil, err
	}
	return append(controllers, webhookControllers...), nil
}

// linodeControllers are the provider's own controllers.
func linodeControllers(core *coreoperator.Operator, opts *options.Options, api linode.API, instanceTypes *instancetype.DefaultProvider,
	nodes nodeprovider.Provider, cluster *lke.Cluster) []controller.Controller {
	return []controller.Controller{
		catalogue.NewController(instanceTypes, opts.CatalogueRefreshInterval),
		capacity.NewController(instanceTypes),
		nodeclass.NewController(core.GetClient(), core.EventRecorder, api, cluster),
		garbagecollection.NewController(core.GetClient(), nodes, opts.ClusterName),
	}
}

// newNodeProvider returns the node provider of the mode, and in LKE mode the cluster.
func newNodeProvider(ctx context.Context, api linode.API, opts *options.Options, unavailable *cache.UnavailableOfferings) (nodeprovider.Provider, *lke.Cluster, error) {
	switch opts.Mode {
	case options.ModeLKE:
		cluster, err := lke.DiscoverCluster(ctx, api, opts.ClusterName, opts.Region)
		if err != nil {
			return nil, nil, err
		}
		return lke.NewProvider(api, cluster, opts.ClusterName, unavailable), cluster, nil
	default:
		return nil, nil, fmt.Errorf("KARPENTER_MODE %q has no node provider in this build", opts.Mode)
	}
}
