package garbagecollection_test

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var _ = Describe("Garbage collection", func() {
	It("deletes a pool no NodeClaim owns once the grace period has passed", func() {
		orphan := pool(nodeprovider.LKEClusterTag(lkeCluster.ID), nodeprovider.NodeClaimTag("deleted-mid-launch"), nodeprovider.NodePoolTag("batch"))
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(garbagecollection.DefaultGracePeriod - time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(orphan), "a pool that may belong to a launch in progress is kept")

		clk.Step(2 * time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(BeEmpty())
		Expect(emu.Instances()).To(BeEmpty())
		ExpectMetricCounterValue(garbagecollection.NodesDeleted, 1, map[string]string{"nodepool": "batch"})
		Expect(recorder.Calls("GarbageCollected")).To(Equal(1), "each deletion is announced")
		Expect(recorder.Events()).To(ContainElement(HaveField("Message", ContainSubstring(fmt.Sprintf("Deleted LKE node pool %d", orphan)))))
	})

	It("keeps pools whose NodeClaim records their Linode or is still launching them", func() {
		registered := launchedPool("registered")
		launching := launchedPool("launching")
		ExpectApplied(ctx, env.Client, nodeClaim("registered", instanceOf(registered)), nodeClaim("launching", ""))
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(registered, launching))
	})

	It("keeps a pool whose NodeClaim records its Linode under another name", func() {
		// A NodeClaim's tag is the link while launching; afterwards its provider ID is.
		renamed := launchedPool("before-rename")
		ExpectApplied(ctx, env.Client, nodeClaim("after-rename", instanceOf(renamed)))
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(renamed))
	})

	It("never touches a pool without this cluster's ownership tag", func() {
		handMade := pool("team-a")
		otherCluster := pool(nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("theirs"))
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(handMade, otherCluster))
	})

	It("starts the grace period again for a pool that was adopted in between", func() {
		adopted := launchedPool("late")
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(garbagecollection.DefaultGracePeriod / 2)
		claim := nodeClaim("late", "")
		ExpectApplied(ctx, env.Client, claim)
		ExpectSingletonReconciled(ctx, gc)
		ExpectDeleted(ctx, env.Client, claim)
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(garbagecollection.DefaultGracePeriod / 2)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(adopted))
	})

	It("retries a failed delete on its next run", func() {
		orphan := launchedPool("gone")
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		emu.InjectFault(emulator.Fault{Method: http.MethodDelete, Route: "/lke/clusters/{clusterId}/pools/{poolId}", Sequence: []int{http.StatusInternalServerError}})
		Expect(ExpectSingletonReconcileFailed(ctx, gc)).To(HaveOccurred())
		Expect(poolIDs()).To(ConsistOf(orphan))
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(BeEmpty())
	})

	It("reads the listing core's garbage collection made within an interval, and lists no more", func() {
		launchedPool("listed")
		// Core's garbage collection lists every node through the same provider.
		_, err := nodes.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		emu.ResetCounters()
		clk.Step(garbagecollection.DefaultInterval - time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(emu.Counters()).ToNot(HaveKey("GET /lke/clusters/{clusterId}/pools"))
		clk.Step(2 * time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(emu.Counters()).To(HaveKeyWithValue("GET /lke/clusters/{clusterId}/pools", 1))
	})

	It("deletes nothing when the pools cannot be listed", func() {
		launchedPool("unknown")
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/lke/clusters/{clusterId}/pools", Sequence: []int{http.StatusServiceUnavailable}})
		Expect(ExpectSingletonReconcileFailed(ctx, gc)).To(HaveOccurred())
		Expect(poolIDs()).To(HaveLen(1))
	})

	It("deletes nothing when the NodeClaims cannot be listed", func() {
		launchedPool("lost")
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		denied := gcRole.DeepCopy()
		denied.Rules = denied.Rules[1:]
		ExpectApplied(ctx, env.Client, denied)
		Eventually(func() error { return gcClient.List(ctx, &karpv1.NodeClaimList{}) }).Should(MatchError(ContainSubstring("forbidden")))
		Expect(ExpectSingletonReconcileFailed(ctx, gc)).To(MatchError(ContainSubstring("listing NodeClaims")))
		Expect(poolIDs()).To(HaveLen(1))
		Expect(recorder.Calls("GarbageCollected")).To(BeZero())
	})

	It("keeps an unowned node that backs a registered Node running pods, and deletes it once they are gone", func() {
		orphan := launchedPool("lost-in-a-restore")
		node := registeredNode(orphan)
		workload := podOn(node, nil)
		daemon := podOn(node, &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "d4e5", Controller: lo.ToPtr(true)})
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(orphan), "a node running pods was deleted undrained")

		ExpectDeleted(ctx, env.Client, workload)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(BeEmpty(), "a node running only a DaemonSet's pod is not kept")
		ExpectDeleted(ctx, env.Client, daemon, node)
	})

	It("deletes at most a few unowned nodes per run, and comes back for the rest soon", func() {
		gc = garbagecollection.NewController(gcClient, recorder, nodes, nodes.OwnershipTag(), garbagecollection.WithClock(clk), garbagecollection.WithMaxDeletionsPerRun(2))
		for _, name := range []string{"a", "b", "c"} {
			launchedPool("lost-" + name)
		}
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		result := ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(HaveLen(1))
		Expect(result.RequeueAfter).To(BeNumerically("<", garbagecollection.DefaultInterval))
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(BeEmpty())
		Expect(recorder.Calls("GarbageCollected")).To(Equal(3))
	})
})

// registeredNode is the Node the pool's Linode registered.
func registeredNode(poolID int) *corev1.Node {
	GinkgoHelper()
	node := coretest.Node(coretest.NodeOptions{ProviderID: instanceOf(poolID)})
	ExpectApplied(ctx, env.Client, node)
	return node
}

// podOn is a pod bound to the node, owned by owner when given.
func podOn(node *corev1.Node, owner *metav1.OwnerReference) *corev1.Pod {
	GinkgoHelper()
	pod := coretest.Pod(coretest.PodOptions{NodeName: node.Name})
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	ExpectApplied(ctx, env.Client, pod)
	return pod
}
