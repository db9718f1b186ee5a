package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
)

// gpuPlans are the GPU plans the catalogue lists; Linode sells them in limited numbers and the
// emulator's catalogue, like the real availability endpoint, has them sold out in us-ord.
var gpuPlans = []string{"g1-gpu-rtx6000-1", "g1-gpu-rtx6000-2", "g1-gpu-rtx6000-3", "g1-gpu-rtx6000-4"}

// workloadMix is a set of identical pods, as a Deployment or a Job would make.
type workloadMix struct {
	name     string
	pods     int
	requests corev1.ResourceList
}

var workloadMixes = []workloadMix{
	{name: "web", pods: 300, requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")}},
	{name: "batch", pods: 60, requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}},
	{name: "memory-heavy", pods: 30, requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("16Gi")}},
	{name: "GPU", pods: 8, requests: corev1.ResourceList{instancetype.ResourceNVIDIAGPU: resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")}},
}

// CostEfficiency provisions each workload mix in us-ord as the controller would: core's
// scheduler over our catalogue decides the NodeClaims, and our cloud provider launches each one
// against the emulator, choosing the plan. The fleet's $/h, the sum of the launched plans'
// prices, is reported as a ratio to a lower bound no fleet can beat (see priceFloor).
func CostEfficiency(ctx context.Context) ([]Row, error) {
	ctx, err := controllerContext(ctx)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, mix := range workloadMixes {
		row, err := provisionMix(ctx, mix)
		if err != nil {
			return nil, fmt.Errorf("%s mix: %w", mix.name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// provisionMix provisions the mix on a fresh emulator, so that each fleet is the mix's alone.
func provisionMix(ctx context.Context, mix workloadMix) (Row, error) {
	// Every mix sees the same catalogue, GPU plans launchable, so that the bounds compare.
	linode, err := startLinodeCloud(ctx, func(e *emulator.Emulator) {
		for _, plan := range gpuPlans {
			e.SetCapacity(benchRegion, plan, mix.pods)
		}
	})
	if err != nil {
		return Row{}, err
	}
	defer linode.close()

	pods := mix.podList()
	solution, err := linode.solve(ctx, pods)
	if err != nil {
		return Row{}, err
	}
	// As the provisioner does before it creates the NodeClaims.
	results := solution.results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes)
	if len(results.PodErrors) > 0 {
		return Row{}, fmt.Errorf("after truncating the instance types: %w", firstPodErrors(results.PodErrors, 3))
	}
	for i, planned := range results.NewNodeClaims {
		nodeClaim := planned.ToNodeClaim()
		nodeClaim.Name = fmt.Sprintf("%s-%04d", strings.ToLower(mix.name), i)
		if _, err := linode.cloudProvider.Create(ctx, nodeClaim); err != nil {
			return Row{}, fmt.Errorf("launching NodeClaim %d of %d: %w", i+1, len(results.NewNodeClaims), err)
		}
	}

	// The fleet is what the emulator's account holds, priced as the catalogue prices the region.
	prices := map[string]float64{}
	for _, it := range linode.instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			prices[it.Name] = offering.Price
		}
	}
	fleet, plans := 0.0, map[string]int{}
	for _, pool := range linode.emulator.Pools(linode.clusterID) {
		price, ok := prices[pool.Type]
		if !ok {
			return Row{}, fmt.Errorf("pool %d has plan %s, which has no available offering", pool.ID, pool.Type)
		}
		fleet += price * float64(pool.Count)
		plans[pool.Type] += pool.Count
	}
	if len(plans) == 0 {
		return Row{}, errors.New("nothing was launched")
	}

	floor, err := priceFloor(linode.instanceTypes)
	if err != nil {
		return Row{}, err
	}
	bound, binding := floor.bound(mix.total())
	oneKind, err := cheapestUniformFleet(linode.instanceTypes, mix)
	if err != nil {
		return Row{}, err
	}
	return Row{
		Scenario: "Cost efficiency",
		Metric:   fmt.Sprintf("%s: %d pods of %s, fleet $/h ÷ lower bound", mix.name, mix.pods, formatRequests(mix.requests)),
		Value:    fleet / bound,
		Unit:     "×",
		Note: fmt.Sprintf("fleet $%.3f/h on %s; bound $%.3f/h (%s) in %s; the cheapest fleet of one plan: $%.3f/h on %d× %s (%.2f× the bound)",
			fleet, formatPlans(plans), bound, binding, benchRegion, oneKind.price, oneKind.nodes, oneKind.plan, oneKind.price/bound),
	}, nil
}

func (m workloadMix) podList() []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, m.pods)
	for i := range m.pods {
		name := fmt.Sprintf("%s-%04d", strings.ToLower(m.name), i)
		pods = append(pods, coretest.UnschedulablePod(coretest.PodOptions{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{"app": m.name}},
			// Extended resources such as GPUs must be limited as much as they are requested.
			ResourceRequirements: corev1.ResourceRequirements{Requests: m.requests, Limits: extendedResources(m.requests)},
		}))
	}
	return pods
}

// total is what every pod of the mix asks for together, in vCPU, GiB and GPUs.
func (m workloadMix) total() demand {
	n := float64(m.pods)
	return demand{
		vcpus: n * m.requests.Cpu().AsApproximateFloat64(),
		gib:   n * m.requests.Memory().AsApproximateFloat64() / (1 << 30),
		gpus:  n * m.requests.Name(instancetype.ResourceNVIDIAGPU, resource.DecimalSI).AsApproximateFloat64(),
	}
}

type demand struct{ vcpus, gib, gpus float64 }

