package lke

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// ReasonMaintenancePolicyNotInLKE is the reason of a failed MaintenancePolicyReady condition: LKE
// node pools cannot choose a maintenance policy.
const ReasonMaintenancePolicyNotInLKE = "MaintenancePolicyNotSupportedByLKE"

// MaintenancePolicyRefusal sets MaintenancePolicyReady in LKE mode. LKE's node pool API has no
// maintenance policy (linodego v1.69 and the API's 2025 updates add one to Linodes and the account
// only), so a pool's Linodes take the account's default. A class that asks for a policy is
// refused rather than launched without it: the operator asked for behaviour the nodes would not
// have.
type MaintenancePolicyRefusal struct{}

// Reconcile sets MaintenancePolicyReady.
func (MaintenancePolicyRefusal) Reconcile(_ context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if policy := nodeClass.Spec.MaintenancePolicy; policy != nil {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeMaintenancePolicyReady, ReasonMaintenancePolicyNotInLKE,
			fmt.Sprintf("LKE node pools cannot choose a maintenance policy, their Linodes take the account's default "+
				"(maintenance_policy in the account settings): remove maintenancePolicy %q", *policy))
		return reconcile.Result{}, nil
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeMaintenancePolicyReady)
	return reconcile.Result{}, nil
}
