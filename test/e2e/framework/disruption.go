package framework

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// ExpectNodeDeletedByHandDrains deletes one of the NodePool's Nodes as `kubectl delete node` does
// and expects what Karpenter promises in either mode: its termination finalizer holds the Node
// while it drains, the node's Linode is deleted, the Node goes, and the app's replicas run again,
// none on that node. The app must be running on the NodePool.
func (f *Fixture) ExpectNodeDeletedByHandDrains(ctx context.Context, app string, replicas int) {
	ginkgo.GinkgoHelper()
	kube := f.kube()
	node := f.Nodes(ctx)[0]
	instanceID, err := nodeprovider.ParseProviderID(node.Spec.ProviderID)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())

	gomega.Expect(kube.Delete(ctx, &node)).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		current := &corev1.Node{}
		g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(&node), current)).To(gomega.Succeed())
		g.Expect(current.DeletionTimestamp.IsZero()).To(gomega.BeFalse())
		g.Expect(current.Finalizers).To(gomega.ContainElement(karpv1.TerminationFinalizer), "Karpenter's finalizer holds the node while it drains")
	}).WithContext(ctx).Should(gomega.Succeed())
	gomega.Eventually(f.cluster.Emulator.Instances).WithContext(ctx).
		ShouldNot(gomega.ContainElement(gomega.HaveField("ID", instanceID)), "the node's Linode is deleted")
	gomega.Eventually(func() bool {
		return apierrors.IsNotFound(kube.Get(ctx, client.ObjectKeyFromObject(&node), &corev1.Node{}))
	}).WithContext(ctx).Should(gomega.BeTrue(), "the node is gone")
	f.ExpectRunning(ctx, app, replicas)
	for _, pod := range f.Pods(ctx, app) {
		gomega.Expect(pod.Spec.NodeName).NotTo(gomega.Equal(node.Name))
	}
}
