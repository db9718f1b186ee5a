// Package lkecloud builds our cloud provider in LKE mode for tests and benchmarks, over a Linode
// API client (usually the emulator's). It wires the chain pkg/operator wires for the controller
// (the LKE cluster, the instance-type provider, the node provider, the cloud provider) in one
// place, so that a change to that chain is made once rather than in every suite.
package lkecloud

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/option"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/sizing"
)

// Options are what a suite changes from the controller's wiring.
type Options struct {
	nodeProvider []option.Function[lke.Options]
	unavailable  *cache.UnavailableOfferings
	tradeoff     sizing.Tradeoff
}

// WithNodeProviderOptions tunes the LKE node provider, e.g. a poll interval for the emulator's
// instant launches instead of the live API's.
func WithNodeProviderOptions(opts ...option.Function[lke.Options]) option.Function[Options] {
	return func(o *Options) { o.nodeProvider = append(o.nodeProvider, opts...) }
}

// WithUnavailableOfferings shares a cache of plans without capacity the test reads itself; by
// default the providers share a new one.
func WithUnavailableOfferings(unavailable *cache.UnavailableOfferings) option.Function[Options] {
	return func(o *Options) { o.unavailable = unavailable }
}

// WithSizingTradeoff sets the sizing policy's trade-off between price and node count
// (SIZING_LARGE_FLEET_NODES, SIZING_TOLERANCE_PERCENT).
func WithSizingTradeoff(tradeoff sizing.Tradeoff) option.Function[Options] {
	return func(o *Options) { o.tradeoff = tradeoff }
}

// Cloud is the cloud provider with the parts behind it that tests also drive.
type Cloud struct {
	Cluster       *lke.Cluster
	Nodes         *lke.Provider
	CloudProvider *cloudprovider.CloudProvider
	// Sizing offers every plan until a suite gives it core's cluster state (Sizing.Track), as
	// the controller does once it has built that state from the cloud provider.
	Sizing *sizing.Policy
}

// New finds the LKE cluster labelled clusterName through api and builds the cloud provider over
// it, reading its NodeClasses through kubeClient. The catalogue is read before New returns, as
// the controller's catalogue controller would have, so GetInstanceTypes answers at once.
func New(ctx context.Context, api linode.API, clusterName string, kubeClient client.Client, opts ...option.Function[Options]) (*Cloud, error) {
	o := option.Resolve(append([]option.Function[Options]{WithSizingTradeoff(sizing.Tradeoff{
		LargeFleetNodes: options.DefaultSizingLargeFleetNodes, Tolerance: options.DefaultSizingTolerancePercent / 100,
	})}, opts...)...)
	if o.unavailable == nil {
		o.unavailable = cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	}
	cluster, err := lke.DiscoverCluster(ctx, api, clusterName, "")
	if err != nil {
		return nil, err
	}
	instanceTypes := instancetype.NewDefaultProvider(api, cluster.Region, options.ModeLKE, o.unavailable)
	if err := instanceTypes.UpdateCatalogue(ctx); err != nil {
		return nil, fmt.Errorf("reading the catalogue: %w", err)
	}
	nodes := lke.NewProvider(api, cluster, clusterName, o.unavailable, o.nodeProvider...)
	sizer := sizing.NewPolicy(kubeClient, o.tradeoff)
	return &Cloud{
		Cluster:       cluster,
		Nodes:         nodes,
		CloudProvider: cloudprovider.New(kubeClient, instanceTypes, nodes, cloudprovider.WithSizer(sizer)),
		Sizing:        sizer,
	}, nil
}
