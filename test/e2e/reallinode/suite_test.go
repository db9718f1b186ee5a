//go:build e2elinode

package reallinode_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
	"github.com/linode/karpenter-provider-linode/test/e2e/reallinode"
)

// TestRealLinode is `make e2e-linode`: the lifecycle specs on real LKE clusters. Without a token
// it says what it needs and fails. Ginkgo runs the clean-ups registered here on SIGINT and
// SIGTERM as at the end, so an interrupted run deletes what it made too.
func TestRealLinode(t *testing.T) {
	cfg, err := reallinode.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		t.FailNow()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := reallinode.NewRun(ctx, cfg, t.TempDir(), os.Stdout, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("run tag %s, region %s, tiers %v\n", run.Tag, cfg.Region, cfg.Tiers)
	fmt.Print(run.Estimate())
	if err := run.SweepKilledRuns(ctx); err != nil {
		t.Fatal(err)
	}

	var tiers []lifecycle.Tier
	for _, tier := range cfg.Tiers {
		tiers = append(tiers, lifecycle.Tier{Name: tier, SetUp: func(ctx context.Context) *lifecycle.Environment {
			env, cleanUp, err := run.Tier(ctx, tier)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(cleanUp)
			return env
		}})
	}
	lifecycle.Describe(tiers...)
	BeforeSuite(func() {
		// Registered before any tier's set-up, so that it runs after all their clean-ups.
		DeferCleanup(func(ctx context.Context) { Expect(run.Cleanup(ctx)).To(Succeed()) }, NodeTimeout(5*time.Minute))
	})
	framework.RunSpecs(t, "End-to-end, a node's life (Linode)")
}
