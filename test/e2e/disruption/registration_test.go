package disruption_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// poolCreateRoute is the emulator's counter for LKE pool creates: one per launched node.
const poolCreateRoute = "POST /lke/clusters/{clusterId}/pools"

// Specs here change the emulator's delays and restart the controller; each puts both back.
var _ = Describe("Registration and launches that take time", func() {
	It("creates no duplicate NodeClaims while 50 pods wait for nodes that boot slowly, with default batching", func(ctx SpecContext) {
		// Core's default batching (1 s idle, 10 s max): the suite's shorter windows are dropped.
		Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Env: []string{}})).To(Succeed())
		DeferCleanup(restoreController)
		bootDelay := framework.DuplicatesBoot()
		cluster.Emulator.SetDelays(emulator.DefaultDelays().Scaled(bootDelay.Seconds() / totalBoot(emulator.DefaultDelays()).Seconds()))
		DeferCleanup(restoreDelays)

		f := newFixture("slow-boot")
		framework.ExpectNoDuplicateNodeClaims(ctx, f, framework.SlowBoot{
			CreateCounter:  poolCreateRoute,
			Created:        "LKE pool",
			QuietWindow:    bootDelay - 30*time.Second,
			RunningTimeout: 3 * time.Minute,
		})
		for _, node := range f.Nodes(ctx) {
			Expect(framework.HasTaint(node, karpv1.UnregisteredNoExecuteTaint.Key, corev1.TaintEffectNoExecute)).To(BeFalse(),
				"core removed the unregistered taint from %s once it registered", node.Name)
		}
	}, SpecTimeout(10*time.Minute))

	It("launches one node per NodeClaim when the controller crashes in the middle of a launch", func(ctx SpecContext) {
		// LKE takes 20 s to give a new pool its Linode, so the crash lands while Create waits.
		delays := emulator.DefaultDelays().Scaled(framework.DelayScale)
		delays.NodeInstance = 20 * time.Second
		cluster.Emulator.SetDelays(delays)
		DeferCleanup(restoreDelays)

		f := newFixture("crash")
		f.Create(ctx)
		poolsBefore := cluster.Emulator.Counters()[poolCreateRoute]
		Expect(kube.Create(ctx, f.Deployment("inflate", 3, "1"))).To(Succeed())
		Eventually(func() int { return cluster.Emulator.Counters()[poolCreateRoute] - poolsBefore }).WithContext(ctx).
			Should(BeNumerically(">", 0), "a pool is created")
		claims := f.NodeClaims(ctx)
		Expect(claims).NotTo(BeEmpty())
		for _, claim := range claims {
			Expect(claim.Status.ProviderID).To(BeEmpty(), "NodeClaim %s is still launching when the controller crashes", claim.Name)
		}

		Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Crash: true})).To(Succeed())

		f.ExpectRunning(ctx, "inflate", 3)
		Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed())
		claims = f.NodeClaims(ctx)
		Expect(f.Nodes(ctx)).To(HaveLen(len(claims)))
		Expect(cluster.Emulator.Counters()[poolCreateRoute]-poolsBefore).To(Equal(len(claims)),
			"the restarted controller found the pools its predecessor created instead of creating more")
	}, SpecTimeout(5*time.Minute))
})

// restoreController brings back the suite's controller settings.
func restoreController(ctx context.Context) {
	Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Env: framework.LKEControllerEnv()})).To(Succeed())
}

// restoreDelays brings back the suite's boot delays.
func restoreDelays() {
	cluster.Emulator.SetDelays(emulator.DefaultDelays().Scaled(framework.DelayScale))
}

// totalBoot is how long a new LKE node takes from its pool's create to a running Linode.
func totalBoot(d emulator.Delays) time.Duration { return d.NodeInstance + d.Provisioning + d.Booting }
