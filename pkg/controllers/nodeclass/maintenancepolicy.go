package nodeclass

import (
	"context"
	"fmt"
	"slices"

	"github.com/linode/linodego"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

// Reasons of a failed MaintenancePolicyReady condition.
const (
	// ReasonMaintenancePolicyNotInLKE: LKE node pools cannot choose a maintenance policy.
	ReasonMaintenancePolicyNotInLKE = "MaintenancePolicyNotSupportedByLKE"
	// ReasonMaintenancePolicyNotInRegion: the region's Linodes cannot choose a maintenance policy.
	ReasonMaintenancePolicyNotInRegion = "MaintenancePolicyNotOfferedInRegion"
)

// maintenancePolicy checks that the nodes can have the maintenance policy the class asks for. The
// Linode API takes maintenance_policy when it creates a Linode, in regions that list the
// "Maintenance Policy" capability; LKE's node pool API has no such field (linodego v1.69 and the
// API's 2025 updates add it to Linodes and the account only), so pool nodes take the account's
// default and a class asking for a policy in LKE mode is refused rather than silently ignored.
type maintenancePolicy struct {
	api     API
	cluster *lke.Cluster
	region  string
}

func (m *maintenancePolicy) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	policy := nodeClass.Spec.MaintenancePolicy
	if policy == nil {
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeMaintenancePolicyReady)
		return reconcile.Result{}, nil
	}
	var capabilities []string
	if m.cluster == nil {
		region, err := m.api.GetRegion(ctx, m.region)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("reading region %s: %w", m.region, err)
		}
		capabilities = region.Capabilities
	}
	if reason, message := maintenancePolicyRefusal(*policy, m.cluster != nil, m.region, capabilities); reason != "" {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeMaintenancePolicyReady, reason, message)
		return reconcile.Result{}, nil
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeMaintenancePolicyReady)
	return reconcile.Result{}, nil
}

// maintenancePolicyRefusal says why nodes cannot get the policy, or "" when they can.
func maintenancePolicyRefusal(policy v1.MaintenancePolicy, lkeMode bool, region string, capabilities []string) (reason, message string) {
	if lkeMode {
		return ReasonMaintenancePolicyNotInLKE, fmt.Sprintf("LKE node pools cannot choose a maintenance policy, their Linodes take the account's default "+
			"(maintenance_policy in the account settings): remove maintenancePolicy %q", policy)
	}
	if !slices.Contains(capabilities, linodego.CapabilityMaintenancePolicy) {
		return ReasonMaintenancePolicyNotInRegion, fmt.Sprintf("Linodes in %s cannot choose a maintenance policy (the region lacks the %q capability): remove maintenancePolicy %q",
			region, linodego.CapabilityMaintenancePolicy, policy)
	}
	return "", ""
}
