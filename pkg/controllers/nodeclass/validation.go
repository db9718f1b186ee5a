package nodeclass

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

// Reasons of a failed ValidationSucceeded condition.
const (
	// ReasonEnterpriseTierRequired: the class sets a field only LKE Enterprise clusters accept.
	ReasonEnterpriseTierRequired = "EnterpriseTierRequired"
	// ReasonUnsupportedK8sVersion: LKE does not offer the pinned Kubernetes version.
	ReasonUnsupportedK8sVersion = "UnsupportedK8sVersion"
	// ReasonLaunchRejected: Linode refused a launch with this class as invalid.
	ReasonLaunchRejected = "LaunchRejected"
)

// validation checks the settings that resolve to no object: the LKE fields against the cluster's
// tier and LKE's versions. A launch rejection recorded by the cloud provider stands until the spec
// changes, since only a change can make Linode accept the launch.
type validation struct {
	api     API
	cluster *lke.Cluster
}

func (v *validation) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if current := nodeClass.StatusConditions().Get(v1.ConditionTypeValidationSucceeded); current != nil &&
		current.Reason == ReasonLaunchRejected && current.ObservedGeneration == nodeClass.Generation {
		return reconcile.Result{}, nil
	}
	if v.cluster == nil {
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeValidationSucceeded)
		return reconcile.Result{}, nil
	}
	if fields := enterpriseOnlyFields(nodeClass); len(fields) > 0 && v.cluster.Tier != lke.TierEnterprise {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeValidationSucceeded, ReasonEnterpriseTierRequired,
			fmt.Sprintf("%s apply only to LKE Enterprise clusters, and LKE cluster %q is on the %s tier: remove them", strings.Join(fields, " and "), v.cluster.Label, v.cluster.Tier))
		return reconcile.Result{}, nil
	}
	if version := nodeClass.Spec.LKEK8sVersion; version != nil {
		offered, err := v.api.ListLKEVersions(ctx, nil)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("listing LKE versions: %w", err)
		}
		ids := lo.Map(offered, func(v linodego.LKEVersion, _ int) string { return v.ID })
		if !slices.Contains(ids, *version) {
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeValidationSucceeded, ReasonUnsupportedK8sVersion,
				fmt.Sprintf("LKE does not offer Kubernetes %s; lkeK8sVersion must be one of %s", *version, strings.Join(ids, ", ")))
			return reconcile.Result{}, nil
		}
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeValidationSucceeded)
	return reconcile.Result{}, nil
}

func enterpriseOnlyFields(nodeClass *v1.LinodeNodeClass) []string {
	var fields []string
	if nodeClass.Spec.LKEK8sVersion != nil {
		fields = append(fields, "lkeK8sVersion")
	}
	if nodeClass.Spec.UpdateStrategy != nil {
		fields = append(fields, "updateStrategy")
	}
	return fields
}
