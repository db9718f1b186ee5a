package sizing_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/sizing"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var _ = Describe("Reading pending pods from the manager's cache", func() {
	It("sizes for the pods the pod informer holds unbound, and stops once they are bound", func() {
		informerCtx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		_, informers, err := env.CachedClientAndInformers(informerCtx, environment.PodNodeNameIndex)
		Expect(err).ToNot(HaveOccurred())
		Expect(cloud.Sizing.ReadFromInformers(informerCtx, informers)).To(Succeed())
		// The policy reads the informer's store through an index of its own, not a listing.
		informer, err := informers.GetInformer(informerCtx, &corev1.Pod{})
		Expect(err).ToNot(HaveOccurred())
		store := informer.(interface{ GetIndexer() toolscache.Indexer }).GetIndexer()
		Expect(store.GetIndexers()).To(HaveKey(sizing.UnboundPodsIndex))

		pods := pendingPods("web", 30, "1", "1Gi")
		apply(pods)
		// Thirty one-CPU pods: three to a g6-standard-4 node, the cheapest; no big plan is offered.
		Eventually(func() bool { return available(offered()["g6-dedicated-64"]) }).Should(BeFalse())

		node := coretest.Node()
		ExpectApplied(ctx, env.Client, node)
		for _, pod := range pods {
			ExpectManualBinding(ctx, env.Client, pod, node)
		}
		Eventually(func() bool { return available(offered()["g6-dedicated-64"]) }).Should(BeTrue())
	})
})
