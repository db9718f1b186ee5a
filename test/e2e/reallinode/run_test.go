package reallinode

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunEstimatesThenCleanupDeletesWhatCarriesItsTagAndStatesTheCost(t *testing.T) {
	ctx := context.Background()
	_, cfg, clock := account(t)
	cfg.Tiers = []string{TierStandard}
	var out bytes.Buffer
	run, err := NewRun(ctx, cfg, t.TempDir(), &out, now)
	if err != nil {
		t.Fatal(err)
	}
	if estimate := run.Estimate(); !strings.Contains(estimate, "standard control plane") || !strings.Contains(estimate, "total $0.14") {
		t.Errorf("the estimate of a run creating its standard cluster:\n%s", estimate)
	}
	linode := NewLinodeClient(cfg, APIVersion(TierStandard))
	cluster, err := CreateCluster(ctx, linode, cfg.Region, TierStandard, run.Tag, now)
	if err != nil {
		t.Fatal(err)
	}
	run.clusters = append(run.clusters, cluster)
	clock.Step(time.Minute)

	if err := run.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if labels := clusterLabels(t, linode); len(labels) != 0 {
		t.Errorf("clusters left after the clean-up: %v", labels)
	}
	for _, want := range []string{"deleted: LKE cluster", cluster.Label, "Cost of this run", "g6-standard-2      1 h × $0.0360"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the clean-up's output does not say %q:\n%s", want, out.String())
		}
	}
}
