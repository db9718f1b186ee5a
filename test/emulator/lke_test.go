package emulator

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linode/linodego"
)

// eventLog collects instance events.
type eventLog struct {
	mu     sync.Mutex
	events []InstanceEvent
}

func (l *eventLog) add(ev InstanceEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) of(typ InstanceEventType) []InstanceEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []InstanceEvent
	for _, ev := range l.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestLKEStandardPoolLifecycle(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	var events eventLog
	e.OnInstanceEvent(events.add)

	clusterID, err := e.AddLKECluster("demo", "us-east", "standard")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := c.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{
		Count: 2, Type: "g6-standard-2", Tags: []string{"karpenter"}, Labels: linodego.LKENodePoolLabels{"a": "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pool.Linodes) != 2 {
		t.Fatalf("want 2 nodes, got %+v", pool.Linodes)
	}
	for _, n := range pool.Linodes {
		if n.InstanceID != 0 || n.Status != linodego.LKELinodeNotReady {
			t.Fatalf("new node should have no instance yet: %+v", n)
		}
		if !strings.HasPrefix(n.ID, fmt.Sprintf("%d-", pool.ID)) {
			t.Fatalf("node id %q does not start with the pool id", n.ID)
		}
	}

	clk.Step(DefaultDelays().NodeInstance)
	pool, err = c.GetLKENodePool(ctx, clusterID, pool.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range pool.Linodes {
		in, err := c.GetInstance(ctx, n.InstanceID)
		if err != nil {
			t.Fatalf("node %s instance: %v", n.ID, err)
		}
		if want := fmt.Sprintf("lke%d-%s", clusterID, n.ID); in.Label != want {
			t.Fatalf("label %q, want %q", in.Label, want)
		}
		if in.LKEClusterID != clusterID || in.Status != linodego.InstanceProvisioning || len(in.Tags) != 0 {
			t.Fatalf("standard node instance: %+v", in)
		}
	}

	clk.Step(DefaultDelays().Provisioning)
	e.Tick()
	if got := e.Instances()[0].Status; got != statusBooting {
		t.Fatalf("after provisioning delay: %s", got)
	}
	if len(events.of(InstanceRunning)) != 0 {
		t.Fatal("running event before the instance runs")
	}
	clk.Step(DefaultDelays().Booting)
	e.Tick()
	running := events.of(InstanceRunning)
	if len(running) != 2 || running[0].LKEPoolID != pool.ID || running[0].LKEClusterID != clusterID {
		t.Fatalf("running events: %+v", running)
	}
	node, err := c.GetLKENodePoolNode(ctx, clusterID, pool.Linodes[0].ID)
	if err != nil || node.Status != linodego.LKELinodeReady {
		t.Fatalf("node after boot: %+v, %v", node, err)
	}

	// Deleting one node removes exactly it and its Linode, and shrinks the pool.
	victim := pool.Linodes[0]
	if err := c.DeleteLKENodePoolNode(ctx, clusterID, victim.ID); err != nil {
		t.Fatal(err)
	}
	pool, err = c.GetLKENodePool(ctx, clusterID, pool.ID)
	if err != nil || pool.Count != 1 || len(pool.Linodes) != 1 || pool.Linodes[0].ID == victim.ID {
		t.Fatalf("pool after node delete: %+v, %v", pool, err)
	}
	if _, err := c.GetInstance(ctx, victim.InstanceID); !linodego.IsNotFound(err) {
		t.Fatalf("deleted node's instance still exists: %v", err)
	}
	if del := events.of(InstanceDeleted); len(del) != 1 || del[0].InstanceID != victim.InstanceID {
		t.Fatalf("deleted events: %+v", del)
	}

	// Growing the pool adds nodes; shrinking removes them with their Linodes.
	pool, err = c.UpdateLKENodePool(ctx, clusterID, pool.ID, linodego.LKENodePoolUpdateOptions{Count: 3})
	if err != nil || pool.Count != 3 || len(pool.Linodes) != 3 {
		t.Fatalf("grow: %+v, %v", pool, err)
	}
	clk.Step(DefaultDelays().NodeInstance)
	pool, err = c.UpdateLKENodePool(ctx, clusterID, pool.ID, linodego.LKENodePoolUpdateOptions{Count: 1})
	if err != nil || len(pool.Linodes) != 1 {
		t.Fatalf("shrink: %+v, %v", pool, err)
	}
	if n := len(e.Instances()); n != 1 {
		t.Fatalf("want 1 instance after shrinking to 1, got %d", n)
	}

	// Deleting the pool deletes its Linodes.
	if err := c.DeleteLKENodePool(ctx, clusterID, pool.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Instances()); n != 0 {
		t.Fatalf("pool delete left %d instances", n)
	}
	if _, err := c.GetLKENodePool(ctx, clusterID, pool.ID); !linodego.IsNotFound(err) {
		t.Fatalf("deleted pool still found: %v", err)
	}
}

func TestLKEEnterpriseTagsAndListingLag(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	client := *c
	client.SetAPIVersion("v4beta")

	clusterID, err := e.AddLKECluster("ent", "us-ord", "enterprise")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := client.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-dedicated-4", Tags: []string{"owner=karpenter"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pool.Linodes) != 0 || pool.Count != 1 {
		t.Fatalf("enterprise pool should list no nodes yet: %+v", pool)
	}
	if pool.K8sVersion == nil || pool.UpdateStrategy == nil {
		t.Fatalf("enterprise pool lacks k8s_version/update_strategy: %+v", pool)
	}
	if firewall, ok := getObject(t, e, fmt.Sprintf("/lke/clusters/%d/pools/%d", clusterID, pool.ID))["firewall_id"]; !ok || firewall != nil {
		t.Fatalf("enterprise pool without a firewall: firewall_id %v (present %t), want null", firewall, ok)
	}
	clk.Step(DefaultDelays().NodeInstance)
	instances, err := client.ListInstances(ctx, nil)
	if err != nil || len(instances) != 1 {
		t.Fatalf("instances: %v, %v", instances, err)
	}
	wantTags := []string{"owner=karpenter", fmt.Sprintf("nodepool=%d", pool.ID), fmt.Sprintf("lke%d", clusterID)}
	if !slices.Equal(instances[0].Tags, wantTags) {
		t.Fatalf("tags %v, want %v", instances[0].Tags, wantTags)
	}
	if p, _ := client.GetLKENodePool(ctx, clusterID, pool.ID); len(p.Linodes) != 0 {
		t.Fatalf("node listed before the lag: %+v", p.Linodes)
	}
	clk.Step(DefaultDelays().EnterpriseNodeListing)
	p, err := client.GetLKENodePool(ctx, clusterID, pool.ID)
	if err != nil || len(p.Linodes) != 1 || p.Linodes[0].InstanceID != instances[0].ID {
		t.Fatalf("node after the lag: %+v, %v", p, err)
	}
}

func TestLKEClusterRoutes(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()

	cluster, err := c.CreateLKECluster(ctx, linodego.LKEClusterCreateOptions{
		Label: "created", Region: "us-ord", K8sVersion: "1.35", Tags: []string{"t"},
		NodePools: []linodego.LKENodePoolCreateOptions{{Count: 1, Type: "g6-standard-2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddLKECluster("other", "us-east", ""); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetLKECluster(ctx, cluster.ID)
	if err != nil || got.Label != "created" || got.Created == nil {
		t.Fatalf("GetLKECluster: %+v, %v", got, err)
	}
	found, err := c.ListLKEClusters(ctx, &linodego.ListOptions{Filter: `{"label": "created"}`})
	if err != nil || len(found) != 1 || found[0].ID != cluster.ID {
		t.Fatalf("filtered clusters: %+v, %v", found, err)
	}
	pools, err := c.ListLKENodePools(ctx, cluster.ID, nil)
	if err != nil || len(pools) != 1 {
		t.Fatalf("pools: %+v, %v", pools, err)
	}
	if firewall, ok := getObject(t, e, fmt.Sprintf("/lke/clusters/%d/pools/%d", cluster.ID, pools[0].ID))["firewall_id"]; ok {
		t.Fatalf("standard pool without a firewall shows firewall_id %v", firewall)
	}
	clk.Step(DefaultDelays().NodeInstance)
	pool, _ := c.GetLKENodePool(ctx, cluster.ID, pools[0].ID)
	before := pool.Linodes[0]

	if err := c.RecycleLKENodePoolNode(ctx, cluster.ID, before.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().RecycleDrainTimeout)
	pool, _ = c.GetLKENodePool(ctx, cluster.ID, pool.ID)
	if len(pool.Linodes) != 1 || pool.Linodes[0].ID == before.ID || pool.Count != 1 {
		t.Fatalf("recycled node not replaced: %+v", pool.Linodes)
	}
	if err := c.RecycleLKENodePool(ctx, cluster.ID, pool.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetLKENodePoolNode(ctx, cluster.ID, before.ID); !linodego.IsNotFound(err) {
		t.Fatalf("recycled node still found: %v", err)
	}
	if err := c.DeleteLKECluster(ctx, cluster.ID); err != nil {
		t.Fatal(err)
	}
	if len(e.Pools(cluster.ID)) != 0 || len(e.Instances()) != 0 {
		t.Fatalf("cluster delete leaked pools %v or instances %v", e.Pools(cluster.ID), e.Instances())
	}
}

func TestLKEValidation(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	std, _ := e.AddLKECluster("std", "us-east", "standard")
	fw := e.AddFirewall("fw")
	if _, err := e.AddLKECluster("ent", "us-east", "enterprise"); err == nil {
		t.Fatal("enterprise cluster accepted in a region without Kubernetes Enterprise")
	}

	tests := []struct {
		name  string
		opts  linodego.LKENodePoolCreateOptions
		field string
	}{
		{"nanode refused", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-nanode-1"}, "type"},
		{"unknown type", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g9-huge"}, "type"},
		{"zero count", linodego.LKENodePoolCreateOptions{Count: 0, Type: "g6-standard-2"}, "count"},
		{"count over 100", linodego.LKENodePoolCreateOptions{Count: 101, Type: "g6-standard-2"}, "count"},
		{"long tag", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: []string{strings.Repeat("x", 51)}}, "tags"},
		{"unknown firewall", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", FirewallID: ptr(fw + 1)}, "firewall_id"},
		{"premium without capability", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g7-premium-2"}, "type"},
		{"per-pool version on standard", linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", K8sVersion: ptr("1.35")}, "k8s_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateLKENodePool(ctx, std, tt.opts)
			wantField(t, err, tt.field)
		})
	}
	if len(e.Pools(0)) != 0 {
		t.Fatalf("refused pools were stored: %+v", e.Pools(0))
	}
	if _, err := c.CreateLKENodePool(ctx, std, linodego.LKENodePoolCreateOptions{Count: 50, Type: "g6-standard-2", Tags: []string{strings.Repeat("x", 50)}}); err != nil {
		t.Fatalf("valid pool refused: %v", err)
	}
}

func TestCapacity(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	cluster, _ := e.AddLKECluster("cap", "us-ord", "standard")
	e.SetCapacity("us-ord", "g6-dedicated-8", 2)

	if _, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 3, Type: "g6-dedicated-8"}); err == nil {
		t.Fatal("pool larger than capacity accepted")
	} else if le := apiErr(t, err, http.StatusForbidden); le.Message != CapacityReason {
		t.Fatalf("capacity error is not Linode's: %q", le.Message)
	}
	if _, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 2, Type: "g6-dedicated-8"}); err != nil {
		t.Fatal(err)
	}
	av, err := c.GetRegionAvailability(ctx, "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(av, linodego.RegionAvailability{Region: "us-ord", Plan: "g6-dedicated-8", Available: false}) {
		t.Fatalf("exhausted plan not reported unavailable: %+v", av)
	}
	_, err = c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-dedicated-8"})
	if le := apiErr(t, err, http.StatusForbidden); le.Message != CapacityReason {
		t.Fatalf("instance capacity error: %q", le.Message)
	}
	// Plans the catalogue lists as unavailable start exhausted.
	_, err = c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-central", Type: "g1-gpu-rtx6000-1"})
	if err == nil {
		t.Fatal("unavailable GPU plan created")
	}
}

// TestLostNodeIsReplaced: deleting a pool node's Linode directly makes LKE
// give the node a new one.
func TestLostNodeIsReplaced(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	cluster, _ := e.AddLKECluster("heal", "us-east", "standard")
	pool, _ := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	clk.Step(DefaultDelays().NodeInstance)
	e.Tick()
	first := e.Instances()[0].ID
	if err := c.DeleteInstance(ctx, first); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().NodeInstance + time.Second)
	p, _ := c.GetLKENodePool(ctx, cluster, pool.ID)
	if p.Linodes[0].InstanceID == 0 || p.Linodes[0].InstanceID == first {
		t.Fatalf("node not healed: %+v", p.Linodes)
	}
}

// TestLKEClusterNetwork: a cluster brings its own VPC and subnet in its region and a stack type
// Linode knows, and its answer shows them; anything else is refused on the field at fault.
func TestLKEClusterNetwork(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	vpcOrd, _ := e.AddVPC("ord", "us-ord")
	subnetOrd, _ := e.AddVPCSubnet(vpcOrd, "nodes", "10.0.0.0/24")
	vpcIad, _ := e.AddVPC("iad", "us-iad")
	subnetIad, _ := e.AddVPCSubnet(vpcIad, "nodes", "10.1.0.0/24")
	dual := linodego.LKEClusterStackType("ipv4-ipv6")
	unknownStack := linodego.LKEClusterStackType("ipv6")
	cluster := func(vpcID, subnetID *int, stack *linodego.LKEClusterStackType) linodego.LKEClusterCreateOptions {
		return linodego.LKEClusterCreateOptions{
			Label: "byovpc", Region: "us-ord", K8sVersion: "1.35", VpcID: vpcID, SubnetID: subnetID, StackType: stack,
			NodePools: []linodego.LKENodePoolCreateOptions{{Count: 1, Type: "g6-standard-2"}},
		}
	}

	tests := []struct {
		name  string
		opts  linodego.LKEClusterCreateOptions
		field string
	}{
		{"VPC in another region", cluster(&vpcIad, nil, nil), "vpc_id"},
		{"unknown VPC", cluster(ptr(vpcIad+100), nil, nil), "vpc_id"},
		{"subnet of another VPC", cluster(&vpcOrd, &subnetIad, nil), "subnet_id"},
		{"subnet without its VPC", cluster(nil, &subnetOrd, nil), "subnet_id"},
		{"unknown stack type", cluster(nil, nil, &unknownStack), "stack_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateLKECluster(ctx, tt.opts)
			wantField(t, err, tt.field)
		})
	}

	created, err := c.CreateLKECluster(ctx, cluster(&vpcOrd, &subnetOrd, &dual))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetLKECluster(ctx, created.ID)
	if err != nil || got.VpcID != vpcOrd || got.SubnetID != subnetOrd || got.StackType != dual {
		t.Fatalf("cluster with its own VPC: %+v, %v", got, err)
	}
	plain, err := c.CreateLKECluster(ctx, cluster(nil, nil, nil))
	if err != nil || plain.VpcID != 0 || plain.StackType != "ipv4" {
		t.Fatalf("cluster without a VPC: %+v, %v", plain, err)
	}
}
