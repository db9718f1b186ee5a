package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// gpuPlans are the GPU plans the catalogue lists; Linode sells them in limited numbers and the
// emulator's catalogue, like the real availability endpoint, has them sold out in us-ord.
var gpuPlans = []string{"g1-gpu-rtx6000-1", "g1-gpu-rtx6000-2", "g1-gpu-rtx6000-3", "g1-gpu-rtx6000-4"}

// costScenario names the cost rows, in process and on the cluster.
const costScenario = "Cost efficiency"

// CostYardsticks says, for a report's settings, what the cost scenarios measure fleets against.
const CostYardsticks = "lower bound: the linear-programming relaxation of packing the mix's pods onto whole nodes of every plan of the region " +
	"(patterns of whole pods a node holds, Gilmore and Gomory's, by column generation; only node counts fractional), on the allocatable " +
	"resources the provider reports less the mix's DaemonSets, and at least what whole nodes cost for each kind of pod alone; " +
	"single-plan fleet: the cheapest fleet of one plan the NodePool allows, first-fit decreasing"

// Cost targets, from the issue.
const (
	costTargetMix    = "≤ 1.2× (or the cheapest fleet that fits)"
	costTargetMean   = "≤ 1.12×"
	costTargetPlan   = "0 dearer"
	costTargetShrink = "≤ 1.3×"
)

// costNodePool is a NodePool a mix is provisioned for: the bench's own, open to every plan, or
// one of the examples the README recommends.
type costNodePool struct {
	// name says which NodePool in the rows.
	name string
	// requirements and taints are the NodePool's.
	requirements []karpv1.NodeSelectorRequirementWithMinValues
	taints       []corev1.Taint
}

// openNodePool is the bench's NodePool, which allows every plan: every Linode is a Linux node.
var openNodePool = costNodePool{name: "NodePool open to every plan", requirements: []karpv1.NodeSelectorRequirementWithMinValues{
	{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Linux)}},
}}

// Example NodePools: the README's default, and the GPU NodePool it points GPU pods to.
const (
	defaultNodePoolFile = "examples/default.yaml"
	gpuNodePoolFile     = "examples/gpu.yaml"
)

// readmeNodePools are the README's NodePools: the default for every mix but GPU mixes, which go
// to examples/gpu.yaml's. Only their requirements and taints apply; their limits would hold
// mixes back.
type readmeNodePools struct{ general, gpu costNodePool }

func loadReadmeNodePools() (readmeNodePools, error) {
	general, err := exampleNodePool(defaultNodePoolFile)
	if err != nil {
		return readmeNodePools{}, err
	}
	gpu, err := exampleNodePool(gpuNodePoolFile)
	if err != nil {
		return readmeNodePools{}, err
	}
	return readmeNodePools{general: general, gpu: gpu}, nil
}

func (r readmeNodePools) forMix(m costMix) costNodePool {
	if m.gpu {
		return r.gpu
	}
	return r.general
}

func exampleNodePool(file string) (costNodePool, error) {
	path, err := shared.RepositoryFile(file)
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
		name:         fmt.Sprintf("README's NodePool (%s)", file),
		requirements: nodePool.Spec.Template.Spec.Requirements,
		taints:       nodePool.Spec.Template.Spec.Taints,
	}, nil
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

// CostEfficiency provisions each mix in us-ord in process, as the controller would in rounds:
// core's scheduler over our cloud provider's instance types (sized by the sizing policy for the
// pods still pending) decides the NodeClaims, our cloud provider launches each against the
// emulator, core's cluster state records what was placed, and the pods core could not place yet
// go to the next round. The fleet's $/h is compared with the mix's lower bound and the cheapest
// fleet of one plan. It is the fast check of the cluster scenario's figures; each mix runs for a
// NodePool open to every plan and for the README's NodePools.
func CostEfficiency(ctx context.Context, mixNames []string) ([]Row, error) {
	// Mixes with NodePools of their own (a fallback, an overlay) run on the cluster only.
	mixes := slices.DeleteFunc(slices.Clone(selectMixes(costMixes, mixNames)), costMix.ownsNodePools)
	variants, err := inProcessFleets(ctx, mixes)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, v := range variants {
		for _, fleet := range v.fleets {
			rows = append(rows, fleet.row("in process"))
		}
		rows = append(rows, summaryRows(v.fleets, "in process", variantName(v.name))...)
	}
	return rows, nil
}