// floor is the cheapest price of each resource among the region's available plans, each from
// the plan that sells it cheapest, counting what a plan sells (its vCPUs, GiB and GPUs) rather
// than what a node of it can allocate after the kubelet's and the hypervisor's share.
type floor struct {
	perVCPU, perGiB, perGPU    float64
	vcpuPlan, gibPlan, gpuPlan string
}

func priceFloor(instanceTypes []*cloudprovider.InstanceType) (floor, error) {
	f := floor{perVCPU: math.Inf(1), perGiB: math.Inf(1), perGPU: math.Inf(1)}
	for _, it := range instanceTypes {
		offering := it.Offerings.Available().Cheapest()
		if offering == nil {
			continue
		}
		vcpus, err := planFigure(it, v1.LabelInstanceCPU)
		if err != nil {
			return floor{}, err
		}
		mib, err := planFigure(it, v1.LabelInstanceMemory)
		if err != nil {
			return floor{}, err
		}
		gpus, err := planFigure(it, v1.LabelInstanceGPUCount)
		if err != nil {
			return floor{}, err
		}
		if p := offering.Price / vcpus; p < f.perVCPU {
			f.perVCPU, f.vcpuPlan = p, it.Name
		}
		if p := offering.Price / (mib / 1024); p < f.perGiB {
			f.perGiB, f.gibPlan = p, it.Name
		}
		if gpus > 0 {
			if p := offering.Price / gpus; p < f.perGPU {
				f.perGPU, f.gpuPlan = p, it.Name
			}
		}
	}
	if f.vcpuPlan == "" {
		return floor{}, errors.New("no plan has an available offering")
	}
	return f, nil
}

// bound is the lowest $/h any fleet can cost for the demand, and which resource sets it. Every
// plan's price is at least its vCPUs at the cheapest $/vCPU, and at least its GiB at the
// cheapest $/GiB (and its GPUs at the cheapest $/GPU), so a fleet costs at least the largest of
// those three products over the whole demand. Their sum would not be a bound: one plan's price
// pays for its CPU and its memory at once. The cheapest $/vCPU and $/GiB come from different
// plans (in us-ord, Linode 2GB and High Memory 24GB), so no fleet reaches the bound.
func (f floor) bound(d demand) (float64, string) {
	bound := d.vcpus * f.perVCPU
	binding := fmt.Sprintf("%.4g vCPU × $%.5f/vCPU-h of %s", d.vcpus, f.perVCPU, f.vcpuPlan)
	if b := d.gib * f.perGiB; b > bound {
		bound, binding = b, fmt.Sprintf("%.4g GiB × $%.5f/GiB-h of %s", d.gib, f.perGiB, f.gibPlan)
	}
	if d.gpus > 0 {
		if b := d.gpus * f.perGPU; b > bound {
			bound, binding = b, fmt.Sprintf("%.4g GPUs × $%.3f/GPU-h of %s", d.gpus, f.perGPU, f.gpuPlan)
		}
	}
	return bound, binding
}

// uniformFleet is a fleet of nodes of one plan.
type uniformFleet struct {
	plan  string
	nodes int
	price float64
}

// cheapestUniformFleet is the cheapest fleet of identical nodes that holds the mix, each node
// taking as many pods as its allocatable resources and pod limit allow. It is a yardstick for
// the scheduler's choice, between the unreachable bound and the fleet launched: core packs a
// batch onto as few NodeClaims as the largest plans allow, and Linode's largest plans cost more
// per vCPU than the mid-sized ones.
func cheapestUniformFleet(instanceTypes []*cloudprovider.InstanceType, mix workloadMix) (uniformFleet, error) {
	best := uniformFleet{price: math.Inf(1)}
	for _, it := range instanceTypes {
		offering := it.Offerings.Available().Cheapest()
		if offering == nil {
			continue
		}
		allocatable := it.Allocatable()
		perNode := allocatable.Pods().Value()
		for name, request := range mix.requests {
			available := allocatable[name]
			perNode = min(perNode, available.MilliValue()/request.MilliValue())
		}
		if perNode == 0 {
			continue
		}
		nodes := (int64(mix.pods) + perNode - 1) / perNode
		if price := float64(nodes) * offering.Price; price < best.price {
			best = uniformFleet{plan: it.Name, nodes: int(nodes), price: price}
		}
	}
	if best.plan == "" {
		return uniformFleet{}, errors.New("no available plan holds one pod")
	}
	return best, nil
}

// planFigure reads one of the plan's numeric labels (vCPUs, memory in MiB, GPUs).
func planFigure(it *cloudprovider.InstanceType, key string) (float64, error) {
	value, err := strconv.ParseFloat(it.Requirements.Get(key).Any(), 64)
	if err != nil {
		return 0, fmt.Errorf("plan %s has no number for %s: %w", it.Name, key, err)
	}
	return value, nil
}

func extendedResources(requests corev1.ResourceList) corev1.ResourceList {
	limits := corev1.ResourceList{}
	for name, quantity := range requests {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			limits[name] = quantity
		}
	}
	return limits
}

// formatRequests is e.g. "250m CPU, 512Mi" or "1 GPU, 4 CPU, 16Gi".
func formatRequests(requests corev1.ResourceList) string {
	var parts []string
	if gpus, ok := requests[instancetype.ResourceNVIDIAGPU]; ok {
		parts = append(parts, gpus.String()+" GPU")
	}
	parts = append(parts, requests.Cpu().String()+" CPU", requests.Memory().String())
	return strings.Join(parts, ", ")
}

// formatPlans is e.g. "3× g6-dedicated-48, 1× g6-standard-6", most used first.
func formatPlans(plans map[string]int) string {
	names := slices.SortedFunc(maps.Keys(plans), func(a, b string) int {
		if plans[a] != plans[b] {
			return plans[b] - plans[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%d× %s", plans[name], name))
	}
	return strings.Join(parts, ", ")
}
