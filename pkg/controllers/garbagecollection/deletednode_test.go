package garbagecollection_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

var _ = Describe("A deleted Node's Linode", func() {
	var deletedNodes *garbagecollection.DeletedNodeController
	BeforeEach(func() {
		deletedNodes = garbagecollection.NewDeletedNodeController(gcClient, gcClient, recorder, nodes, nodes.OwnershipTag())
	})
	// nodeDeleted runs the controller as the deletion of the Node with the provider ID makes it run.
	nodeDeleted := func(providerID string) {
		GinkgoHelper()
		_, err := deletedNodes.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: providerID}})
		Expect(err).ToNot(HaveOccurred())
	}

	It("is deleted at once when no NodeClaim owns it, as when NodeClaims were lost and their Nodes drained", func() {
		orphan := pool(nodeprovider.LKEClusterTag(lkeCluster.ID), nodeprovider.NodeClaimTag("lost-in-a-restore"), nodeprovider.NodePoolTag("restored"))
		kept := launchedPool("still-here")
		ExpectApplied(ctx, env.Client, nodeClaim("still-here", instanceOf(kept)))
		nodeDeleted(instanceOf(orphan))
		Expect(poolIDs()).To(ConsistOf(kept), "no grace period: the Node is gone, so no launch is in progress")
		ExpectMetricCounterValue(garbagecollection.NodesDeleted, 1, map[string]string{"nodepool": "restored"})
		Expect(recorder.Events()).To(ContainElement(HaveField("Message", ContainSubstring(fmt.Sprintf("Deleted LKE node pool %d", orphan)))))
	})

	DescribeTable("is kept",
		func(setUp func() (providerID string)) {
			providerID := setUp()
			before := poolIDs()
			nodeDeleted(providerID)
			Expect(poolIDs()).To(Equal(before))
			Expect(recorder.Calls("GarbageCollected")).To(BeZero())
		},
		Entry("while a NodeClaim records it: core terminates it through that NodeClaim", func() string {
			id := launchedPool("terminating")
			ExpectApplied(ctx, env.Client, nodeClaim("terminating", instanceOf(id)))
			return instanceOf(id)
		}),
		Entry("while the NodeClaim it was launched for exists", func() string {
			id := launchedPool("launching")
			ExpectApplied(ctx, env.Client, nodeClaim("launching", ""))
			return instanceOf(id)
		}),
		Entry("when a Node with its provider ID is registered again", func() string {
			id := launchedPool("re-registered")
			ExpectApplied(ctx, env.Client, coretest.Node(coretest.NodeOptions{ProviderID: instanceOf(id)}))
			return instanceOf(id)
		}),
		Entry("without this cluster's ownership tag", func() string {
			return instanceOf(pool(nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("theirs")))
		}),
		Entry("when the Linode is gone already (LKE replaced it in a recycle)", func() string {
			return nodeprovider.ProviderID(424242)
		}),
	)
})
