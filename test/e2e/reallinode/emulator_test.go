package reallinode

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// now is the tests' clock: the emulator's, and the runs'.
var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// account is a Linode account in the emulator, on a fake clock, and the run's configuration for
// it: the pieces of a real run that need no Linode account run against it.
func account(t *testing.T) (*emulator.Emulator, Config, *clocktesting.FakeClock) {
	t.Helper()
	clock := clocktesting.NewFakeClock(now)
	e := emulator.New(emulator.WithClock(clock), emulator.WithoutRateLimits())
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	cfg, err := LoadConfig(environment(map[string]string{"LINODE_TOKEN": e.Token(), "LINODE_URL": e.URL()}))
	if err != nil {
		t.Fatal(err)
	}
	return e, cfg, clock
}

// clusterLabels are the account's LKE clusters' labels.
func clusterLabels(t *testing.T, linode *linodego.Client) []string {
	t.Helper()
	clusters, err := linode.ListLKEClusters(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range clusters {
		labels = append(labels, c.Label)
	}
	slices.Sort(labels)
	return labels
}

// poolTags are the tags of the cluster's pools, one string per pool.
func poolTags(t *testing.T, linode *linodego.Client, clusterID int) []string {
	t.Helper()
	pools, err := linode.ListLKENodePools(context.Background(), clusterID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, p := range pools {
		tags = append(tags, strings.Join(p.Tags, ","))
	}
	slices.Sort(tags)
	return tags
}

func TestSweepDeletesWhatKilledRunsLeftThenWhatThisRunMadeAndNothingElse(t *testing.T) {
	ctx := context.Background()
	_, cfg, _ := account(t)
	linode := NewLinodeClient(cfg, APIVersion(TierEnterprise))
	killedRun := NewRunTag(now.Add(-MaxRunDuration - time.Hour))
	thisRun := NewRunTag(now)

	// A killed run's clusters of both tiers, and this run's.
	for _, c := range []struct{ tier, tag string }{{TierStandard, killedRun}, {TierEnterprise, killedRun}, {TierStandard, thisRun}} {
		if _, err := CreateCluster(ctx, NewLinodeClient(cfg, APIVersion(c.tier)), cfg.Region, c.tier, c.tag, now.Add(time.Duration(len(clusterLabels(t, linode)))*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// A user's cluster (E2E_CLUSTER), with pools of the killed run, of this run, and its own.
	userCluster, err := linode.CreateLKECluster(ctx, linodego.LKEClusterCreateOptions{Label: "users-cluster", Region: cfg.Region, K8sVersion: "1.35",
		NodePools: []linodego.LKENodePoolCreateOptions{{Count: 1, Type: "g6-standard-2", Tags: []string{"users-own"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{killedRun, thisRun} {
		if _, err := linode.CreateLKENodePool(ctx, userCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: []string{tag}}); err != nil {
			t.Fatal(err)
		}
	}
	found, err := FindCluster(ctx, linode, "users-cluster", TierStandard)
	if err != nil || found.ID != userCluster.ID || found.Created {
		t.Fatalf("FindCluster(users-cluster) = %+v, %v", found, err)
	}
	if _, err := FindCluster(ctx, linode, "users-cluster", TierEnterprise); err == nil {
		t.Error("FindCluster accepted a standard-tier cluster for the enterprise tier")
	}
	if len(clusterLabels(t, linode)) != 4 {
		t.Fatalf("clusters before the sweeps: %v", clusterLabels(t, linode))
	}

	deleted, err := Sweep(ctx, linode, KilledRuns(now))
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 3 {
		t.Errorf("the killed run's two clusters and its pool in the user's cluster are swept; swept %q", deleted)
	}
	labels := clusterLabels(t, linode)
	if len(labels) != 2 || !slices.Contains(labels, "users-cluster") {
		t.Errorf("after sweeping the killed run: clusters %v, want this run's and the user's", labels)
	}
	if got := poolTags(t, linode, userCluster.ID); !slices.Equal(got, []string{thisRun, "users-own"}) {
		t.Errorf("the user's cluster's pools after sweeping the killed run: %v", got)
	}

	deleted, err = Sweep(ctx, linode, ThisRun(thisRun))
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 2 {
		t.Errorf("this run's cluster and its pool in the user's cluster are deleted; deleted %q", deleted)
	}
	if got := clusterLabels(t, linode); !slices.Equal(got, []string{"users-cluster"}) {
		t.Errorf("clusters left: %v, want only the user's", got)
	}
	if got := poolTags(t, linode, userCluster.ID); !slices.Equal(got, []string{"users-own"}) {
		t.Errorf("the user's cluster's pools at the end: %v, want only its own", got)
	}
}
