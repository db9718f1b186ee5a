package emulator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linode/linodego"
)

// TestConcurrentClients runs 50 clients creating, resizing, reading and
// deleting pools and instances while the clock advances, then checks that
// the state is consistent and that nothing leaked. Run it with -race.
func TestConcurrentClients(t *testing.T) {
	e, _, clk := startEmulator(t)
	ctx := context.Background()
	cluster, err := e.AddLKECluster("race", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	var events eventLog
	e.OnInstanceEvent(events.add)

	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Add(1)
	go func() {
		defer ticker.Done()
		for {
			select {
			case <-stop:
				return
			default:
				clk.Step(5 * time.Second)
				e.Tick()
				// Each Tick takes the write lock; ticking every millisecond starved 50 clients
				// under the race detector on a busy machine past their 30-second timeout.
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()

	const clients = 50
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := clientWorkload(ctx, e.NewClient(), cluster, i); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	clk.Step(time.Hour)
	e.Tick()
	checkConsistent(t, e)
	// Each client left one pool of 2 nodes and one running instance.
	if pools := e.Pools(cluster); len(pools) != clients {
		t.Fatalf("want %d pools, got %d", clients, len(pools))
	}
	if n := len(e.Instances()); n != clients*3 {
		t.Fatalf("want %d instances, got %d", clients*3, n)
	}
	for _, p := range e.Pools(cluster) {
		c := e.NewClient()
		if err := c.DeleteLKENodePool(ctx, cluster, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range e.Instances() {
		if in.LKEClusterID != 0 {
			t.Fatalf("pool delete leaked %+v", in)
		}
	}
	created := len(events.of(InstanceRunning))
	deleted := len(events.of(InstanceDeleted))
	if created == 0 || deleted == 0 {
		t.Fatalf("events: %d running, %d deleted", created, deleted)
	}
}

func clientWorkload(ctx context.Context, c *linodego.Client, cluster, i int) error {
	pool, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{
		Count: 3, Type: "g6-standard-2", Tags: []string{fmt.Sprintf("client-%d", i)},
	})
	if err != nil {
		return err
	}
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1"})
	if err != nil {
		return err
	}
	for range 5 {
		if _, err := c.ListLKENodePools(ctx, cluster, nil); err != nil {
			return err
		}
		if _, err := c.ListInstances(ctx, &linodego.ListOptions{Filter: fmt.Sprintf(`{"id": %d}`, in.ID)}); err != nil {
			return err
		}
		if _, err := c.GetInstance(ctx, in.ID); err != nil {
			return err
		}
	}
	if _, err := c.UpdateLKENodePool(ctx, cluster, pool.ID, linodego.LKENodePoolUpdateOptions{Count: 4}); err != nil {
		return err
	}
	got, err := c.GetLKENodePool(ctx, cluster, pool.ID)
	if err != nil {
		return err
	}
	// Two deletes bring the pool from 4 to 2 nodes.
	for _, n := range got.Linodes[:2] {
		if err := c.DeleteLKENodePoolNode(ctx, cluster, n.ID); err != nil {
			return err
		}
	}
	if got, err = c.GetLKENodePool(ctx, cluster, pool.ID); err != nil {
		return err
	}
	if got.Count != 2 || len(got.Linodes) != 2 {
		return fmt.Errorf("pool %d: count %d with %d nodes, want 2", pool.ID, got.Count, len(got.Linodes))
	}
	return nil
}

// checkConsistent verifies that pools and instances agree.
func checkConsistent(t *testing.T, e *Emulator) {
	t.Helper()
	instances := map[int]InstanceInfo{}
	for _, in := range e.Instances() {
		instances[in.ID] = in
	}
	nodes := map[string]bool{}
	for _, p := range e.Pools(0) {
		if p.Count != len(p.Nodes) {
			t.Errorf("pool %d: count %d, %d nodes", p.ID, p.Count, len(p.Nodes))
		}
		for _, n := range p.Nodes {
			nodes[n.ID] = true
			in, ok := instances[n.InstanceID]
			if !ok || in.NodeID != n.ID || in.LKEPoolID != p.ID {
				t.Errorf("node %s: instance %d is %+v", n.ID, n.InstanceID, in)
			}
			if n.Status != nodeReady || in.Status != statusRunning {
				t.Errorf("node %s is %s with instance %s after an hour", n.ID, n.Status, in.Status)
			}
		}
	}
	for _, in := range instances {
		if in.NodeID != "" && !nodes[in.NodeID] {
			t.Errorf("instance %d belongs to missing node %s", in.ID, in.NodeID)
		}
	}
}
