// Package lkecloud builds our cloud provider in LKE mode for tests and benchmarks, over a Linode
// API client (usually the emulator's). It wires the chain pkg/operator wires for the controller
// (the LKE cluster, the instance-type provider, the node provider, the cloud provider) in one
// place, so that a change to that chain is made once rather than in every suite.
package lkecloud

import (
	"context"
	"fmt"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

// Options are what a suite changes from the controller's wiring.
type Options struct {
	nodeProvider []option.Function[lke.Options]
}

// WithNodeProviderOptions tunes the LKE node provider, e.g. a poll interval for the emulator's
// instant launches instead of the live API's.
func WithNodeProviderOptions(opts ...option.Function[lke.Options]) option.Function[Options] {
	return func(o *Options) { o.nodeProvider = append(o.nodeProvider, opts...) }
}

// Cloud is the cloud provider with the parts behind it that tests also drive.
type Cloud struct {
	Cluster       *lke.Cluster
	Nodes         *lke.Provider
	Unavailable   *cache.UnavailableOfferings
	CloudProvider *cloudprovider.CloudProvider
}

// New finds the LKE cluster labelled clusterName through api and builds the cloud provider over
// it with the operator's own constructor, reading its NodeClasses through kubeClient. The
// catalogue is read before New returns, as the controller's catalogue controller would have, so
// GetInstanceTypes answers at once.
func New(ctx context.Context, api linode.API, clusterName string, kubeClient client.Client, opts ...option.Function[Options]) (*Cloud, error) {
	o := option.Resolve(opts...)
	ctx = options.ToContext(ctx, &options.Options{
		ClusterName:              clusterName,
		Mode:                     mode.LKE,
		HypervisorMemoryPercent:  instancetype.DefaultHypervisorMemoryPercent,
		CatalogueRefreshInterval: 12 * time.Hour,
	})
	target, err := operator.CheckLinode(ctx, api, options.FromContext(ctx), operator.LKE{ProviderOptions: o.nodeProvider})
	if err != nil {
		return nil, err
	}
	provider, err := operator.NewLinode(ctx, kubeClient, events.NewRecorder(&record.FakeRecorder{}), api, target)
	if err != nil {
		return nil, err
	}
	if err := provider.InstanceTypes.UpdateCatalogue(ctx); err != nil {
		return nil, fmt.Errorf("reading the catalogue: %w", err)
	}
	return &Cloud{
		Cluster:       target.(*operator.LKETarget).Cluster,
		Nodes:         provider.Nodes.(*lke.Provider),
		Unavailable:   provider.Unavailable,
		CloudProvider: provider.CloudProvider,
	}, nil
}
