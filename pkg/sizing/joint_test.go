package sizing_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/metrics"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

var _ = Describe("NodePools of one round", func() {
	// Core tries a NodePool of small standard plans first, then the default one.
	var small *karpv1.NodePool
	BeforeEach(func() {
		nodePool.Spec.Weight = ptr.To[int32](50)
		small = coretest.NodePool(karpv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: "small"},
			Spec: karpv1.NodePoolSpec{Weight: ptr.To[int32](100), Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
				NodeClassRef: nodePool.Spec.Template.Spec.NodeClassRef,
				Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
					{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard"}},
					{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"5"}},
				},
			}}},
		})
		ExpectApplied(ctx, env.Client, nodePool, small)
	})

	It("expects of each NodePool the fleet core launches for it, where pods join another NodePool's NodeClaims", func() {
		// The big pods only the default NodePool takes open its NodeClaims, and core puts the
		// small pods, which would open a NodeClaim of the small NodePool, on those first, where
		// they fit.
		big := pendingPods("big", 3, "6", "8Gi")
		little := pendingPods("little", 12, "500m", "512Mi")
		apply(append(big, little...))
		results, err := prov.Schedule(ctx)
		Expect(err).ToNot(HaveOccurred())
		// What the policy expected as core's scheduler asked for plans, before the launches change
		// what is pending.
		expected := map[string]float64{}
		for _, name := range []string{nodePool.Name, small.Name} {
			expected[name] = sizingGaugeOf("karpenter_linode_sizing_expected_fleet_price", name)
		}

		prices := map[string]float64{}
		for _, it := range offered() {
			prices[it.Name] = it.Offerings[0].Price
		}
		launched := map[string]float64{}
		joined := 0
		for _, m := range results.NewNodeClaims {
			for _, pod := range m.Pods {
				if pod.Labels["app"] == "little" && m.NodePoolName == nodePool.Name {
					joined++
				}
			}
			name, err := prov.Create(ctx, m, provisioning.WithReason(metrics.ProvisionedReason))
			Expect(err).ToNot(HaveOccurred())
			nodeClaim := &karpv1.NodeClaim{}
			Expect(env.Client.Get(ctx, types.NamespacedName{Name: name}, nodeClaim)).To(Succeed())
			nodeClaim, err = ExpectNodeClaimDeployedNoNode(ctx, env.Client, cloudProvider, nodeClaim)
			Expect(err).ToNot(HaveOccurred())
			launched[m.NodePoolName] += prices[nodeClaim.Labels[corev1.LabelInstanceTypeStable]]
		}
		Expect(joined).To(BeNumerically(">", 0), "small pods on the default NodePool's NodeClaims")
		for name, price := range expected {
			Expect(price).To(BeNumerically("~", launched[name], 1e-9), name)
			// The cheapest fleet the policy found is one of the same round.
			Expect(sizingGaugeOf("karpenter_linode_sizing_cheapest_fleet_price", name)).To(BeNumerically("<=", price+1e-9), name)
		}
	})

	It("expects no new node for pods that fit on another NodePool's node still starting", func() {
		first := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pendingPods("big", 1, "6", "8Gi")...)
		Expect(first.Bindings).To(HaveLen(1))
		// The big pod's node, still starting, has room left for small pods, which core tries
		// before opening a NodeClaim of the small NodePool.
		apply(pendingPods("little", 2, "250m", "256Mi"))
		results, err := prov.Schedule(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(results.NewNodeClaims).To(BeEmpty())
		Expect(sizingGaugeOf("karpenter_linode_sizing_expected_fleet_price", small.Name)).To(BeZero())
	})
})
