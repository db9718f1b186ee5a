package sizing_test

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	nodeclaimdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	disruptionutils "sigs.k8s.io/karpenter/pkg/utils/disruption"

	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// pendingPods are n pods kube-scheduler found no node for, each asking for cpu and memory.
func pendingPods(prefix string, n int, cpu, memory string, opts ...coretest.PodOptions) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		o := coretest.PodOptions{}
		if len(opts) > 0 {
			o = opts[0]
		}
		o.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("%s-%03d", prefix, i), Namespace: "default", Labels: map[string]string{"app": prefix}}
		o.ResourceRequirements = corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}
		pods = append(pods, coretest.UnschedulablePod(o))
	}
	return pods
}

func apply(pods []*corev1.Pod) {
	GinkgoHelper()
	for _, pod := range pods {
		ExpectApplied(ctx, env.Client, pod)
	}
}

// offered are the instance types core sees for the NodePool, by name.
func offered() map[string]*corecloudprovider.InstanceType {
	GinkgoHelper()
	instanceTypes, err := cloudProvider.GetInstanceTypes(ctx, nodePool)
	Expect(err).ToNot(HaveOccurred())
	byName := map[string]*corecloudprovider.InstanceType{}
	for _, it := range instanceTypes {
		byName[it.Name] = it
	}
	return byName
}

func available(it *corecloudprovider.InstanceType) bool { return len(it.Offerings.Available()) > 0 }

// sizingGauge is the value of the sizing policy's gauge for the NodePool.
func sizingGauge(name string) float64 {
	GinkgoHelper()
	return sizingGaugeOf(name, nodePool.Name)
}

// sizingGaugeOf is the value of the sizing policy's gauge for the named NodePool.
func sizingGaugeOf(name, nodePoolName string) float64 {
	GinkgoHelper()
	value, found, err := test.NodePoolMetric(name, nodePoolName)
	Expect(err).ToNot(HaveOccurred())
	Expect(found).To(BeTrue(), "no %s for NodePool %s", name, nodePoolName)
	return value
}

// launchedPlans are the plans of the NodeClaims core created, by pod.
func launchedPlans(bindings map[*corev1.Pod]*Binding) map[string]string {
	plans := map[string]string{}
	for pod, binding := range bindings {
		plans[pod.Name] = binding.Node.Labels[corev1.LabelInstanceTypeStable]
	}
	return plans
}

// nodeClaimPlans are the plans of the NodeClaims core created, by NodeClaim.
func nodeClaimPlans(bindings map[*corev1.Pod]*Binding) map[string]string {
	plans := map[string]string{}
	for _, binding := range bindings {
		plans[binding.NodeClaim.Name] = binding.Node.Labels[corev1.LabelInstanceTypeStable]
	}
	return plans
}

