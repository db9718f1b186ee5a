package cloudprovider_test

import (
	"fmt"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// A shared account: the cloud provider deletes or reboots the Linode a NodeClaim's provider ID
// names only when that Linode is a node of this cluster's pools launched for that NodeClaim.
var _ = Describe("Ownership", func() {
	// claiming is a stored NodeClaim of the NodePool that records the provider ID, as a NodeClaim
	// whose status someone wrote would.
	claiming := func(name, providerID string) *karpv1.NodeClaim {
		GinkgoHelper()
		nodeClaim := standaloneNodeClaim("g6-standard-2")
		if name != "" {
			nodeClaim.Name = name
		}
		ExpectApplied(ctx, env.Client, nodeClaim)
		nodeClaim.Status.ProviderID = providerID
		ExpectApplied(ctx, env.Client, nodeClaim)
		return ExpectExists(ctx, env.Client, nodeClaim)
	}
	// expectRefused checks that neither Delete nor Reboot touches the Linode, that Delete does not
	// call it gone, and that the NodeClaim says which Linode and why.
	expectRefused := func(nodeClaim *karpv1.NodeClaim, linode *linodego.Instance, why string) {
		GinkgoHelper()
		emu.ResetCounters()
		err := cloudProvider.Delete(ctx, nodeClaim)
		Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "got %v", err)
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse(), "a Linode that runs is not gone")
		Expect(nodeprovider.IsForeignNode(cloudProvider.Reboot(ctx, nodeClaim, "op-1"))).To(BeTrue())
		for _, call := range emu.Requests() {
			Expect(call.Method).To(Equal("GET"), "%s %s changed what is not this NodeClaim's", call.Method, call.Path)
		}
		Expect(emu.Client.GetInstance(ctx, linode.ID)).ToNot(BeNil())
		Expect(recorded.Calls(nodeprovider.ReasonLinodeNotOwned)).To(BeNumerically(">=", 1))
		Expect(recorded.Events()).To(ContainElement(And(
			HaveField("InvolvedObject", HaveField("Name", nodeClaim.Name)),
			HaveField("Message", And(ContainSubstring(fmt.Sprintf("Linode %d (%s)", linode.ID, linode.Label)), ContainSubstring(why))),
		)))
	}
	linodeOfPool := func(poolID int) *linodego.Instance {
		GinkgoHelper()
		emu.Tick()
		for _, in := range emu.Instances() {
			if in.LKEPoolID == poolID {
				linode, err := emu.Client.GetInstance(ctx, in.ID)
				Expect(err).ToNot(HaveOccurred())
				return linode
			}
		}
		Fail(fmt.Sprintf("node pool %d has no Linode", poolID))
		return nil
	}

	It("does not delete the Linode of another NodeClaim whose provider ID a NodeClaim records", func() {
		victim, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		Expect(err).ToNot(HaveOccurred())
		id, err := nodeprovider.ParseProviderID(victim.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		linode, err := emu.Client.GetInstance(ctx, id)
		Expect(err).ToNot(HaveOccurred())

		intruder := claiming("", victim.Status.ProviderID)
		expectRefused(intruder, linode, fmt.Sprintf("of another NodeClaim, not %s's", intruder.Name))
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(1))

		By("deleting the victim through its own NodeClaim")
		Expect(cloudProvider.Delete(ctx, victim)).To(Succeed())
		Expect(emu.Pools(lkeCluster.ID)).To(BeEmpty())
	})

	It("leaves the Linode when core terminates such a NodeClaim, though core drains the Node of this cluster that has its provider ID", func() {
		victim := standaloneNodeClaim("g6-standard-2")
		launched, err := cloudProvider.Create(ctx, victim)
		Expect(err).ToNot(HaveOccurred())
		node := coretest.Node(coretest.NodeOptions{ProviderID: launched.Status.ProviderID})
		ExpectApplied(ctx, env.Client, node)
		intruder := claiming("", launched.Status.ProviderID)
		intruder.Finalizers = []string{karpv1.TerminationFinalizer}
		ExpectApplied(ctx, env.Client, intruder)
		// Written as registered, as whoever may write its status can.
		intruder.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
		intruder.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
		ExpectApplied(ctx, env.Client, intruder)
		Expect(env.Client.Delete(ctx, intruder)).To(Succeed())

		// Core finds the Nodes of a NodeClaim by provider ID and deletes them first; the provider
		// sees only the Linode.
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtrl, intruder)
		ExpectNotFound(ctx, env.Client, node)
		Expect(ExpectObjectReconcileFailed(ctx, env.Client, lifecycleCtrl, intruder)).To(MatchError(ContainSubstring("not proven ours")))
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(1))
		Expect(ExpectExists(ctx, env.Client, intruder).DeletionTimestamp.IsZero()).To(BeFalse(), "it waits in termination")
		ExpectFinalizersRemoved(ctx, env.Client, intruder)
	})

	DescribeTable("does not delete a Linode that is not one of this cluster's pools' nodes, however its NodeClaim tag reads",
		func(linode func(nodeClaimName string) *linodego.Instance, why string) {
			name := "default-" + coretest.RandomName()[:5]
			target := linode(name)
			nodeClaim := claiming(name, nodeprovider.ProviderID(target.ID))
			_, err := cloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
			Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "got %v", err)
			expectRefused(nodeClaim, target, why)
			listed, err := cloudProvider.List(ctx)
			Expect(err).ToNot(HaveOccurred())
			Expect(listed).To(BeEmpty())
		},
		Entry("a node of the cluster's pool that Karpenter did not launch", func(string) *linodego.Instance {
			pool, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
			Expect(err).ToNot(HaveOccurred())
			return linodeOfPool(pool.ID)
		}, "carries no tag of ours"),
		Entry("a node of the cluster's pool that another cluster's Karpenter tagged", func(name string) *linodego.Instance {
			pool, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2",
				Tags: []string{nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag(name)}})
			Expect(err).ToNot(HaveOccurred())
			return linodeOfPool(pool.ID)
		}, "another cluster's ownership tag"),
		Entry("another LKE cluster's Karpenter node", func(name string) *linodego.Instance {
			linode, err := emu.LKEModeNode(ctx, "lke-neighbour", name)
			Expect(err).ToNot(HaveOccurred())
			return linode
		}, "not of LKE cluster"),
		Entry("an instance-mode cluster's Linode", func(name string) *linodego.Instance {
			linode, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Label: name,
				Tags: []string{nodeprovider.ClusterTag("6a1f0c2e-5b7d-4e8a-9c3f-0d2b4e6f8a1c"), nodeprovider.NodeClaimTag(name)}})
			Expect(err).ToNot(HaveOccurred())
			return linode
		}, "a plain Linode"),
	)
})
