package adoption_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/adoption"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// TestAnAdoptedNodeClaimDriftsOnlyWhenItsNodeDiffersFromItsNodePool: the NodePool hash of an
// adopted node's NodeClaim is its NodePool's exactly when the node carries the NodePool's taints,
// whatever Kubernetes and Karpenter add to a node and whatever start-up taints are left.
func TestAnAdoptedNodeClaimDriftsOnlyWhenItsNodeDiffersFromItsNodePool(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	disrupted := karpv1.DisruptedNoScheduleTaint
	agent := corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	batch := corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name          string
		poolTaints    []corev1.Taint
		startupTaints []corev1.Taint
		nodeTaints    []corev1.Taint
		drifted       bool
	}{
		{name: "no taints anywhere"},
		{name: "only system taints on the node", nodeTaints: []corev1.Taint{notReady, disrupted}},
		{name: "the NodePool's taint", poolTaints: []corev1.Taint{batch}, nodeTaints: []corev1.Taint{batch, notReady}},
		{name: "a start-up taint not lifted yet", poolTaints: []corev1.Taint{batch}, startupTaints: []corev1.Taint{agent}, nodeTaints: []corev1.Taint{batch, agent}},
		{name: "a taint the NodePool no longer has", nodeTaints: []corev1.Taint{batch}, drifted: true},
		{name: "a taint the NodePool has since added", poolTaints: []corev1.Taint{batch}, drifted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodePool := &karpv1.NodePool{
				ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "d3f"},
				Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
					NodeClassRef:  &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: "default"},
					Taints:        tc.poolTaints,
					StartupTaints: tc.startupTaints,
				}}},
			}
			node := &corev1.Node{Spec: corev1.NodeSpec{ProviderID: nodeprovider.ProviderID(7), Taints: tc.nodeTaints}}
			nodeClaim := adoption.NodeClaimFor(nodePool, node, &nodeprovider.Node{InstanceID: 7, InstanceType: "g6-standard-2", Region: "us-ord"})
			if drifted := nodeClaim.Annotations[karpv1.NodePoolHashAnnotationKey] != nodePool.Hash(); drifted != tc.drifted {
				t.Fatalf("drifted = %v, want %v (taints %v)", drifted, tc.drifted, nodeClaim.Spec.Taints)
			}
			if len(nodeClaim.Spec.StartupTaints) != 0 {
				t.Fatalf("start-up taints %v would go back on a running node", nodeClaim.Spec.StartupTaints)
			}
		})
	}
}
