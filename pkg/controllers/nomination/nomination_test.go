package nomination_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
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
	It("binds the pod only its node can hold there, before the small pods kube-scheduler tries first", func() {
		node, nodeClaim := startingNode("4")
		// The small pods planned for other nodes reach kube-scheduler first: without the
		// nomination it would bind them to the first node up, and the big pod would go pending
		// again for core to launch another node as large.
		small := pendingPods(2, "1")
		big := pendingPods(1, "3")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: big, "next": small})

		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(big, node.Name)
		expectNominated(small, "")

		nodeUp(node)
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, big[0]).Spec.NodeName).To(Equal(node.Name))
		}).WithTimeout(time.Minute).Should(Succeed())
	})
	It("nominates no pod another node or launching NodeClaim as large could hold: kube-scheduler binds it where it fits", func() {
		node, nodeClaim := startingNode("4")
		twin, twinClaim := startingNode("4")
		launching := launchingNodeClaim("4")
		// Like pods: whichever takes another's room leaves its own as large.
		onNode, onTwin := pendingPods(1, "3"), pendingPods(1, "3")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: onNode, twinClaim.Name: onTwin})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		ExpectObjectReconciled(ctx, env.Client, controller, twin)
		expectNominated(onNode, "")
		expectNominated(onTwin, "")

		// With the twin and the launching NodeClaim gone, and a smaller one launching instead, no
		// other node holds the node's pod.
		ExpectDeleted(ctx, env.Client, twin, twinClaim, launching)
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(twin), &corev1.Node{})).NotTo(Succeed())
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(twinClaim), &karpv1.NodeClaim{})).NotTo(Succeed())
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(launching), &karpv1.NodeClaim{})).NotTo(Succeed())
		}).Should(Succeed())
		launchingNodeClaim("2")
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(onNode, node.Name)
		expectNominated(onTwin, "")
	})
	It("binds a pod that smaller pods could displace where core planned it, leaving the smaller ones free", func() {
		node, nodeClaim := startingNode("4")
		twin := launchingNodeClaim("4")
		// Each NodeClaim is planned full: a 3-CPU pod and a 1-CPU one. kube-scheduler tries the
		// small pods first; without the nominations both would take the first node up, and its
		// 3-CPU pod would find 2 CPUs left there and 1 on the twin.
		small := pendingPods(2, "1")
		big := pendingPods(2, "3")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: {big[0], small[0]}, twin.Name: {big[1], small[1]}})

		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(big[:1], node.Name)
		expectNominated(small, "")

		nodeUp(node)
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, big[0]).Spec.NodeName).To(Equal(node.Name))
		}).WithTimeout(time.Minute).Should(Succeed())
	})
	DescribeTable("nominates a pod planned beside a twin only if a pod planned elsewhere, which the node would take, asks for less of a resource",
		func(elsewhereCPU string, elsewhereSelects map[string]string, nominated bool) {
			node, nodeClaim := startingNode("4")
			twin := launchingNodeClaim("4")
			elsewhere := pendingPods(1, elsewhereCPU, elsewhereSelects)
			planned := pendingPods(1, "3")
			cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned, twin.Name: elsewhere})
			ExpectObjectReconciled(ctx, env.Client, controller, node)
			expectNominated(planned, lo.Ternary(nominated, node.Name, ""))
		},
		Entry("a smaller pod", "1", map[string]string{}, true),
		Entry("a pod as large, as in a burst of like pods", "3", map[string]string{}, false),
		Entry("a larger pod", "4", map[string]string{}, false),
		Entry("a smaller pod that selects other nodes", "1", map[string]string{poolLabel: "other"}, false),
	)
	DescribeTable("nominates a pod that no other node it could go to has the resources for",
		func(other func(*corev1.Node), nominated bool) {
			node, nodeClaim := startingNode("4")
			startingNode("4", other)
			planned := pendingPods(1, "3", ownPool)
			cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
			ExpectObjectReconciled(ctx, env.Client, controller, node)
			expectNominated(planned, lo.Ternary(nominated, node.Name, ""))
		},
		Entry("another node of the labels the pod selects, as large", func(n *corev1.Node) {
			n.Labels[poolLabel] = ownPool[poolLabel]
		}, false),
		Entry("another node as large, of other labels", func(n *corev1.Node) {
			n.Labels[poolLabel] = "other"
		}, true),
		Entry("another node as large, tainted", func(n *corev1.Node) {
			n.Labels[poolLabel] = ownPool[poolLabel]
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule})
		}, true),
	)
	It("nominates no pod on a node alone among those it could go to: no other node's pods can take its room", func() {
		node, nodeClaim := startingNode("2")
		startingNode("8", func(n *corev1.Node) { n.Labels[poolLabel] = "other" })
		// Neither the other node nor the rest of the burst has the pool the pod selects.
		planned := pendingPods(1, "1", map[string]string{poolLabel: "solo"})
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, "")
	})
	It("nominates no pod before the node is Ready: until then core may place a later round's pods there", func() {
		node, nodeClaim := startingNode("2")
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
		node, nodeClaim := startingNode("4")
		planned := pendingPods(1, "3")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)

		// Another node coming up makes kube-scheduler try the pod: that node is too small, the
		// pod's own cannot take it yet, and kube-scheduler clears the nomination.
		small, _ := startingNode("2")
		nodeUp(small)
		Eventually(func(g Gomega) {
			g.Expect(ExpectExists(ctx, env.Client, planned[0]).Status.NominatedNodeName).To(BeEmpty())
		}).WithTimeout(time.Minute).Should(Succeed())
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		expectNominated(planned, node.Name)
	})
	It("races kube-scheduler for a node that came up Ready at once, nominating each pod once", func() {
		node, nodeClaim := startingNode("2")
		nodeUp(node)
		stored := node.DeepCopy()
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now())}}
		Expect(env.Client.Status().Patch(ctx, node, client.MergeFrom(stored))).To(Succeed())
		// A label the node lacks keeps kube-scheduler from binding the pod there.
		planned := pendingPods(1, "1", ownPool)
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
		node, nodeClaim := startingNode("2")
		// Core counts no nominated pod on the node, and may place a later round's pods there too.
		first, later := pendingPods(1, "1500m"), pendingPods(1, "1")
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: first})
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: later})
		ExpectObjectReconciled(ctx, env.Client, controller, node)

		expectNominated(first, node.Name)
		expectNominated(later, "")
	})
	DescribeTable("leaves alone",
		func(situation func(*corev1.Node, *karpv1.NodeClaim, []*corev1.Pod), want string) {
			node, nodeClaim := startingNode("4")
			// The node lacks the label the pod selects: kube-scheduler leaves it pending whatever
			// happens to the node.
			planned := pendingPods(1, "3", ownPool)
			situation(node, nodeClaim, planned)
			cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned})
			ExpectObjectReconciled(ctx, env.Client, controller, node)
			expectNominated(planned, want)
		},
		Entry("a pod nominated elsewhere", func(_ *corev1.Node, _ *karpv1.NodeClaim, pods []*corev1.Pod) {
			// As preemption nominates a node; kube-scheduler keeps it until it next tries the pod,
			// which no event here prompts.
			stored := pods[0].DeepCopy()
			pods[0].Status.NominatedNodeName = "preempting-there"
			Expect(env.Client.Status().Patch(ctx, pods[0], client.MergeFrom(stored))).To(Succeed())
		}, "preempting-there"),
		Entry("a node that has been taking pods for a while", func(node *corev1.Node, _ *karpv1.NodeClaim, _ []*corev1.Pod) {
			nodeUp(node)
		}, ""),
		Entry("a node core has initialized", func(_ *corev1.Node, nodeClaim *karpv1.NodeClaim, _ []*corev1.Pod) {
			nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeInitialized)
			ExpectApplied(ctx, env.Client, nodeClaim)
			Eventually(func(g Gomega) {
				g.Expect(ExpectExists(ctx, env.Client, nodeClaim).StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue())
			}).Should(Succeed())
		}, ""),
	)
})

