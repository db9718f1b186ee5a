package lke

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestLinodesPoolLabelRules: the labels and taints a pool may carry, by Linode's rules, for the
// kinds Kubernetes allows on a NodePool.
func TestLinodesPoolLabelRules(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		accepted   bool
	}{
		{"team", "payments", true},
		{"karpenter.sh/nodepool", "default", true},
		{"karpenter.k8s.linode/nodeclaim", "default-abcde", true},
		{"example.com/tier", "gold.1_a-b", true},
		{"node.kubernetes.io/instance-type", "g6-standard-2", false},
		{"node-role.kubernetes.io/worker", "", false},
		{"example.kubernetes.io.acme.org/team", "x", false},
		{"topology.linode.com/rack", "r12", false},
		{"flag", "", false},
		{strings.Repeat("p", 63) + ".com/team", "x", false},
		{"example.com/" + strings.Repeat("n", 63), "x", true},
		{strings.Repeat("k", 64), "x", false},
		{"team", strings.Repeat("v", 64), false},
	} {
		if got := linodeAcceptsPoolLabel(tc.key, tc.value); got != tc.accepted {
			t.Errorf("label %s=%q: accepted %v, want %v", tc.key, tc.value, got, tc.accepted)
		}
	}
	for _, tc := range []struct {
		taint    corev1.Taint
		accepted bool
	}{
		{corev1.Taint{Key: "dedicated", Value: "payments"}, true},
		{corev1.Taint{Key: "nvidia.com/gpu"}, true},
		{corev1.Taint{Key: "node.kubernetes.io/special", Value: "x"}, true},
		{corev1.Taint{Key: "example.com/provider", Value: "linode.com"}, false},
		{corev1.Taint{Key: "example.com/provider", Value: "kubernetes.io"}, false},
		{corev1.Taint{Key: "example.com/" + strings.Repeat("k", 60), Value: "long"}, false},
		{corev1.Taint{Key: "dedicated", Value: strings.Repeat("v", 64)}, false},
	} {
		tc.taint.Effect = corev1.TaintEffectNoSchedule
		if got := linodeAcceptsPoolTaint(tc.taint); got != tc.accepted {
			t.Errorf("taint %s: accepted %v, want %v", tc.taint.ToString(), got, tc.accepted)
		}
	}
}
