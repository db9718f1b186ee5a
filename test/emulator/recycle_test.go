package emulator

import (
	"context"
	"slices"
	"testing"

	"github.com/linode/linodego"
)

// bootAll steps the clock through a new node's Linode creation and boot.
func bootAll(e *Emulator, step func()) {
	step()
	e.Tick()
}

func TestLKERecycleDrainsAndReplacesOneNodeAtATime(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	var events eventLog
	e.OnInstanceEvent(events.add)
	delays := DefaultDelays()
	boot := func() {
		bootAll(e, func() { clk.Step(delays.NodeInstance) })
		bootAll(e, func() { clk.Step(delays.Provisioning) })
		bootAll(e, func() { clk.Step(delays.Booting) })
	}

	cluster, err := c.CreateLKECluster(ctx, linodego.LKEClusterCreateOptions{
		Label: "upgraded", Region: "us-ord", K8sVersion: "1.34",
		NodePools: []linodego.LKENodePoolCreateOptions{{Count: 2, Type: "g6-standard-2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	boot()
	original := events.of(InstanceRunning)
	if len(original) != 2 || original[0].K8sVersion != "1.34" {
		t.Fatalf("nodes of a 1.34 cluster: %+v", original)
	}

	// An upgrade moves the control plane only: the nodes keep the version they installed.
	if _, err := c.UpdateLKECluster(ctx, cluster.ID, linodego.LKEClusterUpdateOptions{K8sVersion: "1.35"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetLKECluster(ctx, cluster.ID); got.K8sVersion != "1.35" {
		t.Fatalf("cluster version after the upgrade: %q", got.K8sVersion)
	}
	if _, err := c.UpdateLKECluster(ctx, cluster.ID, linodego.LKEClusterUpdateOptions{K8sVersion: "1.34"}); err == nil {
		t.Fatal("a downgrade was accepted")
	}

	pools, _ := c.ListLKENodePools(ctx, cluster.ID, nil)
	if err := c.RecycleLKENodePool(ctx, cluster.ID, pools[0].ID); err != nil {
		t.Fatal(err)
	}
	draining := events.of(InstanceDraining)
	if len(draining) != 1 || draining[0].InstanceID != original[0].InstanceID {
		t.Fatalf("want the first node alone draining, got %+v", draining)
	}
	if len(events.of(InstanceDeleted)) != 0 {
		t.Fatal("a Linode was deleted before its node was drained")
	}
	e.FinishDrain(original[0].InstanceID)
	if deleted := events.of(InstanceDeleted); len(deleted) != 1 || deleted[0].InstanceID != original[0].InstanceID {
		t.Fatalf("deleted once drained: %+v", deleted)
	}
	pool, _ := c.GetLKENodePool(ctx, cluster.ID, pools[0].ID)
	if pool.Count != 2 || len(pool.Linodes) != 2 || slices.ContainsFunc(pool.Linodes, func(n linodego.LKENodePoolLinode) bool { return n.ID == original[0].NodeID }) {
		t.Fatalf("pool after the first replacement: %+v", pool)
	}
	if len(events.of(InstanceDraining)) != 1 {
		t.Fatal("the second node drains before the first one's replacement runs")
	}

	boot()
	replacements := events.of(InstanceRunning)[2:]
	if len(replacements) != 1 || replacements[0].K8sVersion != "1.35" || replacements[0].Label == original[0].Label ||
		replacements[0].InstanceID == original[0].InstanceID {
		t.Fatalf("the replacement (new Linode, new name, the cluster's new version): %+v", replacements)
	}
	if draining := events.of(InstanceDraining); len(draining) != 2 || draining[1].InstanceID != original[1].InstanceID {
		t.Fatalf("the second node's turn: %+v", draining)
	}
	// Nobody says the second node is drained: LKE deletes it at the drain timeout.
	bootAll(e, func() { clk.Step(delays.RecycleDrainTimeout) })
	if deleted := events.of(InstanceDeleted); len(deleted) != 2 || deleted[1].InstanceID != original[1].InstanceID {
		t.Fatalf("deleted at the drain timeout: %+v", deleted)
	}

	// A cluster recycle goes through every node of every pool.
	boot()
	if _, err := c.CreateLKENodePool(ctx, cluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-4"}); err != nil {
		t.Fatal(err)
	}
	boot()
	before := len(events.of(InstanceDraining))
	if err := c.RecycleLKEClusterNodes(ctx, cluster.ID); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		draining := events.of(InstanceDraining)
		if len(draining) != before+1 {
			t.Fatalf("%d nodes draining at once in a cluster recycle", len(draining)-before)
		}
		e.FinishDrain(draining[len(draining)-1].InstanceID)
		boot()
		before++
	}
	if got := len(e.Instances()); got != 3 {
		t.Fatalf("%d Linodes after the cluster recycle, want 3", got)
	}
	for _, in := range e.Instances() {
		if in.Status != statusRunning {
			t.Fatalf("Linode %d is %s after the cluster recycle", in.ID, in.Status)
		}
	}

	if _, err := c.UpdateLKECluster(ctx, cluster.ID, linodego.LKEClusterUpdateOptions{Label: "renamed"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetLKECluster(ctx, cluster.ID); got.Label != "renamed" || len(e.Pools(cluster.ID)) != 2 {
		t.Fatalf("after the rename: %+v, pools %v", got, e.Pools(cluster.ID))
	}
}

func TestLKEEnterprisePoolVersionRollsItsNodes(t *testing.T) {
	e, _, clk := startEmulator(t)
	c := e.NewClient()
	c.SetAPIVersion("v4beta")
	ctx := context.Background()
	var events eventLog
	e.OnInstanceEvent(events.add)
	delays := DefaultDelays()
	boot := func() {
		bootAll(e, func() { clk.Step(delays.NodeInstance) })
		bootAll(e, func() { clk.Step(delays.Provisioning) })
		bootAll(e, func() { clk.Step(delays.Booting) })
	}

	clusterID, err := e.AddLKECluster("enterprise", "us-ord", "enterprise")
	if err != nil {
		t.Fatal(err)
	}
	old := e.Clusters()[0].K8sVersion
	pool, err := c.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if err != nil {
		t.Fatal(err)
	}
	boot()
	e.ReleaseLKEVersion("enterprise", "v1.32.4+lke1")
	if _, err := c.UpdateLKECluster(ctx, clusterID, linodego.LKEClusterUpdateOptions{K8sVersion: "v1.32.4+lke1"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetLKENodePool(ctx, clusterID, pool.ID); got.K8sVersion == nil || *got.K8sVersion != old {
		t.Fatalf("an enterprise pool moved with the control plane: %+v", got.K8sVersion)
	}
	if _, err := c.UpdateLKENodePool(ctx, clusterID, pool.ID, linodego.LKENodePoolUpdateOptions{K8sVersion: ptr("v1.32.4+lke1")}); err != nil {
		t.Fatal(err)
	}
	draining := events.of(InstanceDraining)
	if len(draining) != 1 {
		t.Fatalf("a rolling_update pool's new version did not recycle its node: %+v", draining)
	}
	e.FinishDrain(draining[0].InstanceID)
	bootAll(e, func() { clk.Step(delays.EnterpriseNodeListing) })
	boot()
	running := events.of(InstanceRunning)
	if last := running[len(running)-1]; last.K8sVersion != "v1.32.4+lke1" {
		t.Fatalf("the replacement runs %q", last.K8sVersion)
	}
}
