package adoption_test

import (
	"fmt"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var _ = Describe("Adoption", func() {
	It("hands a recycled pool's new node to a new NodeClaim, which core registers without launching another pool", func() {
		original, oldNode := runningNodeClaim()
		replacement := recycle(oldNode)
		// The cloud controller manager removes the Node of a Linode that is gone.
		ExpectFinalizersRemoved(ctx, env.Client, oldNode)
		ExpectDeleted(ctx, env.Client, oldNode)
		newNode := kubeletRegisters(replacement)
		Expect(newNode.Labels).To(HaveKeyWithValue(v1.LabelNodeClaim, original.Name), "the pool's label still names the NodeClaim it was launched for")

		ExpectObjectReconciled(ctx, env.Client, controller, newNode)
		ExpectObjectReconciled(ctx, env.Client, controller, newNode)
		claims := nodeClaims()
		Expect(claims).To(HaveLen(2), "exactly one NodeClaim adopts the node")
		adopting, _ := lo.Find(claims, func(nc karpv1.NodeClaim) bool { return nc.Name != original.Name })
		Expect(adopting.Labels).To(HaveKeyWithValue(karpv1.NodePoolLabelKey, nodePool.Name))
		Expect(adopting.Spec.Taints).To(ConsistOf(dedicated))
		Expect(adopting.Spec.StartupTaints).To(BeEmpty())
		Expect(recorder.Calls("AdoptedNode")).To(Equal(1))

		// Core launches the new NodeClaim: the pool is found by its tag, and its Node registered.
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, &adopting)
		Expect(ExpectExists(ctx, env.Client, &adopting).Status.ProviderID).To(Equal(newNode.Spec.ProviderID))
		initialize(&adopting, newNode)
		registered := ExpectExists(ctx, env.Client, newNode)
		Expect(registered.Labels).To(HaveKeyWithValue(karpv1.NodeRegisteredLabelKey, "true"))
		Expect(registered.Finalizers).To(ContainElement(karpv1.TerminationFinalizer), "core drains the node when it goes")
		Expect(registered.Spec.Taints).ToNot(ContainElement(agentNotReady), "a running node got a start-up taint back")

		// Core lets the old NodeClaim go with its Linode, which deletes nothing.
		ExpectSingletonReconciled(ctx, nodeClaimGC)
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, original)
		ExpectNotFound(ctx, env.Client, original)
		Expect(nodeClaims()).To(ConsistOf(HaveField("Name", adopting.Name)))
		pools := emu.Pools(lkeCluster.ID)
		Expect(pools).To(HaveLen(1))
		Expect(pools[0].Tags).To(ContainElement(nodeprovider.NodeClaimTag(adopting.Name)))
		Expect(emu.Instances()).To(ConsistOf(HaveField("ID", replacement.ID)))
	})

	It("gives a NodeClaim back to a node whose NodeClaim was lost", func() {
		lost, node := runningNodeClaim()
		ExpectFinalizersRemoved(ctx, env.Client, lost)
		ExpectDeleted(ctx, env.Client, lost)
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		claims := nodeClaims()
		Expect(claims).To(HaveLen(1))
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, &claims[0])
		Expect(ExpectExists(ctx, env.Client, &claims[0]).Status.ProviderID).To(Equal(node.Spec.ProviderID))
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(1))
	})

	It("leaves a node whose NodeClaim is still launching to core", func() {
		launching, node := runningNodeClaim()
		launching.Status.ProviderID = ""
		ExpectApplied(ctx, env.Client, launching)
		result := ExpectObjectReconciled(ctx, env.Client, controller, node)
		Expect(result.RequeueAfter).ToNot(BeZero())
		Expect(nodeClaims()).To(HaveLen(1))
		Expect(recorder.Calls("AdoptedNode")).To(BeZero())
	})

	It("adopts nothing for a NodePool that is gone", func() {
		lost, node := runningNodeClaim()
		ExpectFinalizersRemoved(ctx, env.Client, lost)
		ExpectDeleted(ctx, env.Client, lost)
		ExpectDeleted(ctx, env.Client, nodePool)
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		Expect(nodeClaims()).To(BeEmpty())
	})

	DescribeTable("adopts no Node of a Linode that is not one of this cluster's pools' nodes, and says why on the Node",
		func(tags []string, why string) {
			// A Node labelled with a NodePool by hand, on a Linode of the cluster's pool that
			// Karpenter did not launch, or that another cluster's Karpenter tagged.
			pool, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: tags})
			Expect(err).ToNot(HaveOccurred())
			emu.Tick()
			linode, found := lo.Find(emu.Instances(), func(in emulator.InstanceInfo) bool { return in.LKEPoolID == pool.ID })
			Expect(found).To(BeTrue())
			node := kubeletRegisters(linode)
			node.Labels[karpv1.NodePoolLabelKey] = nodePool.Name
			ExpectApplied(ctx, env.Client, node)

			ExpectObjectReconciled(ctx, env.Client, controller, node)
			Expect(nodeClaims()).To(BeEmpty())
			after, err := emu.Client.GetLKENodePool(ctx, lkeCluster.ID, pool.ID)
			Expect(err).ToNot(HaveOccurred())
			Expect(after.Tags).To(Equal(pool.Tags), "the pool was handed to a NodeClaim")
			Expect(recorder.Events()).To(ContainElement(And(
				HaveField("Reason", nodeprovider.ReasonLinodeNotOwned),
				HaveField("InvolvedObject", HaveField("Name", node.Name)),
				HaveField("Message", And(ContainSubstring(fmt.Sprintf("Linode %d (%s)", linode.ID, linode.Label)), ContainSubstring(why))),
			)))
		},
		Entry("a pool Karpenter did not launch", nil, "carries no tag of ours"),
		Entry("a pool another cluster's Karpenter tagged", []string{nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("theirs")}, "another cluster's ownership tag"),
	)

	It("ignores nodes that are not Karpenter's", func() {
		_, node := runningNodeClaim()
		stranger := node.DeepCopy()
		stranger.ResourceVersion, stranger.UID, stranger.Name = "", "", "hand-made"
		stranger.Labels = map[string]string{corev1.LabelHostname: "hand-made"}
		stranger.Spec.ProviderID = nodeprovider.ProviderID(12345)
		ExpectApplied(ctx, env.Client, stranger)
		ExpectObjectReconciled(ctx, env.Client, controller, stranger)
		Expect(nodeClaims()).To(HaveLen(1))
	})
})
