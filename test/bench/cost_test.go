package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
)

func TestCostEfficiency(t *testing.T) {
	rows, err := CostEfficiency(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(workloadMixes) {
		t.Fatalf("%d rows, want one per mix (%d)", len(rows), len(workloadMixes))
	}
	for i, row := range rows {
		if !strings.HasPrefix(row.Metric, workloadMixes[i].name+":") {
			t.Fatalf("row %d is %q, want the %s mix", i, row.Metric, workloadMixes[i].name)
		}
		// A little slack for floating point: the GPU mix can meet its bound exactly.
		if row.Value < 1-1e-9 {
			t.Fatalf("%s: fleet/bound = %v, below the lower bound", row.Metric, row.Value)
		}
		if !strings.Contains(row.Note, "fleet $") || !strings.Contains(row.Note, "bound $") {
			t.Fatalf("%s: note %q does not give the fleet and the bound", row.Metric, row.Note)
		}
	}
	if !strings.Contains(rows[3].Note, "g1-gpu-rtx6000") {
		t.Fatalf("the GPU mix ran on %q, not on GPU plans", rows[3].Note)
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
