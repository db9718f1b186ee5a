package instance

import (
	"context"
	"fmt"
	"slices"

	"github.com/linode/linodego"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// ReasonMaintenancePolicyNotInRegion is the reason of a failed MaintenancePolicyReady condition:
// the region's Linodes cannot choose a maintenance policy.
const ReasonMaintenancePolicyNotInRegion = "MaintenancePolicyNotOfferedInRegion"

// RegionAPI reads the region nodes launch in.
type RegionAPI interface {
	GetRegion(ctx context.Context, regionID string) (*linodego.Region, error)
}

// MaintenancePolicyResolver sets MaintenancePolicyReady in instance mode: the Linode API takes
// maintenance_policy when it creates a Linode, in regions that list the "Maintenance Policy"
// capability.
type MaintenancePolicyResolver struct {
	api    RegionAPI
	region string
}

// NewMaintenancePolicyResolver returns the resolver for nodes launched in region.
func NewMaintenancePolicyResolver(api RegionAPI, region string) *MaintenancePolicyResolver {
	return &MaintenancePolicyResolver{api: api, region: region}
}

// Reconcile checks that the region offers the policy the class asks for; the region is read
// only when the class asks for one.
func (m *MaintenancePolicyResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	policy := nodeClass.Spec.MaintenancePolicy
	if policy == nil {
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeMaintenancePolicyReady)
		return reconcile.Result{}, nil
	}
	region, err := m.api.GetRegion(ctx, m.region)
	if err != nil {
		// The last answer stands until the API answers again.
		return reconcile.Result{}, fmt.Errorf("reading region %s: %w", m.region, err)
	}
	if message := maintenancePolicyNotOffered(*policy, m.region, region.Capabilities); message != "" {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeMaintenancePolicyReady, ReasonMaintenancePolicyNotInRegion, message)
		return reconcile.Result{}, nil
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeMaintenancePolicyReady)
	return reconcile.Result{}, nil
}

// maintenancePolicyNotOffered says why a region with these capabilities cannot give its Linodes
// the policy, or "" when it can.
func maintenancePolicyNotOffered(policy v1.MaintenancePolicy, region string, capabilities []string) string {
	if slices.Contains(capabilities, linodego.CapabilityMaintenancePolicy) {
		return ""
	}
	return fmt.Sprintf("Linodes in %s cannot choose a maintenance policy (the region lacks the %q capability): remove maintenancePolicy %q",
		region, linodego.CapabilityMaintenancePolicy, policy)
}

// SetMaintenancePolicy puts the class's maintenance policy on the options of a Linode create;
// without one the Linode takes the account's default. The MaintenancePolicyResolver has checked
// that the region offers policies, and the policy is part of the class's hash in instance mode,
// so changing it drifts the nodes launched with the old one.
func SetMaintenancePolicy(opts *linodego.InstanceCreateOptions, nodeClass *v1.LinodeNodeClass) {
	if policy := nodeClass.Spec.MaintenancePolicy; policy != nil {
		opts.MaintenancePolicy = new(string(*policy))
	}
}
