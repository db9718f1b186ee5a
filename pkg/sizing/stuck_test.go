package sizing_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
)

// everyPlanOffered expects every standard and dedicated plan of instanceTypes available.
func everyPlanOffered(instanceTypes map[string]*corecloudprovider.InstanceType) {
	GinkgoHelper()
	for name, it := range instanceTypes {
		if isStandardOrDedicated(it) {
			Expect(available(it)).To(BeTrue(), name)
		}
	}
}

var _ = Describe("Pods core does not place", func() {
	It("does not count a pod core refuses to provision for", func() {
		// Core ignores a pod whose required node affinity selects nodes by field; the simulation
		// reads only match expressions, and took it for a pod of three CPUs.
		pinned := pendingPods("pinned", 1, "3", "3Gi")[0]
		pinned.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"gone"}},
			}}},
		}}}
		result := ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, pinned)
		Expect(result.Bindings).To(BeEmpty(), "core refuses the pod")
		everyPlanOffered(offered())
	})

	It("stops counting a pod core has failed to place for a few rounds, and offers consolidation every plan beside it", func() {
		// The fleet: a node launched for a pod of twelve CPUs, which has since given way to a pod
		// of two.
		big := pendingPods("big", 1, "12", "12Gi")
		launched := ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, big...)
		Expect(launched.Bindings).To(HaveLen(1))
		var node *corev1.Node
		for _, binding := range launched.Bindings {
			node = binding.Node
		}
		ExpectMakeNodesInitialized(ctx, env.Client, env.Clock, node)
		Expect(cluster.UpdateNode(ctx, ExpectExists(ctx, env.Client, node))).To(Succeed())
		nodePrice := offered()[node.Labels[corev1.LabelInstanceTypeStable]].Offerings.Available().Cheapest().Price
		ExpectDeleted(ctx, env.Client, big[0])
		small := pendingPods("small", 1, "2", "2Gi")[0]
		ExpectApplied(ctx, env.Client, small)
		ExpectManualBinding(ctx, env.Client, small, node)
		small = ExpectExists(ctx, env.Client, small)
		Expect(cluster.UpdatePod(ctx, small)).To(Succeed())

		// Beside it, a small pod that no plan holds: it wants to run with pods that do not exist.
		// The simulation does not read pod affinity, and sizes for it.
		stuck := pendingPods("stuck", 1, "100m", "128Mi", coretest.PodOptions{PodRequirements: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "absent"}},
			TopologyKey:   corev1.LabelHostname,
		}}})[0]
		Expect(ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, stuck).Bindings).To(BeEmpty(), "core cannot place it")

		// Core's consolidation simulates rescheduling the node's pods, with the pending ones, on
		// the plans the disruption controller is offered, and replaces the node with the cheapest
		// that holds them if it is cheaper than the node.
		disruptionCtx := injection.WithControllerName(ctx, "disruption")
		pods := []*corev1.Pod{small, stuck}
		scheduler, err := prov.NewScheduler(disruptionCtx, pods, nil, sets.New[types.UID](small.UID))
		Expect(err).ToNot(HaveOccurred())
		results, err := scheduler.Solve(disruptionCtx, pods)
		Expect(err).ToNot(HaveOccurred())
		var replacement string
		replacementPrice := nodePrice
		for _, nodeClaim := range results.NewNodeClaims {
			if len(nodeClaim.Pods) != 1 || nodeClaim.Pods[0].UID != small.UID {
				continue
			}
			for _, it := range nodeClaim.InstanceTypeOptions {
				if offerings := it.Offerings.Available().Compatible(nodeClaim.Requirements); len(offerings) > 0 && offerings.Cheapest().Price < replacementPrice {
					replacement, replacementPrice = it.Name, offerings.Cheapest().Price
				}
			}
		}
		Expect(replacement).ToNot(BeEmpty(), "a plan cheaper than the node's ($%.3f/h) holds its pod", nodePrice)

		// The provisioner is offered only the plans sized for the pending pod, not the
		// replacement; disruption is offered every plan.
		Expect(available(offered()[replacement])).To(BeFalse(), replacement)
		instanceTypes, err := cloudProvider.GetInstanceTypes(disruptionCtx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		byName := map[string]*corecloudprovider.InstanceType{}
		for _, it := range instanceTypes {
			byName[it.Name] = it
		}
		everyPlanOffered(byName)

		// A few rounds later the pod still waits; it no longer narrows what the provisioner is
		// offered either.
		env.Clock.Step(2 * time.Minute)
		emu.Clock.Step(2 * time.Minute)
		Expect(ExpectProvisionedNoBinding(ctx, env.Client, cluster, cloudProvider, prov, stuck).Bindings).To(BeEmpty())
		everyPlanOffered(offered())
	})
})
