package instance_test

import (
	"fmt"
	"net/http"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

// One Linode account, shared with an LKE-mode cluster's Karpenter, other instance-mode clusters
// and machines of no cluster: the provider acts only on its own cluster's Linodes, and on a
// NodeClaim's behalf only on the Linode launched for it.
var _ = Describe("In an account shared with other clusters", func() {
	var nodeClass *v1.LinodeNodeClass
	BeforeEach(func() { nodeClass = readyNodeClass(v1.LinodeNodeClassSpec{}) })

	// recording stores the NodeClaim as recording the Linode, as a NodeClaim whose status someone
	// wrote would.
	recording := func(nodeClaim *karpv1.NodeClaim, linodeID int) *karpv1.NodeClaim {
		GinkgoHelper()
		nodeClaim.Status.ProviderID = nodeprovider.ProviderID(linodeID)
		ExpectApplied(ctx, env.Client, nodeClaim)
		return ExpectExists(ctx, env.Client, nodeClaim)
	}
	// expectUntouched checks that the provider neither shows the Linode as its node nor changes it
	// on the NodeClaim's behalf, nor calls it gone, and that the NodeClaim says which Linode and
	// why (once: the recorder dedupes the same refusal).
	expectUntouched := func(nodeClaim *karpv1.NodeClaim, linode *linodego.Instance, why string) {
		GinkgoHelper()
		emu.ResetCounters()
		_, err := cloud.Nodes.Get(ctx, nodeClaim.Status.ProviderID)
		Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "Get gave %v", err)
		nodes, err := cloud.Nodes.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(nodes).ToNot(ContainElement(HaveField("InstanceID", linode.ID)), "listed after Get read it")
		err = cloud.CloudProvider.Delete(ctx, nodeClaim)
		Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "Delete gave %v", err)
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse(), "a Linode that runs is not gone")
		Expect(nodeprovider.IsForeignNode(cloud.CloudProvider.Reboot(ctx, nodeClaim, "op-1"))).To(BeTrue())
		for _, request := range emu.Requests() {
			Expect(request.Method).To(Equal(http.MethodGet), "%s %s changed what is not this NodeClaim's", request.Method, request.Path)
		}
		Expect(emu.Client.GetInstance(ctx, linode.ID)).ToNot(BeNil())
		if why != "" {
			Expect(recorded()).To(ContainElement(And(
				HavePrefix("Warning "+nodeprovider.ReasonLinodeNotOwned),
				ContainSubstring(fmt.Sprintf("Linode %d (%s)", linode.ID, linode.Label)),
				ContainSubstring(why),
			)))
		}
	}

	It("never takes the LKE-mode cluster's Karpenter node for its own, even tagged with this cluster's tag and named by its NodeClaim", func() {
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		lkeNode, err := emu.LKEModeNode(ctx, "lke-neighbour", nodeClaim.Name)
		Expect(err).ToNot(HaveOccurred())
		Expect(lkeNode.Tags).To(ContainElement(nodeprovider.NodeClaimTag(nodeClaim.Name)), "enterprise pools give their Linodes their tags")
		expectUntouched(recording(nodeClaim, lkeNode.ID), lkeNode, "is a node of LKE cluster")

		By("tagging the LKE pool, and so its Linode, with this cluster's ownership tag")
		tags := append(lkeNode.Tags, cloud.Target.Cluster.OwnerTag())
		_, err = emu.Client.UpdateLKENodePool(ctx, emu.Instances()[0].LKEClusterID, emu.Instances()[0].LKEPoolID, linodego.LKENodePoolUpdateOptions{Tags: &tags})
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.Client.UpdateInstance(ctx, lkeNode.ID, linodego.InstanceUpdateOptions{Tags: &tags})
		Expect(err).ToNot(HaveOccurred())
		expectUntouched(nodeClaim, lkeNode, "")
	})

	DescribeTable("does not delete a Linode of another cluster or of none that a NodeClaim names",
		func(tags func(nodeClaimName string) []string, why string) {
			nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
			theirs, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Label: "theirs-" + nodeClaim.Name[:8], Tags: tags(nodeClaim.Name)})
			Expect(err).ToNot(HaveOccurred())
			expectUntouched(recording(nodeClaim, theirs.ID), theirs, why)
		},
		Entry("another instance-mode cluster's, tagged with the NodeClaim's name", func(name string) []string {
			return []string{nodeprovider.ClusterTag("3f6e1b2a-9c4d-4f7e-8a1b-2c3d4e5f6a7b"), nodeprovider.NodeClaimTag(name)}
		}, "another cluster's ownership tag"),
		Entry("an LKE-mode cluster's ownership tag on a plain Linode", func(name string) []string {
			return []string{nodeprovider.LKEClusterTag(4242), nodeprovider.NodeClaimTag(name)}
		}, "another cluster's ownership tag"),
		Entry("one with no tag of ours", func(string) []string { return []string{"database"} }, "neither this cluster's ownership tag"),
	)

	It("does not delete another NodeClaim's Linode whose provider ID a NodeClaim records", func() {
		victim := nodeClaimOf(nodeClass, "g6-standard-2")
		launchedVictim := launched(victim)
		id, err := nodeprovider.ParseProviderID(launchedVictim.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		linode, err := emu.Client.GetInstance(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		intruder := recording(nodeClaimOf(nodeClass, "g6-standard-2"), id)

		emu.ResetCounters()
		err = cloud.CloudProvider.Delete(ctx, intruder)
		Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "Delete gave %v", err)
		Expect(nodeprovider.IsForeignNode(cloud.CloudProvider.Reboot(ctx, intruder, "op-1"))).To(BeTrue())
		Expect(emu.Counters()).ToNot(HaveKey("DELETE " + instancesRoute + "/{linodeId}"))
		Expect(emu.Counters()).ToNot(HaveKey("POST " + instancesRoute + "/{linodeId}/reboot"))
		Expect(recorded()).To(ContainElement(And(
			HavePrefix("Warning "+nodeprovider.ReasonLinodeNotOwned),
			ContainSubstring(fmt.Sprintf("Linode %d (%s)", linode.ID, linode.Label)),
			ContainSubstring(fmt.Sprintf("the tag %s of another NodeClaim, not %s's", nodeprovider.NodeClaimTag(victim.Name), intruder.Name)),
		)))

		victim.Status.ProviderID = launchedVictim.Status.ProviderID
		Expect(cloud.CloudProvider.Delete(ctx, victim)).To(Succeed(), "its own NodeClaim deletes it")
		Expect(emu.Instances()).To(BeEmpty())
	})

	It("does not replace a NodeClaim for another NodeClaim's Linode that stays powered off", func() {
		nodes := ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceProviderOptions(instance.WithClock(emu.Clock))).Nodes.(*instance.Provider)
		controller := instance.NewOfflineController(env.Client, nodes, events.NewRecorder(recorder), emu.Clock, instance.OfflineToleration)
		victim := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id, err := nodeprovider.ParseProviderID(victim.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		intruder := recording(nodeClaimOf(nodeClass, "g6-standard-2"), id)

		Expect(emu.Client.ShutdownInstance(ctx, id)).To(Succeed())
		emu.Tick()
		emu.Clock.Step(nodeprovider.PollingListingAge)
		ExpectSingletonReconciled(ctx, controller)
		emu.Clock.Step(instance.OfflineToleration)
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, intruder).DeletionTimestamp.IsZero()).To(BeTrue(), "its Node is not drained for another's Linode")
		Expect(recorded()).To(ContainElement(And(HavePrefix("Warning "+nodeprovider.ReasonLinodeNotOwned), ContainSubstring(fmt.Sprintf("Linode %d", id)))))
	})
})
