package cloudprovider

import (
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// DriftReasonMaintenance: Linode's host maintenance takes the node's Linode down within the
// maintenance lead time. The maintenance controller (pkg/controllers/maintenance) records the
// window on the NodeClaim; reporting it as drift has core replace the node the way it replaces
// any drifted node, replacement first and drain under budgets and PodDisruptionBudgets.
const DriftReasonMaintenance cloudprovider.DriftReason = "LinodeMaintenance"

// maintenanceDrift reports a NodeClaim whose Linode has such maintenance recorded.
func maintenanceDrift(nodeClaim *karpv1.NodeClaim) cloudprovider.DriftReason {
	if _, scheduled := nodeClaim.Annotations[v1.AnnotationMaintenanceWindow]; scheduled {
		return DriftReasonMaintenance
	}
	return ""
}