// variantFleets are the fleets the mixes launched for one NodePool variant: "open" to every plan,
// or the "readme"'s.
type variantFleets struct {
	name   string
	fleets []mixFleet
}

// inProcessFleets provisions each mix in process for the NodePool open to every plan, then for
// the README's.
func inProcessFleets(ctx context.Context, mixes []costMix) ([]variantFleets, error) {
	ctx, err := planner.ControllerContext(ctx)
	if err != nil {
		return nil, err
	}
	readme, err := loadReadmeNodePools()
	if err != nil {
		return nil, fmt.Errorf("reading the README's NodePools: %w", err)
	}
	var variants []variantFleets
	for _, variant := range []string{"open", "readme"} {
		v := variantFleets{name: variant}
		for _, mix := range mixes {
			pool := openNodePool
			if variant == "readme" {
				pool = readme.forMix(mix)
			}
			fleet, err := provisionInProcess(ctx, mix, pool)
			if err != nil {
				return nil, fmt.Errorf("%s mix (%s), %s: %w", mix.name, mix.describe(), pool.name, err)
			}
			v.fleets = append(v.fleets, fleet)
		}
		variants = append(variants, v)
	}
	return variants, nil
}

func variantName(variant string) string {
	if variant == "open" {
		return openNodePool.name
	}
	return "README's NodePools"
}

// mixFleet is what a mix launched for a NodePool, and what it is measured against.
type mixFleet struct {
	mix   costMix
	pool  costNodePool
	price float64
	// plans counts the nodes of each plan.
	plans map[string]int
	yardsticks
	// rounds is how many provisioning rounds launched the fleet (in process).
	rounds int
	// expected is the price of the fleet the sizing policy expected in the first round (in
	// process), 0 if it offered every plan.
	expected float64
}

func (f mixFleet) ratio() float64 { return f.price / f.bound }

// coreRatio is the fleet's price over the bound under core's placement of hostname spreads.
func (f mixFleet) coreRatio() float64 { return f.price / f.coreBound }

func (f mixFleet) row(where string) Row {
	note := fmt.Sprintf("fleet $%.3f/h on %s; lower bound $%.3f/h in %s; cheapest fleet of one plan the NodePool allows: $%.3f/h on %d× %s (%.2f× the bound)",
		f.price, planner.FormatPlans(f.plans), f.bound, benchRegion, f.onePlan.Price, f.onePlan.Nodes, f.onePlan.Plan, f.onePlan.Price/f.bound)
	if f.mix.spreadsOverHostnames() {
		note += fmt.Sprintf("; under core's placement of pods spread over hostnames (at most maxSkew of them a node): lower bound $%.3f/h (fleet %.2f× it), cheapest fleet of one plan $%.3f/h on %d× %s",
			f.coreBound, f.coreRatio(), f.coreOnePlan.Price, f.coreOnePlan.Nodes, f.coreOnePlan.Plan)
	}
	if f.rounds > 0 {
		note += fmt.Sprintf("; %d provisioning round(s)", f.rounds)
	}
	note += "; the NodePool requires " + formatRequirements(f.pool.requirements)
	return Row{
		Scenario: costScenario,
		Metric:   fmt.Sprintf("%s (%s, %s): %s, fleet $/h ÷ lower bound", f.mix.name, f.pool.name, where, f.mix.describe()),
		Value:    f.ratio(),
		Unit:     "×",
		Target:   costTargetMix,
		Note:     note,
	}
}

// summaryRows are the geometric mean of the ratios and how many mixes cost more than the
// cheapest fleet of one plan.
func summaryRows(fleets []mixFleet, where, pools string) []Row {
	logSum, dearer := 0.0, []string{}
	for _, f := range fleets {
		logSum += math.Log(f.ratio())
		if f.price > f.onePlan.Price+1e-9 {
			dearer = append(dearer, fmt.Sprintf("%s ($%.3f against $%.3f)", f.mix.name, f.price, f.onePlan.Price))
		}
	}
	note := "none"
	if len(dearer) > 0 {
		note = strings.Join(dearer, ", ")
	}
	what := fmt.Sprintf("all %d mixes (%s, %s)", len(fleets), pools, where)
	return append([]Row{
		{Scenario: costScenario, Metric: what + ": geometric mean of fleet ÷ lower bound",
			Value: math.Exp(logSum / float64(len(fleets))), Unit: "×", Target: costTargetMean},
		{Scenario: costScenario, Metric: what + ": mixes dearer than the cheapest fleet of one plan",
			Value: float64(len(dearer)), Target: costTargetPlan, Note: note},
	}, corePlacementRows(fleets, costScenario, what)...)
}

