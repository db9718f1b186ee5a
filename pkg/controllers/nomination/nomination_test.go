package nomination_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
)

var _ = Describe("Nomination", func() {
	It("binds the pods core planned for a node there, not the pods planned for a node still to come", func() {
		node, nodeClaim := startingNode()
		// The pods for the next node reach kube-scheduler first: without nominations it would bind
		// them to the first node up, and the pods planned there would go pending again.
		forNext := pendingPods(2, "1")
		planned := pendingPods(2, "1")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned, "next": forNext})

		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)
		expectNominated(forNext, "")

		nodeUp(node)
		for _, pod := range planned {
			Eventually(func(g Gomega) {
				g.Expect(ExpectExists(ctx, env.Client, pod).Spec.NodeName).To(Equal(node.Name))
			}).WithTimeout(time.Minute).Should(Succeed())
		}
		for _, pod := range forNext {
			Expect(ExpectExists(ctx, env.Client, pod).Spec.NodeName).To(BeEmpty())
		}
	})
	It("nominates no pod before the node is Ready: until then core may place a later round's pods there", func() {
		node, nodeClaim := startingNode()
		stored := node.DeepCopy()
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(clk.Now())}}
		Expect(env.Client.Status().Patch(ctx, node, client.MergeFrom(stored))).To(Succeed())
		planned := pendingPods(1, "1")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, "")

		stored = node.DeepCopy()
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now())}}
		Expect(env.Client.Status().Patch(ctx, node, client.MergeFrom(stored))).To(Succeed())
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)
	})
	It("nominates a pod again when kube-scheduler tried it before its node could take it", func() {
		node, nodeClaim := startingNode()
		planned := pendingPods(1, "1")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)

		// Another node coming up makes kube-scheduler try the pod: that node is full, the pod's own
		// cannot take it yet, and kube-scheduler clears the nomination.
		full, _ := startingNode()
		Expect(env.Client.Create(ctx, coretest.Pod(coretest.PodOptions{NodeName: full.Name, ResourceRequirements: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		}}))).To(Succeed())
		nodeUp(full)
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, planned[0]).Status.NominatedNodeName).To(BeEmpty())
		}).WithTimeout(time.Minute).Should(Succeed())
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)
	})
	It("races kube-scheduler for a node that came up Ready at once, nominating each pod once", func() {
		node, nodeClaim := startingNode()
		nodeUp(node)
		stored := node.DeepCopy()
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now())}}
		Expect(env.Client.Status().Patch(ctx, node, client.MergeFrom(stored))).To(Succeed())
		// A label the node lacks keeps kube-scheduler from binding the pod there.
		planned := pendingPods(1, "1", map[string]string{"example.com/pool": "elsewhere"})
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})

		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)
		// As kube-scheduler clears a nomination to a node that does not fit the pod.
		nominated := ExpectExists(ctx, env.Client, planned[0])
		beforeClearing := nominated.DeepCopy()
		nominated.Status.NominatedNodeName = ""
		Expect(env.Client.Status().Patch(ctx, nominated, client.MergeFrom(beforeClearing))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, planned[0]).Status.NominatedNodeName).To(BeEmpty())
		}).Should(Succeed())
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, "")
	})
	It("nominates no more pods than the node has room for", func() {
		node, nodeClaim := startingNode()
		// Core counts no nominated pod on the node, and may place a later round's pods there too.
		first, later := pendingPods(1, "1500m"), pendingPods(1, "1")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: first})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: later})
		ExpectObjectReconciled(ctx, env.Client, controller, node)

		expectNominated(first, node.Name)
		expectNominated(later, "")
	})
	It("leaves alone a pod nominated elsewhere, and nodes that can take pods or that core has initialized", func() {
		starting, startingClaim := startingNode()
		up, upClaim := startingNode()
		nodeUp(up)
		initialized, initializedClaim := startingNode()
		initializedClaim.StatusConditions().SetTrue(karpv1.ConditionTypeInitialized)
		ExpectApplied(ctx, env.Client, initializedClaim)
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, initializedClaim).StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue())
		}).Should(Succeed())
		// Too big for any of the nodes, or with a label none has: kube-scheduler leaves them pending.
		onUp, onInitialized := pendingPods(1, "1", map[string]string{"example.com/pool": "elsewhere"}), pendingPods(1, "3")
		// As preemption nominates a node; kube-scheduler keeps it until it next tries the pod, which
		// no event here prompts.
		elsewhere := pendingPods(1, "3")
		stored := elsewhere[0].DeepCopy()
		elsewhere[0].Status.NominatedNodeName = "preempting-there"
		Expect(env.Client.Status().Patch(ctx, elsewhere[0], client.MergeFrom(stored))).To(Succeed())
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{startingClaim.Name: elsewhere, upClaim.Name: onUp, initializedClaim.Name: onInitialized})

		for _, node := range []*corev1.Node{starting, up, initialized} {
			ExpectObjectReconciled(ctx, env.Client, controller, node)
		}
		expectNominated(elsewhere, "preempting-there")
		expectNominated(onUp, "")
		expectNominated(onInitialized, "")
	})
})

