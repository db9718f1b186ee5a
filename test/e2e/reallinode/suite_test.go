//go:build e2elinode

package reallinode_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/e2e/reallinode"
)

// TestRealLinode is `make e2e-linode`: the lifecycle specs on real LKE clusters. Without a token
// it says what it needs and fails.
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

	run.RegisterSpecs()
	framework.RunSpecs(t, "End-to-end, a node's life (Linode)")
}
