package node

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// LKENodeName is what the name of an LKE node says about where it comes from.
type LKENodeName struct {
	ClusterID int
	PoolID    int
}

// ParseLKENodeName reads the cluster and pool of an LKE node from its name,
// lke<clusterID>-<poolID>-<hex>. It reports false for any other name.
func ParseLKENodeName(name string) (LKENodeName, bool) {
	rest, ok := strings.CutPrefix(name, "lke")
	if !ok {
		return LKENodeName{}, false
	}
	cluster, rest, ok := strings.Cut(rest, "-")
	if !ok {
		return LKENodeName{}, false
	}
	pool, suffix, ok := strings.Cut(rest, "-")
	if !ok || suffix == "" || !isLowerHex(suffix) {
		return LKENodeName{}, false
	}
	clusterID, ok := positiveInt(cluster)
	if !ok {
		return LKENodeName{}, false
	}
	poolID, ok := positiveInt(pool)
	if !ok {
		return LKENodeName{}, false
	}
	return LKENodeName{ClusterID: clusterID, PoolID: poolID}, true
}

func positiveInt(s string) (int, bool) {
	// Atoi accepts a sign, which no LKE name carries.
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// TaintsToAdd returns the taints a joining Node of the NodeClaim must get: the unregistered taint,
// the NodeClaim's taints that its pool does not carry (those Linode refuses on a pool, whose
// values name kubernetes.io or linode.com, for one) and its start-up taints, minus those the Node
// already has.
//
// It returns none once the NodeClaim is registered or going away. Core removes the unregistered
// taint only while it registers a NodeClaim, so a taint added to a Node that joins later (a
// kubelet re-registering after its Node object was deleted) would never be removed. The
// NodeClaim's taints and start-up taints are left to the provider when the Node opts out of taint
// syncing with karpenter.sh/do-not-sync-taints, as core does.
func TaintsToAdd(node *corev1.Node, nodeClaim *karpv1.NodeClaim) []corev1.Taint {
	if nodeClaim.DeletionTimestamp != nil || isRegistered(nodeClaim) {
		return nil
	}
	if _, registered := node.Labels[karpv1.NodeRegisteredLabelKey]; registered {
		return nil
	}
	var missing []corev1.Taint
	add := func(taint corev1.Taint) {
		if !hasTaint(node.Spec.Taints, taint) && !hasTaint(missing, taint) {
			missing = append(missing, taint)
		}
	}
	add(karpv1.UnregisteredNoExecuteTaint)
	if node.Labels[karpv1.NodeDoNotSyncTaintsLabelKey] != "true" {
		for _, taint := range nodeClaim.Spec.Taints {
			add(taint)
		}
		for _, taint := range nodeClaim.Spec.StartupTaints {
			add(taint)
		}
	}
	return missing
}

// isRegistered reads the Registered condition without building the condition set, which would
// cost the admission path several allocations.
func isRegistered(nodeClaim *karpv1.NodeClaim) bool {
	for _, condition := range nodeClaim.Status.Conditions {
		if condition.Type == karpv1.ConditionTypeRegistered {
			return condition.Status == metav1.ConditionTrue
		}
	}
	return false
}

// hasTaint matches taints as the kubelet and core do: by key and effect.
func hasTaint(taints []corev1.Taint, taint corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&taint) {
			return true
		}
	}
	return false
}
