package instance_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var _ = Describe("Launches that take time", func() {
	It("creates no duplicate NodeClaims while 50 pods wait for Linodes that boot slowly, with default batching", func(ctx SpecContext) {
		bootDelay := framework.DuplicatesBoot()
		// Core's default batching (1 s idle, 10 s max); the suite's garbage collection stays.
		Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Env: garbageCollectionEnv})).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Env: controllerEnv})).To(Succeed())
		})
		defaults := emulator.DefaultDelays()
		cluster.Emulator.SetDelays(defaults.Scaled(bootDelay.Seconds() / (defaults.Provisioning + defaults.Booting).Seconds()))
		DeferCleanup(func() { cluster.Emulator.SetDelays(emulator.DefaultDelays().Scaled(delayScale)) })

		f := newFixture("slow-boot")
		// Plans of at most 8 vCPUs, so the 50 pods need several nodes, each a chance for a duplicate.
		f.NodePool.Spec.Template.Spec.Requirements = append(f.NodePool.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
			Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"9"},
		})
		f.Create(ctx)
		createsBefore := cluster.Emulator.Counters()[instanceCreates]
		seen := map[string]bool{}
		recordClaims := func() int {
			for _, claim := range f.NodeClaims(ctx) {
				seen[claim.Name] = true
			}
			return len(seen)
		}
		Expect(kube.Create(ctx, f.Deployment("inflate", 50, "1"))).To(Succeed())

		By("launching once for the 50 pods")
		Eventually(func(g Gomega) {
			claims := f.NodeClaims(ctx)
			g.Expect(claims).NotTo(BeEmpty())
			for _, claim := range claims {
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched)).To(BeTrue(), "NodeClaim %s launched", claim.Name)
			}
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		launched := recordClaims()
		AddReportEntry("NodeClaims launched for 50 pods", launched)
		Expect(launched).To(BeNumerically(">", 1), "plans of at most 8 vCPUs cannot hold 50 one-CPU pods on one node")
		Expect(f.Nodes(ctx)).To(BeEmpty(), "no node has booted yet")

		By("launching nothing more while the Linodes boot")
		Consistently(func(g Gomega) {
			g.Expect(recordClaims()).To(Equal(launched), "NodeClaims created while the first ones were still booting")
		}).WithContext(ctx).WithTimeout(bootDelay - 15*time.Second).WithPolling(time.Second).Should(Succeed())

		By("running every pod on the nodes launched first, each node in use")
		Eventually(func(g Gomega) {
			recordClaims()
			pods := f.Pods(ctx, "inflate")
			g.Expect(pods).To(HaveLen(50))
			for _, pod := range pods {
				g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", pod.Name)
			}
		}).WithContext(ctx).WithTimeout(bootDelay + 2*time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(seen).To(HaveLen(launched), "NodeClaims ever created")
		nodesInUse := map[string]bool{}
		for _, pod := range f.Pods(ctx, "inflate") {
			nodesInUse[pod.Spec.NodeName] = true
		}
		Expect(f.Nodes(ctx)).To(HaveLen(launched))
		Expect(nodesInUse).To(HaveLen(launched), "every launched node runs some of the pods")
		Expect(cluster.Emulator.Counters()[instanceCreates]-createsBefore).To(Equal(launched), "one Linode created per NodeClaim")
		Eventually(cluster.CheckNoBootstrapTokens).WithContext(ctx).Should(Succeed(), "every registered node's token is deleted")
	}, SpecTimeout(10*time.Minute))
})
