package framework

import (
	"context"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// DuplicatesBoot is how long the duplicates specs' Linodes take from create to running. In
// `make test` it is 60 s: three times core's nomination window with default batching (20 s), so
// every pending pod outlives its nomination and is scheduled again against NodeClaims that have
// launched but not registered, as with Linode's real 3-minute boot, only fewer times.
// E2E_DUPLICATES_BOOT=3m runs Linode's figure.
func DuplicatesBoot() time.Duration {
	if value, ok := os.LookupEnv("E2E_DUPLICATES_BOOT"); ok {
		boot, err := time.ParseDuration(value)
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "E2E_DUPLICATES_BOOT")
		return boot
	}
	return time.Minute
}

// SlowBoot is what differs between the modes in ExpectNoDuplicateNodeClaims.
type SlowBoot struct {
	// CreateCounter is the emulator's counter of the create that launching one node costs (an LKE
	// pool, a Linode), and Created names what it creates in the failure message.
	CreateCounter string
	Created       string
	// QuietWindow is how long after the first launches no other NodeClaim may appear: the mode's
	// boot less a margin, so that it ends before the nodes register.
	QuietWindow time.Duration
	// RunningTimeout bounds the wait, after the quiet window, for all the pods to run.
	RunningTimeout time.Duration
}

// ExpectNoDuplicateNodeClaims checks that Karpenter launches once for pods that wait a long time
// for their nodes. Core nominates a pending pod for a NodeClaim for a limited time; a pod whose node
// is still booting outlives it and is scheduled again, against NodeClaims that have launched but not
// registered. If the provider misreports those NodeClaims, core launches a second node for the same
// pods, and the customer pays for Linodes nothing uses. Both modes run this, each with its own
// launch path and boot.
//
// The caller sets core's default batching and the slow boot (DuplicatesBoot) first; f is its
// fixture, not yet created: its NodePool is limited here to plans of at most 8 vCPUs, so that 50
// one-CPU pods need several nodes, each a chance for a duplicate. The caller checks its mode's
// registration afterwards.
func ExpectNoDuplicateNodeClaims(ctx context.Context, f *Fixture, boot SlowBoot) {
	f.NodePool.Spec.Template.Spec.Requirements = append(f.NodePool.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
		Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"9"},
	})
	f.Create(ctx)
	createsBefore := f.cluster.Emulator.Counters()[boot.CreateCounter]
	seen := map[string]bool{}
	recordClaims := func() int {
		for _, claim := range f.NodeClaims(ctx) {
			seen[claim.Name] = true
		}
		return len(seen)
	}
	gomega.Expect(f.kube().Create(ctx, f.Deployment("inflate", 50, "1"))).To(gomega.Succeed())

	ginkgo.By("launching once for the 50 pods")
	gomega.Eventually(func(g gomega.Gomega) {
		claims := f.NodeClaims(ctx)
		g.Expect(claims).NotTo(gomega.BeEmpty())
		for _, claim := range claims {
			g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched)).To(gomega.BeTrue(), "NodeClaim %s launched", claim.Name)
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(gomega.Succeed())
	launched := recordClaims()
	ginkgo.AddReportEntry("NodeClaims launched for 50 pods", launched)
	gomega.Expect(launched).To(gomega.BeNumerically(">", 1), "plans of at most 8 vCPUs cannot hold 50 one-CPU pods on one node")
	gomega.Expect(f.Nodes(ctx)).To(gomega.BeEmpty(), "no node has booted yet")

	ginkgo.By("launching nothing more while the nodes boot")
	gomega.Consistently(func(g gomega.Gomega) {
		g.Expect(recordClaims()).To(gomega.Equal(launched), "NodeClaims created while the first ones were still booting")
	}).WithContext(ctx).WithTimeout(boot.QuietWindow).WithPolling(time.Second).Should(gomega.Succeed())

	ginkgo.By("running every pod on the nodes launched first, each node in use")
	gomega.Eventually(func(g gomega.Gomega) {
		recordClaims()
		pods := f.Pods(ctx, "inflate")
		g.Expect(pods).To(gomega.HaveLen(50))
		for _, pod := range pods {
			g.Expect(pod.Status.Phase).To(gomega.Equal(corev1.PodRunning), "pod %s", pod.Name)
		}
	}).WithContext(ctx).WithTimeout(boot.RunningTimeout).WithPolling(time.Second).Should(gomega.Succeed())
	gomega.Expect(seen).To(gomega.HaveLen(launched), "NodeClaims ever created")
	nodesInUse := map[string]bool{}
	for _, pod := range f.Pods(ctx, "inflate") {
		nodesInUse[pod.Spec.NodeName] = true
	}
	gomega.Expect(f.Nodes(ctx)).To(gomega.HaveLen(launched))
	gomega.Expect(nodesInUse).To(gomega.HaveLen(launched), "every launched node runs some of the pods")
	gomega.Expect(f.cluster.Emulator.Counters()[boot.CreateCounter]-createsBefore).To(gomega.Equal(launched), "one %s created per NodeClaim", boot.Created)
}
