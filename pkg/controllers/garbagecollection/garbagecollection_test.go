package garbagecollection_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

var _ = Describe("Garbage collection", func() {
	It("deletes a pool no NodeClaim owns once the grace period has passed", func() {
		orphan := pool(nodeprovider.ClusterTag(clusterName), nodeprovider.NodeClaimTag("deleted-mid-launch"), nodeprovider.NodePoolTag("batch"))
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(garbagecollection.DefaultGracePeriod - time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(ConsistOf(orphan), "a pool that may belong to a launch in progress is kept")

		clk.Step(2 * time.Second)
		ExpectSingletonReconciled(ctx, gc)
		Expect(poolIDs()).To(BeEmpty())
		Expect(emu.Instances()).To(BeEmpty())
		ExpectMetricCounterValue(garbagecollection.NodesDeleted, 1, map[string]string{"nodepool": "batch"})
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

	It("deletes nothing when the NodeClaims cannot be compared", func() {
		launchedPool("unknown")
		ExpectSingletonReconciled(ctx, gc)
		clk.Step(2 * garbagecollection.DefaultGracePeriod)
		emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/lke/clusters/{clusterId}/pools", Sequence: []int{http.StatusServiceUnavailable}})
		Expect(ExpectSingletonReconcileFailed(ctx, gc)).To(HaveOccurred())
		Expect(poolIDs()).To(HaveLen(1))
	})
})
