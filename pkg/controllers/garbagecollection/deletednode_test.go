package garbagecollection_test

import (
	"fmt"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
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
		Entry("when the Linode is not one of the cluster's nodes", func() string {
			stranger, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: lkeCluster.Region, Type: "g6-standard-2", Label: "database"})
			Expect(err).ToNot(HaveOccurred())
			return nodeprovider.ProviderID(stranger.ID)
		}),
		Entry("when the Linode is gone already (LKE replaced it in a recycle)", func() string {
			return nodeprovider.ProviderID(424242)
		}),
	)
})

var _ = Describe("A deleted Node's last state", func() {
	// deletedState creates the Node, deletes it by way of del, and returns the Node as the
	// apiserver's watch, and so the controller's informer, last shows it.
	deletedState := func(node *corev1.Node, del func(node *corev1.Node)) *corev1.Node {
		GinkgoHelper()
		ExpectApplied(ctx, env.Client, node)
		watcher, err := env.KubernetesInterface.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node.Name})
		Expect(err).ToNot(HaveOccurred())
		defer watcher.Stop()
		del(node)
		for e := range watcher.ResultChan() {
			if e.Type == watch.Deleted {
				return e.Object.(*corev1.Node)
			}
		}
		Fail("the watch ended before the Node was deleted")
		return nil
	}

	It("shows that core drained the Node through its termination finalizer", func() {
		node := coretest.Node(coretest.NodeOptions{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{karpv1.TerminationFinalizer}}, ProviderID: nodeprovider.ProviderID(1)})
		last := deletedState(node, func(node *corev1.Node) {
			Expect(env.Client.Delete(ctx, node)).To(Succeed())
			// What core's termination does: taint, drain, then remove its finalizer.
			stored := &corev1.Node{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), stored)).To(Succeed())
			stored.Spec.Taints = append(stored.Spec.Taints, karpv1.DisruptedNoScheduleTaint)
			Expect(env.Client.Update(ctx, stored)).To(Succeed())
			stored.Finalizers = nil
			Expect(env.Client.Update(ctx, stored)).To(Succeed())
		})
		Expect(garbagecollection.DrainedByKarpenter(last)).To(BeTrue())
	})

	DescribeTable("shows a Node that went undrained, whose Linode waits for the grace period",
		func(finalizers []string, taints []corev1.Taint, del func(node *corev1.Node)) {
			node := coretest.Node(coretest.NodeOptions{ObjectMeta: metav1.ObjectMeta{Finalizers: finalizers}, Taints: taints, ProviderID: nodeprovider.ProviderID(2)})
			Expect(garbagecollection.DrainedByKarpenter(deletedState(node, del))).To(BeFalse())
		},
		Entry("deleted without a finalizer (kubectl delete node of a Node core never managed)", nil, nil, func(node *corev1.Node) {
			Expect(env.Client.Delete(ctx, node)).To(Succeed())
		}),
		Entry("a disruption candidate deleted with its finalizer removed by hand before core drained it", nil, []corev1.Taint{karpv1.DisruptedNoScheduleTaint}, func(node *corev1.Node) {
			Expect(env.Client.Delete(ctx, node)).To(Succeed())
		}),
		Entry("its termination finalizer removed by hand", []string{karpv1.TerminationFinalizer}, nil, func(node *corev1.Node) {
			Expect(env.Client.Delete(ctx, node)).To(Succeed())
			stored := &corev1.Node{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(node), stored)).To(Succeed())
			stored.Finalizers = nil
			Expect(env.Client.Update(ctx, stored)).To(Succeed())
		}),
	)
})