// poolLabel marks the pool of nodes a pod selects; ownPool is the pool the rest of the burst
// belongs to and the pods of most specs select, which their starting nodes lack.
const poolLabel = "example.com/pool"

var ownPool = map[string]string{poolLabel: "mine"}

func expectNominated(pods []*corev1.Pod, nodeName string) {
	GinkgoHelper()
	for _, pod := range pods {
		Expect(ExpectExists(ctx, env.Client, pod).Status.NominatedNodeName).To(Equal(nodeName), "pod %s", pod.Name)
	}
}

// startingNode is a launched NodeClaim and its Node, Ready and with cpu allocatable. It
// cannot take pods yet: kube-apiserver taints a Node registered without a Ready condition
// not-ready, and nothing here lifts the taint, as the node lifecycle controller would.
func startingNode(cpu string, modify ...func(*corev1.Node)) (*corev1.Node, *karpv1.NodeClaim) {
	GinkgoHelper()
	providerID := fmt.Sprintf("linode://%d", rand.IntnRange(1, 1<<30))
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}
	// Launched, not registered yet by core: no node name.
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{Status: karpv1.NodeClaimStatus{ProviderID: providerID, Allocatable: allocatable}})
	node := coretest.Node(coretest.NodeOptions{ProviderID: providerID, Allocatable: allocatable})
	for _, m := range modify {
		m(node)
	}
	ExpectApplied(ctx, env.Client, nodeClaim, node)
	Expect(ExpectExists(ctx, env.Client, node).Spec.Taints).To(ContainElement(HaveField("Key", corev1.TaintNodeNotReady)))
	expectCached(nodeClaim)
	return ExpectExists(ctx, env.Client, node), nodeClaim
}

// launchingNodeClaim is a NodeClaim launched with cpu allocatable whose node has not registered.
func launchingNodeClaim(cpu string, labels ...map[string]string) *karpv1.NodeClaim {
	GinkgoHelper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: lo.Assign(labels...)}, Status: karpv1.NodeClaimStatus{
		ProviderID:  fmt.Sprintf("linode://%d", rand.IntnRange(1, 1<<30)),
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
	}})
	ExpectApplied(ctx, env.Client, nodeClaim)
	expectCached(nodeClaim)
	return nodeClaim
}

// expectCached waits until the cache the controller reads NodeClaims through has the NodeClaim.
func expectCached(nodeClaim *karpv1.NodeClaim) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		list := &karpv1.NodeClaimList{}
		g.Expect(env.Client.List(ctx, list, client.MatchingFields{"status.providerID": nodeClaim.Status.ProviderID})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
	}).Should(Succeed())
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