// corePlacementRows measure the fleets against the yardsticks under core's placement of pods
// spread over hostnames, which no provider can change: what they leave is the provider's share.
func corePlacementRows(fleets []mixFleet, scenario, what string) []Row {
	logSum, above, dearer := 0.0, []string{}, []string{}
	for _, f := range fleets {
		logSum += math.Log(f.coreRatio())
		if f.coreRatio() > 1.2 {
			above = append(above, fmt.Sprintf("%s %.2f×", f.mix.name, f.coreRatio()))
		}
		if f.price > f.coreOnePlan.Price+1e-9 {
			dearer = append(dearer, fmt.Sprintf("%s ($%.3f against $%.3f)", f.mix.name, f.price, f.coreOnePlan.Price))
		}
	}
	const placement = " under core's placement of pods spread over hostnames (at most maxSkew of them a node)"
	return []Row{
		{Scenario: scenario, Metric: what + ": geometric mean of fleet ÷ lower bound" + placement,
			Value: math.Exp(logSum / float64(len(fleets))), Unit: "×"},
		{Scenario: scenario, Metric: what + ": mixes above 1.2× their bound" + placement,
			Value: float64(len(above)), Note: joinOrNone(above)},
		{Scenario: scenario, Metric: what + ": mixes dearer than the cheapest fleet of one plan" + placement,
			Value: float64(len(dearer)), Note: joinOrNone(dearer)},
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

// provisionInProcess provisions the mix on a fresh emulator, in rounds until every pod is
// placed, so that each fleet is the mix's alone.
func provisionInProcess(ctx context.Context, mix costMix, pool costNodePool) (mixFleet, error) {
	// Every mix sees the same catalogue, GPU plans launchable, so that the bounds compare.
	linode, err := startLinodeCloud(ctx, func(e *emulator.Emulator) {
		for _, plan := range gpuPlans {
			e.SetCapacity(benchRegion, plan, mix.pods())
		}
	})
	if err != nil {
		return mixFleet{}, err
	}
	defer linode.close()
	nodePool := linode.nodePool.DeepCopy()
	nodePool.Spec.Template.Spec.Requirements = pool.requirements
	nodePool.Spec.Template.Spec.Taints = pool.taints
	linode.nodePool = nodePool

	pods, daemons, err := linode.createMix(ctx, mix)
	if err != nil {
		return mixFleet{}, err
	}
	fleet := mixFleet{mix: mix, pool: pool, plans: map[string]int{}}
	if fleet.yardsticks, err = mixYardsticks(linode.instanceTypes, nodePool, mix, pods, daemons); err != nil {
		return mixFleet{}, err
	}

	provisioned, err := planner.Provision(ctx, linode.cloud(), []*karpv1.NodePool{nodePool}, pods, daemons, planner.ProvisionOptions{
		NodeClaimName: func(round, i int) string { return fmt.Sprintf("%s-%d-%04d", mix.name, round, i) },
		AfterSolve: func(round int) error {
			if round == 1 {
				fleet.expected, _, err = test.NodePoolMetric("karpenter_linode_sizing_expected_fleet_price", nodePool.Name)
			}
			return err
		},
	})
	if err != nil {
		return mixFleet{}, err
	}
	if len(provisioned.Unplaced) > 0 {
		return mixFleet{}, fmt.Errorf("round %d placed none of %d pending pods: %w", provisioned.Rounds, len(provisioned.Unplaced), planner.FirstPodErrors(provisioned.Unplaced, 3))
	}
	fleet.rounds = provisioned.Rounds

	// The fleet is what the emulator's account holds, priced as the catalogue prices the region.
	prices := map[string]float64{}
	for _, it := range linode.instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			prices[it.Name] = offering.Price
		}
	}
	for _, lkePool := range linode.emulator.Pools(linode.clusterID) {
		price, ok := prices[lkePool.Type]
		if !ok {
			return mixFleet{}, fmt.Errorf("pool %d has plan %s, which has no available offering", lkePool.ID, lkePool.Type)
		}
		fleet.price += price * float64(lkePool.Count)
		fleet.plans[lkePool.Type] += lkePool.Count
	}
	return fleet, nil
}