func expectNominated(pods []*corev1.Pod, nodeName string) {
	GinkgoHelper()
	for _, pod := range pods {
		Expect(ExpectExists(ctx, env.Client, pod).Status.NominatedNodeName).To(Equal(nodeName), "pod %s", pod.Name)
	}
}

// startingNode is a launched NodeClaim and its registered Node, Ready and with room for two 1-CPU
// pods. It cannot take pods yet: kube-apiserver taints a Node registered without a Ready condition
// not-ready, and nothing here lifts the taint, as the node lifecycle controller would.
func startingNode() (*corev1.Node, *karpv1.NodeClaim) {
	GinkgoHelper()
	providerID := fmt.Sprintf("linode://%d", rand.IntnRange(1, 1<<30))
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{Status: karpv1.NodeClaimStatus{ProviderID: providerID}})
	node := coretest.Node(coretest.NodeOptions{
		ProviderID:  providerID,
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")},
	})
	ExpectApplied(ctx, env.Client, nodeClaim, node)
	Expect(ExpectExists(ctx, env.Client, node).Spec.Taints).To(ContainElement(HaveField("Key", corev1.TaintNodeNotReady)))
	// The controller reads NodeClaims through the cache.
	Eventually(func(g Gomega) {
		list := &karpv1.NodeClaimList{}
		g.Expect(env.Client.List(ctx, list, client.MatchingFields{"status.providerID": providerID})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
	}).Should(Succeed())
	return ExpectExists(ctx, env.Client, node), nodeClaim
}

// nodeUp lifts the node's taints once it is Ready, as the node lifecycle controller does.
func nodeUp(node *corev1.Node) {
	GinkgoHelper()
	stored := node.DeepCopy()
	node.Spec.Taints = nil
	Expect(env.Client.Patch(ctx, node, client.MergeFrom(stored))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(ExpectExists(ctx, env.Client, node).Spec.Taints).To(BeEmpty())
	}).Should(Succeed())
}

// pendingPods creates n pods asking for cpu each (and selecting nodes by the labels given), one
// after another, and waits until kube-scheduler has found no node for them, as core's provisioner
// finds its pods.
func pendingPods(n int, cpu string, nodeSelector ...map[string]string) []*corev1.Pod {
	GinkgoHelper()
	var pods []*corev1.Pod
	for range n {
		pod := coretest.Pod(coretest.PodOptions{ResourceRequirements: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}})
		for _, selector := range nodeSelector {
			pod.Spec.NodeSelector = selector
		}
		// Created, not applied: applying writes the pod's status too, over kube-scheduler's.
		Expect(env.Client.Create(ctx, pod)).To(Succeed())
		pods = append(pods, pod)
	}
	for _, pod := range pods {
		Eventually(func(g Gomega) {
			stored := ExpectExists(ctx, env.Client, pod)
			g.Expect(stored.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodScheduled), HaveField("Reason", corev1.PodReasonUnschedulable))))
			pod.Status = stored.Status
			pod.ResourceVersion = stored.ResourceVersion
		}).WithTimeout(time.Minute).Should(Succeed())
	}
	return pods
}
