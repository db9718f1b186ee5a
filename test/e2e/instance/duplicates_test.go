package instance_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
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
		DeferCleanup(func() { cluster.Emulator.SetDelays(emulator.DefaultDelays().Scaled(framework.DelayScale)) })

		f := newFixture("slow-boot")
		framework.ExpectNoDuplicateNodeClaims(ctx, f, framework.SlowBoot{
			CreateCounter:  instanceCreates,
			Created:        "Linode",
			QuietWindow:    bootDelay - 15*time.Second,
			RunningTimeout: bootDelay + 2*time.Minute,
		})
		Eventually(cluster.CheckNoBootstrapTokens).WithContext(ctx).Should(Succeed(), "every registered node's token is deleted")
	}, SpecTimeout(10*time.Minute))
})
