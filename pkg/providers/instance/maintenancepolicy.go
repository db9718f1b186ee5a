// Package instance is instance mode: nodes as plain Linodes that join a self-managed cluster.
package instance

import (
	"github.com/linode/linodego"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// SetMaintenancePolicy puts the class's maintenance policy on the options of a Linode create;
// without one the Linode takes the account's default. The NodeClass controller has checked that
// the region offers policies (MaintenancePolicyReady), and the policy is part of the class's hash,
// so changing it drifts the nodes launched with the old one.
func SetMaintenancePolicy(opts *linodego.InstanceCreateOptions, nodeClass *v1.LinodeNodeClass) {
	if policy := nodeClass.Spec.MaintenancePolicy; policy != nil {
		opts.MaintenancePolicy = new(string(*policy))
	}
}
