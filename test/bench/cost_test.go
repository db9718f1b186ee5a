package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
)

func TestCostEfficiency(t *testing.T) {
	rows, err := CostEfficiency(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Each mix for the open NodePool, then for the README's, but for the GPU mix, for which the
	// README's NodePool allows no plan.
	var want []string
	for _, mix := range workloadMixes {
		want = append(want, mix.name+": "+openNodePool.name)
		if mix.name != "GPU" {
			want = append(want, mix.name+": README's default NodePool")
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want), want)
	}
	for i, row := range rows {
		mix, pool, _ := strings.Cut(want[i], ": ")
		if !strings.HasPrefix(row.Metric, mix+":") || !strings.Contains(row.Metric, pool) {
			t.Fatalf("row %d is %q, want the %s mix for the %s", i, row.Metric, mix, pool)
		}
		// A little slack for floating point: the GPU mix can meet its bound exactly.
		if row.Value < 1-1e-9 {
			t.Fatalf("%s: fleet/bound = %v, below the lower bound", row.Metric, row.Value)
		}
		if !strings.Contains(row.Note, "fleet $") || !strings.Contains(row.Note, "bound $") {
			t.Fatalf("%s: note %q does not give the fleet and the bound", row.Metric, row.Note)
		}
	}
	if gpu := rows[len(rows)-1]; !strings.Contains(gpu.Note, "g1-gpu-rtx6000") {
		t.Fatalf("the GPU mix ran on %q, not on GPU plans", gpu.Note)
	}
}

// The README's default NodePool keeps the batch mix off the largest plans, whose vCPUs cost up
// to four times as much, and launches only plans it allows.
func TestReadmeNodePoolLaunchesCheaperBatchFleet(t *testing.T) {
	ctx, err := controllerContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	readme, err := readmeNodePool()
	if err != nil {
		t.Fatal(err)
	}
	batch := workloadMixes[1]
	open, err := provisionMix(ctx, batch, openNodePool)
	if err != nil {
		t.Fatal(err)
	}
	capped, err := provisionMix(ctx, batch, readme)
	if err != nil {
		t.Fatal(err)
	}
	if capped.price >= open.price {
		t.Fatalf("batch mix for the README's NodePool: $%.3f/h on %s, not cheaper than $%.3f/h on %s for the open one",
			capped.price, formatPlans(capped.plans), open.price, formatPlans(open.plans))
	}
	if capped.bound != open.bound {
		t.Fatalf("bounds differ: $%v and $%v; both NodePools' ratios must be to the region's bound", capped.bound, open.bound)
	}

	linode, err := startLinodeCloud(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer linode.close()
	allowed := corescheduling.NewNodeSelectorRequirementsWithMinValues(readme.requirements...)
	for _, it := range linode.instanceTypes {
		if _, launched := capped.plans[it.Name]; launched {
			if err := it.Requirements.Intersects(allowed); err != nil {
				t.Errorf("launched %s, which the README's NodePool does not allow: %v", it.Name, err)
			}
		}
	}
}

func TestDecodeNodePool(t *testing.T) {
	nodePool, err := decodeNodePool([]byte(`apiVersion: karpenter.k8s.linode/v1
kind: LinodeNodeClass
metadata:
  name: default
---
# a comment only
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.linode, kind: LinodeNodeClass, name: default}
      requirements:
        - key: karpenter.k8s.linode/instance-cpu
          operator: Lt
          values: ["49"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := nodePool.Spec.Template.Spec.Requirements; len(r) != 1 || r[0].Key != v1.LabelInstanceCPU || r[0].Operator != "Lt" || len(r[0].Values) != 1 || r[0].Values[0] != "49" {
		t.Fatalf("requirements = %+v", r)
	}
	if _, err := decodeNodePool([]byte("apiVersion: karpenter.k8s.linode/v1\nkind: LinodeNodeClass\n")); err == nil {
		t.Fatal("a file without a NodePool decoded")
	}
}

func TestPriceFloorBound(t *testing.T) {
	linode, err := startLinodeCloud(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer linode.close()
	f, err := priceFloor(linode.instanceTypes)
	if err != nil {
		t.Fatal(err)
	}
	// us-ord list prices: Linode 2GB at $0.018 for 1 vCPU, Linode 24GB (High Memory) at $0.09 for
	// 24 GiB; the GPU plans are sold out until the region is given capacity.
	if f.vcpuPlan != "g6-standard-1" || !near(f.perVCPU, 0.018) || f.gibPlan != "g7-highmem-1" || !near(f.perGiB, 0.00375) || f.gpuPlan != "" {
		t.Fatalf("floor = %+v", f)
	}
	// No plan pays for less than its own vCPUs and GiB at those prices.
	for _, it := range linode.instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			vcpus, _ := planFigure(it, v1.LabelInstanceCPU)
			if bound, _ := f.bound(demand{vcpus: vcpus}); bound > offering.Price+1e-12 {
				t.Fatalf("%s costs $%v, below its vCPU bound $%v", it.Name, offering.Price, bound)
			}
		}
	}
	bound, binding := f.bound(demand{vcpus: 10, gib: 100})
	if !near(bound, 0.375) || !strings.Contains(binding, "GiB") {
		t.Fatalf("bound for 10 vCPU and 100 GiB = %v (%s), want $0.375 set by memory", bound, binding)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A fleet of one plan is a fleet: it cannot cost less than the bound.
func TestCheapestUniformFleetRespectsBound(t *testing.T) {
	linode, err := startLinodeCloud(context.Background(), func(e *emulator.Emulator) {
		for _, plan := range gpuPlans {
			e.SetCapacity(benchRegion, plan, 10)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer linode.close()
	f, err := priceFloor(linode.instanceTypes)
	if err != nil {
		t.Fatal(err)
	}
	for _, mix := range workloadMixes {
		fleet, err := cheapestUniformFleet(linode.instanceTypes, mix)
		if err != nil {
			t.Fatal(err)
		}
		if bound, _ := f.bound(mix.total()); fleet.price < bound-1e-9 {
			t.Fatalf("%s: %d× %s cost $%v, below the bound $%v", mix.name, fleet.nodes, fleet.plan, fleet.price, bound)
		}
	}
	// One 16 GiB pod fills a High Memory 24GB node, the cheapest way to buy 16 GiB.
	memoryHeavy, err := cheapestUniformFleet(linode.instanceTypes, workloadMixes[2])
	if err != nil {
		t.Fatal(err)
	}
	if memoryHeavy.plan != "g7-highmem-1" || memoryHeavy.nodes != workloadMixes[2].pods {
		t.Fatalf("memory-heavy mix on %d× %s, want one g7-highmem-1 per pod", memoryHeavy.nodes, memoryHeavy.plan)
	}
}