var _ = Describe("Sizing", func() {
	It("offers every plan while no pod is pending", func() {
		for name, it := range offered() {
			// The emulator's catalogue has no capacity for GPU plans in us-ord.
			if it.Requirements.Get(corev1.LabelInstanceTypeStable).Has(name) && !isGPU(it) {
				Expect(available(it)).To(BeTrue(), name)
			}
		}
	})

	It("lists every plan and offers none dearer than the ceiling for the pending pods", func() {
		all := offered()
		// Thirty one-CPU pods: three to a g6-standard-4 node, $0.024 a pod, the cheapest.
		apply(pendingPods("web", 30, "1", "1Gi"))
		instanceTypes := offered()
		Expect(instanceTypes).To(HaveLen(len(all)))
		ceiling := instanceTypes["g6-standard-4"].Offerings[0].Price
		for name, it := range instanceTypes {
			Expect(available(it)).To(Equal(it.Offerings[0].Price <= ceiling && !isGPU(it)), name)
		}
		// Ten such nodes: the cheapest fleet, and the one expected, the NodePool being small.
		Expect(sizingGauge("karpenter_linode_sizing_cheapest_fleet_price")).To(BeNumerically("~", 10*ceiling, 1e-9))
		Expect(sizingGauge("karpenter_linode_sizing_expected_fleet_price")).To(BeNumerically("~", 10*ceiling, 1e-9))
	})

	It("offers one of the plans of a price alone when core would fill NodeClaims to a shape neither holds well", func() {
		// g6-dedicated-32 (32 vCPUs, 64 GB) and g6-standard-20 (20 vCPUs, 96 GB) both cost
		// $0.864/h. Offered both, core puts three of the 24Gi pods on a NodeClaim, which only
		// g6-standard-20 holds and which leaves no room for a 4-CPU pod. g6-dedicated-32 alone
		// takes two 24Gi pods and four 4-CPU pods a node: eight nodes, $6.912/h, where the
		// cheapest fleet with both offered was six g6-dedicated-48, $7.776/h.
		pods := append(pendingPods("memory", 16, "6", "24Gi"), pendingPods("cpu", 28, "4", "2Gi")...)
		apply(pods)
		instanceTypes := offered()
		Expect(available(instanceTypes["g6-dedicated-32"])).To(BeTrue())
		Expect(available(instanceTypes["g6-standard-20"])).To(BeFalse())
		Expect(available(instanceTypes["g6-dedicated-48"])).To(BeFalse())

		result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pods...)
		Expect(result.Bindings).To(HaveLen(len(pods)))
		plans := nodeClaimPlans(result.Bindings)
		Expect(plans).To(HaveLen(8))
		for nodeClaim, plan := range plans {
			Expect(plan).To(Equal("g6-dedicated-32"), nodeClaim)
		}
	})

	It("stops counting pods once core placed them on a NodeClaim that exists", func() {
		pods := pendingPods("web", 30, "1", "1Gi")
		result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pods...)
		Expect(result.Bindings).To(HaveLen(30))
		// Still pending (nothing binds them here), but on their way: every plan is offered again.
		Expect(offered()["g6-dedicated-64"].Offerings.Available()).ToNot(BeEmpty())
	})

	It("counts them again once their nodes have initialized: kube-scheduler found no room there", func() {
		pods := pendingPods("web", 30, "1", "1Gi")
		result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pods...)
		Expect(result.Bindings).To(HaveLen(30))
		for _, binding := range result.Bindings {
			ExpectMakeNodesInitialized(ctx, env.Client, env.Clock, binding.Node)
			Expect(cluster.UpdateNode(ctx, ExpectExists(ctx, env.Client, binding.Node))).To(Succeed())
		}
		// Core places them again, on new nodes: sized as before, not on every plan.
		Expect(offered()["g6-dedicated-64"].Offerings.Available()).To(BeEmpty())
	})

	It("leaves a pod too big for this round's plans to the next round, which launches it", func() {
		small := pendingPods("small", 60, "500m", "1Gi")
		big := pendingPods("big", 1, "40", "64Gi")
		first := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, append(small, big...)...)
		plans := launchedPlans(first.Bindings)
		Expect(plans).To(HaveLen(len(small)), "the small pods only")
		Expect(plans).ToNot(HaveKey(big[0].Name))
		for pod, plan := range plans {
			Expect(plan).To(HavePrefix("g6-standard-"), pod)
		}
		// More small pods keep arriving; the big one, which core could not place, still goes next.
		more := pendingPods("more", 30, "500m", "1Gi")
		second := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, more...)
		Expect(launchedPlans(second.Bindings)).To(HaveKeyWithValue(big[0].Name, "g6-dedicated-48"))
	})

	It("counts only the pods the NodePool can take", func() {
		nodePool.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		ExpectApplied(ctx, env.Client, nodePool)
		apply(pendingPods("untolerated", 30, "1", "1Gi"))
		apply(pendingPods("elsewhere", 30, "1", "1Gi", coretest.PodOptions{
			NodeSelector: map[string]string{karpv1.NodePoolLabelKey: "other"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		}))
		Expect(offered()["g6-dedicated-64"].Offerings.Available()).ToNot(BeEmpty())
	})

	It("counts the DaemonSets' requests on every node", func() {
		// Twelve one-CPU pods: four g6-standard-4 ($0.288) without DaemonSets. A DaemonSet asking
		// for 2 CPU on every node leaves a g6-standard-4 room for one pod only; then one
		// g6-dedicated-16 holds all twelve for $0.432, cheaper than anything smaller.
		apply(pendingPods("web", 12, "1", "1Gi"))
		Expect(available(offered()["g6-dedicated-16"])).To(BeFalse())
		ExpectApplied(ctx, env.Client, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
					}}}},
				},
			},
		})
		instanceTypes := offered()
		Expect(available(instanceTypes["g6-dedicated-16"])).To(BeTrue())
		Expect(available(instanceTypes["g6-standard-16"])).To(BeFalse())
	})

	Context("a burst its workload is still creating", func() {
		// Ninety one-CPU pods take thirty g6-standard-4 nodes at the cheapest: a large fleet, so
		// the policy allows plans that need fewer nodes for a little more. Ten such pods alone
		// take four nodes, and the cheapest plan.
		replicaSet := func(replicas int32) *appsv1.ReplicaSet {
			labels := map[string]string{"app": "web"}
			return &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To(replicas),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web"}}},
					},
				},
			}
		}
		ownedBy := func(owner *appsv1.ReplicaSet, pods []*corev1.Pod) []*corev1.Pod {
			for _, pod := range pods {
				pod.Labels = owner.Spec.Selector.MatchLabels
				pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
			}
			return pods
		}

		It("sizes the first pods for every replica to come, on plans that leave room for them", func() {
			rs := replicaSet(90)
			ExpectApplied(ctx, env.Client, rs)
			apply(ownedBy(rs, pendingPods("web", 10, "1", "1Gi")))
			// While the burst arrives only the ceiling's plans are offered: the NodeClaim that takes
			// these ten pods launches one with room for the next round's.
			prices := map[float64][]string{}
			for name, it := range offered() {
				if available(it) {
					prices[it.Offerings.Available().Cheapest().Price] = append(prices[it.Offerings.Available().Cheapest().Price], name)
				}
			}
			Expect(prices).To(HaveLen(1), "offered plans by price: %v", prices)
			for price, names := range prices {
				Expect(price).To(BeNumerically(">", offered()["g6-standard-4"].Offerings[0].Price), "%v", names)
			}
		})

		It("launches the ceiling's plan for a round's last NodeClaim, which the next round's pods fill", func() {
			rs := replicaSet(90)
			ExpectApplied(ctx, env.Client, rs)
			first := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, ownedBy(rs, pendingPods("first", 10, "1", "1Gi"))...)
			Expect(first.Bindings).To(HaveLen(10))
			// Ninety one-CPU pods: two g6-dedicated-48 at the ceiling, 47 pods each.
			Expect(launchedPlans(first.Bindings)).To(HaveEach("g6-dedicated-48"))
			var firstNodeClaim string
			for _, binding := range first.Bindings {
				firstNodeClaim = binding.NodeClaim.Name
			}
			second := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, ownedBy(rs, pendingPods("second", 80, "1", "1Gi"))...)
			// The first node, still starting, takes its ten pods again and 37 of the second round's.
			// Sized for its ten pods alone it would have been a g6-dedicated-16 with room for five.
			onFirst, newPlans := 0, map[string]int{}
			for _, binding := range second.Bindings {
				if binding.NodeClaim.Name == firstNodeClaim {
					onFirst++
				} else {
					newPlans[binding.Node.Labels[corev1.LabelInstanceTypeStable]]++
				}
			}
			Expect(onFirst).To(Equal(47))
			// The other 43, the burst's last, would keep the NodePool small on their own (fifteen
			// g6-standard-4, three pods each), but the burst made it large: they get the plans that
			// need fewest nodes, as the first round's did.
			Expect(newPlans).To(Equal(map[string]int{"g6-dedicated-48": 43}))
		})

		It("launches a big pod's plan for the big pod only, not for the round's small pods beside it", func() {
			// Forty one-CPU pods take fourteen g6-standard-4 at the cheapest: the NodePool stays
			// small. A 40-CPU pod beside them needs a g6-dedicated-48, in a later round.
			rs := replicaSet(40)
			ExpectApplied(ctx, env.Client, rs)
			big := pendingPods("big", 1, "40", "64Gi")
			first := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, append(ownedBy(rs, pendingPods("first", 10, "1", "1Gi")), big...)...)
			Expect(launchedPlans(first.Bindings)).ToNot(HaveKey(big[0].Name))

			// The next round's ceiling is the big pod's plan; with pods still to come, the round's
			// small pods that the big pod's node has no room for are sized as the burst's small
			// pods are, not at the big pod's plan.
			second := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, ownedBy(rs, pendingPods("second", 20, "1", "1Gi"))...)
			Expect(launchedPlans(second.Bindings)).To(HaveKeyWithValue(big[0].Name, "g6-dedicated-48"))
			nodeClaims := nodeClaimPlans(second.Bindings)
			large := 0
			for _, plan := range nodeClaims {
				if plan == "g6-dedicated-48" {
					large++
				}
			}
			Expect(large).To(Equal(1), "plans by NodeClaim: %v", nodeClaims)
		})

		It("launches a big pod's plan for the big pod only when the round's fleet is cheapest with it", func() {
			// Forty-four half-CPU pods and a 40-CPU pod cost the same whether the big pod waits for
			// a round of its own (four g6-standard-6, then its g6-dedicated-48) or takes its plan
			// now with fifteen small pods beside it and the rest on a g6-standard-16: the round takes
			// the big pod's plan, and the small pods its node has no room for still get the burst's
			// own size.
			rs := replicaSet(44)
			ExpectApplied(ctx, env.Client, rs)
			big := pendingPods("big", 1, "40", "64Gi")
			result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, append(ownedBy(rs, pendingPods("small", 20, "500m", "1Gi")), big...)...)
			Expect(launchedPlans(result.Bindings)).To(HaveKeyWithValue(big[0].Name, "g6-dedicated-48"))
			nodeClaims := nodeClaimPlans(result.Bindings)
			// Fifteen fit beside the big pod; the other five go to a plan the small pods' own
			// ceiling allows.
			Expect(nodeClaims).To(HaveLen(2))
			Expect(slices.Collect(maps.Values(nodeClaims))).To(ConsistOf("g6-dedicated-48", "g6-standard-6"))
		})

		It("counts no room on a node that has initialized: kube-scheduler found none there", func() {
			rs := replicaSet(90)
			ExpectApplied(ctx, env.Client, rs)
			first := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, ownedBy(rs, pendingPods("first", 10, "1", "1Gi"))...)
			var node *corev1.Node
			for _, binding := range first.Bindings {
				node = binding.Node
			}
			apply(ownedBy(rs, pendingPods("second", 80, "1", "1Gi")))
			// Past the time a burst that made the NodePool large keeps it large, the rounds count
			// for themselves.
			emu.Clock.Step(11 * time.Minute)
			// Starting, the first node takes 37 of them: the other 43 get the cheapest plans.
			Expect(available(offered()["g6-dedicated-16"])).To(BeFalse())
			ExpectMakeNodesInitialized(ctx, env.Client, env.Clock, node)
			Expect(cluster.UpdateNode(ctx, ExpectExists(ctx, env.Client, node))).To(Succeed())
			// All 80 need new nodes, too many for the cheapest plans in a NodePool that stays small.
			Expect(available(offered()["g6-dedicated-16"])).To(BeTrue())
		})

		It("counts the pods kube-scheduler has yet to try like the pending ones", func() {
			rs := replicaSet(90)
			ExpectApplied(ctx, env.Client, rs)
			// The ReplicaSet has created all ninety pods, and kube-scheduler has tried ten.
			awaiting := ownedBy(rs, pendingPods("awaiting", 80, "1", "1Gi"))
			for _, pod := range awaiting {
				pod.Status.Conditions = nil
			}
			apply(awaiting)
			apply(ownedBy(rs, pendingPods("web", 10, "1", "1Gi")))
			instanceTypes := offered()
			Expect(available(instanceTypes["g6-standard-4"])).To(BeFalse())
			Expect(available(instanceTypes["g6-dedicated-48"])).To(BeTrue())
		})

		It("counts only the replicas not yet created", func() {
			rs := replicaSet(90)
			ExpectApplied(ctx, env.Client, rs)
			// Eighty pods already run elsewhere: ten pending ones are all that is left.
			running := ownedBy(rs, pendingPods("running", 80, "1", "1Gi"))
			for _, pod := range running {
				pod.Spec.NodeName = "elsewhere"
				pod.Status.Conditions = nil
			}
			apply(running)
			apply(ownedBy(rs, pendingPods("web", 10, "1", "1Gi")))
			instanceTypes := offered()
			Expect(available(instanceTypes["g6-dedicated-16"])).To(BeFalse())
			Expect(available(instanceTypes["g6-standard-4"])).To(BeTrue())
		})

		It("sizes pods without a workload for themselves", func() {
			apply(pendingPods("web", 10, "1", "1Gi"))
			Expect(available(offered()["g6-dedicated-16"])).To(BeFalse())
		})
	})

	It("offers enough plans for the NodePool's minValues", func() {
		nodePool.Spec.Template.Spec.Requirements = append(nodePool.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
			Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpExists, MinValues: ptr.To(10),
		})
		ExpectApplied(ctx, env.Client, nodePool)
		// Alone, thirty one-CPU pods would get the four plans up to g6-standard-4.
		apply(pendingPods("web", 30, "1", "1Gi"))
		offeredPlans := 0
		for _, it := range offered() {
			if available(it) && isStandardOrDedicated(it) {
				offeredPlans++
			}
		}
		Expect(offeredPlans).To(BeNumerically(">=", 10))
		Expect(available(offered()["g6-dedicated-64"])).To(BeFalse())
	})

	It("leaves a static NodePool's plans alone", func() {
		apply(pendingPods("web", 30, "1", "1Gi"))
		static := nodePool.DeepCopy()
		static.Spec.Replicas = ptr.To[int64](2)
		instanceTypes, err := cloudProvider.GetInstanceTypes(ctx, static)
		Expect(err).ToNot(HaveOccurred())
		for _, it := range instanceTypes {
			if it.Name == "g6-dedicated-64" {
				Expect(available(it)).To(BeTrue())
			}
		}
	})

	It("logs a ceiling first found by a caller with logging off", func() {
		apply(pendingPods("web", 30, "1", "1Gi"))
		_, err := cloudProvider.GetInstanceTypes(log.IntoContext(ctx, logr.Discard()), nodePool)
		Expect(err).ToNot(HaveOccurred())
		var lines []string
		recording := log.IntoContext(ctx, funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
		for range 2 {
			_, err = cloudProvider.GetInstanceTypes(recording, nodePool)
			Expect(err).ToNot(HaveOccurred())
		}
		Expect(lines).To(ConsistOf(ContainSubstring("sized the plans offered for pending pods")), "once, by the first caller that keeps logs")
	})

	It("answers repeated questions about unchanged demand with the same instance types", func() {
		apply(pendingPods("web", 30, "1", "1Gi"))
		first, err := cloudProvider.GetInstanceTypes(ctx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		second, err := cloudProvider.GetInstanceTypes(ctx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		Expect(&second[0]).To(BeIdenticalTo(&first[0]))
	})

	Context("core's contracts", func() {
		It("launches the plan a NodeClaim asks for even when that plan is not offered now", func() {
			apply(pendingPods("web", 30, "1", "1Gi"))
			Expect(available(offered()["g6-dedicated-48"])).To(BeFalse())
			nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name}},
				Spec: karpv1.NodeClaimSpec{
					NodeClassRef: nodePool.Spec.Template.Spec.NodeClassRef,
					Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
						{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-dedicated-48"}},
					},
				},
			})
			launched, err := cloudProvider.Create(ctx, nodeClaim)
			Expect(err).ToNot(HaveOccurred())
			Expect(launched.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-dedicated-48"))
		})

		It("keeps a node on a plan not offered now priceable for consolidation and free of drift", func() {
			pods := pendingPods("web", 1, "6", "6Gi")
			result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pods...)
			Expect(result.Bindings).To(HaveLen(len(pods)))
			var nodeClaim *karpv1.NodeClaim
			for _, binding := range result.Bindings {
				nodeClaim = binding.NodeClaim
			}
			plan := nodeClaim.Labels[corev1.LabelInstanceTypeStable]
			// Many more pods now wait for cheaper plans than the node's.
			apply(pendingPods("batch", 60, "100m", "100Mi"))
			instanceType := offered()[plan]
			Expect(available(instanceType)).To(BeFalse(), plan)

			// Consolidation prices a candidate with this core function.
			Expect(disruptionutils.ResolveOfferingPrice(nodeClaim.Labels, instanceType)).To(BeNumerically(">", 0))
			// Core's drift check looks at the plans after a launched NodeClaim's first hour.
			Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeLaunched).IsTrue()).To(BeTrue())
			env.Clock.Step(2 * time.Hour)
			ExpectObjectReconciled(ctx, env.Client, nodeclaimdisruption.NewController(env.Clock, env.Client, cloudProvider), nodeClaim)
			nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
			Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeDrifted)).To(BeNil())

			// The same check does find a plan missing from the list, had sizing dropped it.
			nodeClaim.Labels[corev1.LabelInstanceTypeStable] = "g6-standard-missing"
			ExpectApplied(ctx, env.Client, nodeClaim)
			ExpectObjectReconciled(ctx, env.Client, nodeclaimdisruption.NewController(env.Clock, env.Client, cloudProvider), nodeClaim)
			Expect(ExpectExists(ctx, env.Client, nodeClaim).StatusConditions().Get(karpv1.ConditionTypeDrifted).IsTrue()).To(BeTrue())
		})
	})
})

func isStandardOrDedicated(it *corecloudprovider.InstanceType) bool {
	class := it.Requirements.Get("karpenter.k8s.linode/instance-class")
	return class.Has("standard") || class.Has("dedicated")
}

func isGPU(it *corecloudprovider.InstanceType) bool {
	return it.Requirements.Get("karpenter.k8s.linode/instance-gpu-count").Any() != "0"
}