// createMix creates the mix's pods, pending, and its DaemonSets in the in-memory cluster, and
// returns the pods and the pods the DaemonSets would run on each node.
func (c *linodeCloud) createMix(ctx context.Context, mix costMix) ([]*corev1.Pod, []*corev1.Pod, error) {
	var pods []*corev1.Pod
	for _, d := range mix.deployments {
		spec := mix.podSpec(d, c.nodePool.Name)
		for i := range d.replicas {
			name := fmt.Sprintf("%s-%s-%04d", mix.name, d.name, i)
			pod := coretest.UnschedulablePod(coretest.PodOptions{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.Namespace, UID: types.UID(name), Labels: mix.podLabels(d, c.nodePool.Name)}})
			pod.Spec = spec
			if err := c.kubeClient.Create(ctx, pod); err != nil {
				return nil, nil, err
			}
			pods = append(pods, pod)
		}
	}
	var daemons []*corev1.Pod
	for _, d := range mix.daemonSets {
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: mix.name + "-" + d.name, Namespace: harness.Namespace, UID: types.UID(mix.name + "-" + d.name)},
			Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: mix.daemonSetSpec(d, c.nodePool.Name)}},
		}
		if err := c.kubeClient.Create(ctx, ds); err != nil {
			return nil, nil, err
		}
		daemons = append(daemons, daemonset.PodForDaemonSet(ds))
	}
	return pods, daemons, nil
}

// yardsticks are what a mix's fleet is measured against, each on the room a node has after the
// mix's DaemonSets.
type yardsticks struct {
	// bound is the region's lower bound for the mix over every plan, whatever the NodePool
	// allows, so that both NodePools' ratios compare.
	bound float64
	// onePlan is the cheapest fleet of one plan the NodePool allows.
	onePlan planner.PlanFleet
	// coreBound and coreOnePlan are the same under core's placement of pods spread over
	// hostnames (planner.HostnameSpreadLimit): what is left above them is the provider's to win, what
	// lies between them and bound and onePlan is core's scheduler's. They equal bound and
	// onePlan for mixes without such pods.
	coreBound   float64
	coreOnePlan planner.PlanFleet
}

// mixYardsticks measures the mix's pods against the region's plans and the NodePool's.
func mixYardsticks(instanceTypes []*cloudprovider.InstanceType, nodePool *karpv1.NodePool, mix costMix, pods, daemons []*corev1.Pod) (yardsticks, error) {
	var overhead corev1.ResourceList
	if len(daemons) > 0 {
		overhead = resources.RequestsForPods(daemons...)
	}
	all := planner.PlanRooms(instanceTypes, overhead)
	allowed := corescheduling.NewNodeSelectorRequirementsWithMinValues(nodePool.Spec.Template.Spec.Requirements...)
	var allowedPlans []planner.PlanRoom
	for _, it := range instanceTypes {
		if it.Requirements.Intersects(allowed) == nil {
			if j := slices.IndexFunc(all, func(p planner.PlanRoom) bool { return p.Name == it.Name }); j >= 0 {
				allowedPlans = append(allowedPlans, all[j])
			}
		}
	}
	var y yardsticks
	var err error
	kinds := podKinds(mix, pods)
	unlimited := planner.WithoutPerNodeLimits(kinds)
	if y.bound, err = planner.LowerBound(all, unlimited); err != nil {
		return yardsticks{}, err
	}
	if y.onePlan, err = planner.CheapestPlanFleet(allowedPlans, unlimited); err != nil {
		return yardsticks{}, err
	}
	if y.coreBound, err = planner.LowerBound(all, kinds); err != nil {
		return yardsticks{}, err
	}
	if y.coreOnePlan, err = planner.CheapestPlanFleet(allowedPlans, kinds); err != nil {
		return yardsticks{}, err
	}
	return y, nil
}

// podKinds groups the mix's pods by Deployment: identical requests and node requirements, and
// the most of them core places on a node.
func podKinds(mix costMix, pods []*corev1.Pod) []planner.PodKind {
	var kinds []planner.PodKind
	for _, d := range mix.deployments {
		i := slices.IndexFunc(pods, func(p *corev1.Pod) bool { return p.Labels[appLabel] == mix.name+"-"+d.name })
		kinds = append(kinds, planner.PodKind{
			N: d.replicas, Requests: resources.RequestsForPods(pods[i]), Requirements: corescheduling.NewStrictPodRequirements(pods[i]),
			PerNodeMost: planner.HostnameSpreadLimit(pods[i]),
		})
	}
	return kinds
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
