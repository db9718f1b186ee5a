package reallinode

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestEstimatePricesEachTiersClusterAndNodesFromTheCatalogueAndNamesWhatItCannotPrice(t *testing.T) {
	_, cfg, _ := account(t)
	catalogue, err := LoadCatalogue(context.Background(), NewLinodeClient(cfg, "v4beta"), cfg.Region)
	if err != nil {
		t.Fatal(err)
	}
	if vcpus, err := catalogue.VCPUs("g6-standard-2"); err != nil || vcpus != 2 {
		t.Errorf("g6-standard-2 has %d vCPUs (%v), want 2", vcpus, err)
	}
	lines := Estimate(catalogue, "g6-standard-2", []TierPlan{{Tier: TierStandard, CreatesCluster: true}, {Tier: TierEnterprise}})
	statement := Statement("Estimate", lines)
	// The emulator serves Linode's catalogue: g6-standard-2 is $0.036 an hour in us-ord, the
	// standard control plane free. Created standard cluster: its control plane, one base Linode,
	// three spec Linodes; the enterprise tier in a named cluster: three spec Linodes.
	for _, want := range []string{
		"standard control plane                       lke-sa             1 h × $0.0000 = $0.0000",
		"standard base pool, 1 Linode(s)              g6-standard-2      1 h × $0.0360 = $0.0360",
		"standard specs' nodes, 3 Linodes             g6-standard-2      3 h × $0.0360 = $0.1080",
		"enterprise specs' nodes, 3 Linodes           g6-standard-2      3 h × $0.0360 = $0.1080",
		"total $0.25\n",
	} {
		if !strings.Contains(statement, want) {
			t.Errorf("the estimate has no line %q:\n%s", want, statement)
		}
	}
	if strings.Contains(statement, "enterprise control plane") {
		t.Errorf("a named enterprise cluster is not the run's to pay for:\n%s", statement)
	}

	// The emulator's catalogue, like the one recorded from Linode, lists no enterprise control
	// plane (lke-e): the statement says so rather than guess.
	statement = Statement("Estimate", Estimate(catalogue, "g6-standard-2", []TierPlan{{Tier: TierEnterprise, CreatesCluster: true}}))
	for _, want := range []string{"enterprise control plane", "lke-e", "price not in the catalogue", "plus what Linode charges for lke-e"} {
		if !strings.Contains(statement, want) {
			t.Errorf("the estimate of a created enterprise cluster does not say %q:\n%s", want, statement)
		}
	}
}

func TestLedgerBillsEachHourBegunOfWhatTheRunRan(t *testing.T) {
	ctx := context.Background()
	e, cfg, clock := account(t)
	linode := NewLinodeClient(cfg, APIVersion(TierStandard))
	catalogue, err := LoadCatalogue(ctx, linode, cfg.Region)
	if err != nil {
		t.Fatal(err)
	}
	runTag := NewRunTag(now)
	cluster, err := CreateCluster(ctx, linode, cfg.Region, TierStandard, runTag, now)
	if err != nil {
		t.Fatal(err)
	}
	// LKE gives the base pool its Linode some seconds after the cluster's create.
	clock.Step(time.Minute)
	if len(e.Instances()) != 1 {
		t.Fatalf("the base pool's Linode: %v", e.Instances())
	}
	ledger := NewLedger()
	for _, at := range []time.Duration{0, 30 * time.Minute, 61 * time.Minute} {
		if err := SeeCluster(ctx, linode, catalogue, ledger, cluster, ThisRun(runTag), now.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	statement := Statement("Cost of this run", ledger.Lines())
	for _, want := range []string{
		"standard control plane",
		"lke-sa             2 h × $0.0000",
		"g6-standard-2      2 h × $0.0360 = $0.0720",
		"total $0.07\n",
	} {
		if !strings.Contains(statement, want) {
			t.Errorf("61 minutes of a created cluster and its base Linode: no %q in\n%s", want, statement)
		}
	}

	// In a cluster the run did not create, only the pools with the run's tag are the run's.
	named := &Cluster{ID: cluster.ID, Label: cluster.Label, Tier: TierStandard}
	ledger = NewLedger()
	if err := SeeCluster(ctx, linode, catalogue, ledger, named, ThisRun(NewRunTag(now)), now); err != nil {
		t.Fatal(err)
	}
	if lines := ledger.Lines(); len(lines) != 0 {
		t.Errorf("another run's pools and a cluster the run did not create are not the run's cost: %+v", lines)
	}
}

func TestLedgerStopsCountingADeletedCluster(t *testing.T) {
	ctx := context.Background()
	_, cfg, clock := account(t)
	linode := NewLinodeClient(cfg, APIVersion(TierStandard))
	catalogue, err := LoadCatalogue(ctx, linode, cfg.Region)
	if err != nil {
		t.Fatal(err)
	}
	runTag := NewRunTag(now)
	cluster, err := CreateCluster(ctx, linode, cfg.Region, TierStandard, runTag, now)
	if err != nil {
		t.Fatal(err)
	}
	clock.Step(time.Minute)
	ledger := NewLedger()
	if err := SeeCluster(ctx, linode, catalogue, ledger, cluster, ThisRun(runTag), now); err != nil {
		t.Fatal(err)
	}
	if err := linode.DeleteLKECluster(ctx, cluster.ID); err != nil {
		t.Fatal(err)
	}
	if err := SeeCluster(ctx, linode, catalogue, ledger, cluster, ThisRun(runTag), now.Add(3*time.Hour)); err != nil {
		t.Fatalf("a look at a deleted cluster: %v", err)
	}
	for _, line := range ledger.Lines() {
		if line.Hours != 1 {
			t.Errorf("%s is billed %d hours, want the 1 hour it ran before its deletion", line.What, line.Hours)
		}
	}
}
