package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
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

// costNodePool is the NodePool a mix is provisioned for: the bench's own, open to every plan,
// or the README's default, whose requirements replace the bench's.
type costNodePool struct {
	// name says which NodePool in the row's Metric, after "for the".
	name string
	// requirements are the NodePool's; nil keeps the bench's (Linux nodes, every plan).
	requirements []karpv1.NodeSelectorRequirementWithMinValues
}

// openNodePool is the bench's NodePool, which allows every plan.
var openNodePool = costNodePool{name: "NodePool open to every plan"}

// readmeNodePool is the README's default NodePool with the requirements examples/default.yaml
// gives it now. Only its requirements apply: its CPU limit would leave most mixes pending.
func readmeNodePool() (costNodePool, error) {
	path, err := repositoryFile(defaultNodePoolFile)
	if err != nil {
		return costNodePool{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return costNodePool{}, err
	}
	nodePool, err := decodeNodePool(data)
	if err != nil {
		return costNodePool{}, fmt.Errorf("%s: %w", path, err)
	}
	return costNodePool{
		name:         fmt.Sprintf("README's default NodePool (%s)", defaultNodePoolFile),
		requirements: nodePool.Spec.Template.Spec.Requirements,
	}, nil
}

// defaultNodePoolFile is the README's default LinodeNodeClass and NodePool, which make demo applies.
const defaultNodePoolFile = "examples/default.yaml"

// repositoryFile is the path of a file of this repository, found in the first directory up from
// the working directory (go test runs in the package's, cmd/bench wherever it is started) that
// holds it beside this module's go.mod, or else up from this source file's directory, so that a
// cmd/bench binary started outside the repository finds it too.
func repositoryFile(name string) (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, source, _, ok := goruntime.Caller(0); ok {
		starts = append(starts, filepath.Dir(source))
	}
	for _, dir := range starts {
		for {
			goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && goModulePath(goMod) == modulePath {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					return filepath.Join(dir, name), nil
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("%s not found: no directory above %s holds it and the go.mod of %s", name, strings.Join(starts, " or "), modulePath)
}

const modulePath = "github.com/linode/karpenter-provider-linode"

// goModulePath is the path a go.mod's module directive names.
func goModulePath(goMod []byte) string {
	for line := range strings.Lines(string(goMod)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(path), `"`)
		}
	}
	return ""
}

// decodeNodePool is the one NodePool among the YAML documents.
func decodeNodePool(data []byte) (*karpv1.NodePool, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var nodePools []*karpv1.NodePool
	for {
		var object map[string]any
		if err := decoder.Decode(&object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if u := (&unstructured.Unstructured{Object: object}); u.GetAPIVersion() != "karpenter.sh/v1" || u.GetKind() != "NodePool" {
			continue
		}
		nodePool := &karpv1.NodePool{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(object, nodePool); err != nil {
			return nil, err
		}
		nodePools = append(nodePools, nodePool)
	}
	if len(nodePools) != 1 {
		return nil, fmt.Errorf("%d NodePools, want one", len(nodePools))
	}
	return nodePools[0], nil
}

// CostEfficiency provisions each workload mix in us-ord as the controller would: core's
// scheduler over our catalogue decides the NodeClaims, and our cloud provider launches each one
// against the emulator, choosing the plan. The fleet's $/h, the sum of the launched plans'
// prices, is reported as a ratio to a lower bound no fleet can beat (see priceFloor).
//
// Each mix is provisioned twice: for a NodePool open to every plan, and for the README's default
// NodePool as examples/default.yaml has it. A mix the NodePool has no plan for (the GPU mix on
// the default NodePool, which allows standard and dedicated plans) is left out for it.
func CostEfficiency(ctx context.Context) ([]Row, error) {
	ctx, err := controllerContext(ctx)
	if err != nil {
		return nil, err
	}
	readme, err := readmeNodePool()
	if err != nil {
		return nil, fmt.Errorf("reading the README's default NodePool: %w", err)
	}
	var rows []Row
	for _, mix := range workloadMixes {
		for _, pool := range []costNodePool{openNodePool, readme} {
			fleet, err := provisionMix(ctx, mix, pool)
			if errors.Is(err, errNoPlanHoldsPod) && pool.requirements != nil {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s mix, %s: %w", mix.name, pool.name, err)
			}
			rows = append(rows, fleet.row())
		}
	}
	return rows, nil
}

// launchedFleet is what a mix launched for a NodePool, and what it is measured against.
type launchedFleet struct {
	mix   workloadMix
	pool  costNodePool
	price float64
	// plans counts the nodes of each plan.
	plans map[string]int
	// bound is the region's lower bound for the mix over every plan, whatever the NodePool
	// allows, so that both NodePools' ratios compare.
	bound   float64
	binding string
	// oneKind is the cheapest fleet of one plan the NodePool allows.
	oneKind uniformFleet
}

func (f launchedFleet) row() Row {
	note := fmt.Sprintf("fleet $%.3f/h on %s; bound $%.3f/h (%s) in %s; the cheapest fleet of one plan the NodePool allows: $%.3f/h on %d× %s (%.2f× the bound)",
		f.price, formatPlans(f.plans), f.bound, f.binding, benchRegion, f.oneKind.price, f.oneKind.nodes, f.oneKind.plan, f.oneKind.price/f.bound)
	if f.pool.requirements != nil {
		note += "; the NodePool requires " + formatRequirements(f.pool.requirements)
	}
	return Row{
		Scenario: "Cost efficiency",
		Metric:   fmt.Sprintf("%s: %d pods of %s for the %s, fleet $/h ÷ lower bound", f.mix.name, f.mix.pods, formatRequests(f.mix.requests), f.pool.name),
		Value:    f.price / f.bound,
		Unit:     "×",
		Note:     note,
	}
}

// formatRequirements is e.g. "instance-class In [standard dedicated], instance-cpu Lt [49]",
// our labels without their prefix.
func formatRequirements(requirements []karpv1.NodeSelectorRequirementWithMinValues) string {
	parts := make([]string, 0, len(requirements))
	for _, r := range requirements {
		parts = append(parts, fmt.Sprintf("%s %s %v", strings.TrimPrefix(r.Key, apis.Group+"/"), r.Operator, r.Values))
	}
	return strings.Join(parts, ", ")
}

// provisionMix provisions the mix on a fresh emulator, so that each fleet is the mix's alone.
// It fails with errNoPlanHoldsPod, launching nothing, when the NodePool allows no available
// plan that holds one pod of the mix.
func provisionMix(ctx context.Context, mix workloadMix, pool costNodePool) (launchedFleet, error) {
	// Every mix sees the same catalogue, GPU plans launchable, so that the bounds compare.
	linode, err := startLinodeCloud(ctx, func(e *emulator.Emulator) {
		for _, plan := range gpuPlans {
			e.SetCapacity(benchRegion, plan, mix.pods)
		}
	})
	if err != nil {
		return launchedFleet{}, err
	}
	defer linode.close()
	if pool.requirements != nil {
		// The catalogue does not depend on the requirements: the scheduler applies them.
		linode.nodePool.Spec.Template.Spec.Requirements = pool.requirements
	}
	allowed := corescheduling.NewNodeSelectorRequirementsWithMinValues(linode.nodePool.Spec.Template.Spec.Requirements...)
	var allowedTypes []*cloudprovider.InstanceType
	for _, it := range linode.instanceTypes {
		if it.Requirements.Intersects(allowed) == nil {
			allowedTypes = append(allowedTypes, it)
		}
	}
	oneKind, err := cheapestUniformFleet(allowedTypes, mix)
	if err != nil {
		return launchedFleet{}, err
	}

	pods := mix.podList()
	solution, err := linode.solve(ctx, pods)
	if err != nil {
		return launchedFleet{}, err
	}
	// As the provisioner does before it creates the NodeClaims.
	results := solution.results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes)
	if len(results.PodErrors) > 0 {
		return launchedFleet{}, fmt.Errorf("after truncating the instance types: %w", firstPodErrors(results.PodErrors, 3))
	}
	for i, planned := range results.NewNodeClaims {
		nodeClaim := planned.ToNodeClaim()
		nodeClaim.Name = fmt.Sprintf("%s-%04d", strings.ToLower(mix.name), i)
		if _, err := linode.cloudProvider.Create(ctx, nodeClaim); err != nil {
			return launchedFleet{}, fmt.Errorf("launching NodeClaim %d of %d: %w", i+1, len(results.NewNodeClaims), err)
		}
	}

	// The fleet is what the emulator's account holds, priced as the catalogue prices the region.
	prices := map[string]float64{}
	for _, it := range linode.instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			prices[it.Name] = offering.Price
		}
	}
	fleet := launchedFleet{mix: mix, pool: pool, plans: map[string]int{}, oneKind: oneKind}
	for _, nodePool := range linode.emulator.Pools(linode.clusterID) {
		price, ok := prices[nodePool.Type]
		if !ok {
			return launchedFleet{}, fmt.Errorf("pool %d has plan %s, which has no available offering", nodePool.ID, nodePool.Type)
		}
		fleet.price += price * float64(nodePool.Count)
		fleet.plans[nodePool.Type] += nodePool.Count
	}
	if len(fleet.plans) == 0 {
		return launchedFleet{}, errors.New("nothing was launched")
	}

	floor, err := priceFloor(linode.instanceTypes)
	if err != nil {
		return launchedFleet{}, err
	}
	fleet.bound, fleet.binding = floor.bound(mix.total())
	return fleet, nil
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

// errNoPlanHoldsPod is returned when no available plan can hold one pod of a mix.
var errNoPlanHoldsPod = errors.New("no available plan holds one pod")

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
		return uniformFleet{}, errNoPlanHoldsPod
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
