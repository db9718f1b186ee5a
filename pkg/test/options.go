package test

import (
	"time"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
)

const (
	// ClusterName is the label of the LKE cluster tests create, and the cluster the provider's
	// ownership tags name.
	ClusterName = "karpenter-test"
	// Region is where tests launch.
	Region = "us-ord"
)

// Options are the provider's settings in tests: LKE mode for the cluster ClusterName, and the
// defaults of the settings the provider reads once running.
func Options() *options.Options {
	return &options.Options{
		ClusterName:                  ClusterName,
		Mode:                         mode.LKE,
		APIVersion:                   "v4",
		HypervisorMemoryPercent:      instancetype.DefaultHypervisorMemoryPercent,
		CatalogueRefreshInterval:     12 * time.Hour,
		GarbageCollectionGracePeriod: options.DefaultGarbageCollectionGracePeriod,
		SystemNamespace:              "kube-system",
		MaintenanceLeadTime:          options.DefaultMaintenanceLeadTime,
		MaintenancePollInterval:      options.DefaultMaintenancePollInterval,
		SizingPolicy:                 v1.SizingPolicyEnabled,
		SizingLargeFleetNodes:        options.DefaultSizingLargeFleetNodes,
		SizingTolerancePercent:       options.DefaultSizingTolerancePercent,
		SizingTimeBudget:             options.DefaultSizingTimeBudget,
	}
}
