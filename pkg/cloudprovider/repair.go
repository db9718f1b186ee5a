package cloudprovider

import (
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// unhealthyToleration is how long a node may stay not Ready before it is replaced: long enough to
// ride out a kubelet restart or an LKE node upgrade, short enough that a dead Linode does not hold
// its pods for hours.
const unhealthyToleration = 30 * time.Minute

// RepairPolicies replace nodes whose kubelet stays not Ready. Ready=False is the set's single
// default fallback, as core requires; Ready=Unknown (the kubelet stopped reporting) matches any
// reason. Both skip the drain: a kubelet that does not report cannot evict pods either. Core's
// repair honours karpenter.sh/do-not-repair and the NodePool's budgets for the reason Unhealthy;
// with a drain bound of zero it deletes pods that karpenter.sh/do-not-disrupt or a
// PodDisruptionBudget would hold, which with a nil bound would block the repair of a node whose
// NodeClaim sets no terminationGracePeriod.
func (c *CloudProvider) RepairPolicies() []cloudprovider.RepairPolicy {
	return []cloudprovider.RepairPolicy{
		{
			ConditionType:          corev1.NodeReady,
			ConditionStatus:        corev1.ConditionFalse,
			TolerationDuration:     unhealthyToleration,
			TerminationGracePeriod: lo.ToPtr(time.Duration(0)),
			Action:                 cloudprovider.ReplaceNode,
		},
		{
			ConditionType:          corev1.NodeReady,
			ConditionStatus:        corev1.ConditionUnknown,
			ReasonRegex:            ".*",
			TolerationDuration:     unhealthyToleration,
			TerminationGracePeriod: lo.ToPtr(time.Duration(0)),
			Action:                 cloudprovider.ReplaceNode,
		},
	}
}
