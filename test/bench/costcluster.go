package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// costRun is what the cost scenario on a cluster does: which mixes, for which NodePools, how
// its NodePools consolidate, and how long it watches the fleet at rest.
type costRun struct {
	mixes []costMix
	// open adds, beside the README's NodePools, a NodePool open to every plan for each mix. Its
	// fleets are measured, then removed before the README's are scaled down.
	open bool
	// shrink scales the README's mixes to a third, waits for consolidation to settle, measures
	// again and watches the fleet at rest.
	shrink bool
	// consolidateAfter and budget are the NodePools' disruption settings; the README's default
	// NodePool consolidates after 1m with core's default budget of 10% of the nodes.
	consolidateAfter string
	budget           string
	// settle is how long the fleet must go without a NodeClaim created or deleted before the
	// shrunk mixes count as consolidated: longer than a node takes to become a candidate again
	// after its pods changed (consolidateAfter) plus core's disruption poll (10 s) and its
	// validation of a consolidation (15 s), and, for a large fleet, longer than the 5 minutes
	// after which core evaluates a cluster it found consolidated once more (state.Cluster's
	// ConsolidationState): single-node consolidation gives up after 3 minutes, so one pass may
	// not have seen every candidate. A settle too short shows as nodes replaced at rest.
	// steady is the watch at rest after that.
	settle, steady time.Duration
}

// costClusterPlan sets the GPU plans' capacity in the region before the controller reads the
// catalogue, as Linode's availability list would for a region with GPUs to sell, and turns on
// core's NodeOverlay feature gate when a mix has an overlay.
func costClusterPlan(mixes []costMix) func(*localcluster.Options) {
	return func(o *localcluster.Options) {
		o.PlanCapacity = map[string]int{}
		for _, plan := range gpuPlans {
			o.PlanCapacity[plan] = 16
		}
		if slices.ContainsFunc(mixes, func(m costMix) bool { return m.overlay != nil }) {
			o.ControllerEnv = append(o.ControllerEnv, "FEATURE_GATES=NodeOverlay=true")
		}
	}
}

// costPool is one mix on one NodePool of the cluster.
type costPool struct {
	mix     costMix
	pool    costNodePool
	name    string
	variant string
}

// fallbackName names the fallback NodePool of a fallback mix.
func (p costPool) fallbackName() string { return p.name + "-fallback" }

// nodePools are the names of the NodePools whose nodes run the pool's mix.
func (p costPool) nodePools() []string {
	if p.mix.fallback {
		return []string{p.name, p.fallbackName()}
	}
	return []string{p.name}
}

// costOnCluster runs the mixes side by side through the controller, each on a NodePool of its
// own (pods pinned to it with a node selector), for the README's NodePools and a NodePool open to
// every plan: it measures each fleet against the mix's lower bound and the cheapest fleet of one
// plan. Then it removes the open NodePools, scales every README mix to a third and measures again
// once consolidation has settled, and counts the nodes created or deleted while the fleet is at
// rest.
// The controller's counts of pods nominated to the node core launched for them (package
// nomination): before the node could take them, and in the race once it could.
const (
	nominatedStarting = `karpenter_linode_nomination_pods_total{node_ready="false"}`
	nominatedReady    = `karpenter_linode_nomination_pods_total{node_ready="true"}`
)

func costOnCluster(ctx context.Context, e *env, run costRun) ([]Row, error) {
	readme, err := loadReadmeNodePools()
	if err != nil {
		return nil, err
	}
	instanceTypes, err := e.regionInstanceTypes(ctx)
	if err != nil {
		return nil, err
	}
	var pools []costPool
	for _, variant := range []string{"readme", "open"} {
		if variant == "open" && !run.open {
			continue
		}
		for _, mix := range run.mixes {
			if variant == "open" && mix.ownsNodePools() {
				continue
			}
			pool := openNodePool
			if variant == "readme" {
				pool = readme.forMix(mix)
			}
			if mix.fallback {
				pool.name += fmt.Sprintf(" at weight %d beside a fallback of weight %d (%s)", defaultWeight, fallbackWeight, formatRequirements(fallbackRequirements))
			}
			if mix.overlay != nil {
				pool.name += fmt.Sprintf(" with a NodeOverlay: %s %s", mix.overlay.plan, mix.overlay.change)
			}
			pools = append(pools, costPool{mix: mix, pool: pool, name: variant + "-" + mix.name, variant: variant})
		}
	}
	if err := e.createCostNodeClass(ctx); err != nil {
		return nil, err
	}
	for _, p := range pools {
		if err := e.createCostPool(ctx, p, run); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	for _, p := range pools {
		if err := e.applyMix(ctx, p, p.mix); err != nil {
			return nil, err
		}
	}
	if err := e.WaitFor(ctx, "every mix running", 10*time.Minute, func(ctx context.Context) (bool, error) {
		return e.mixesRunning(ctx, pools, 1)
	}); err != nil {
		return nil, err
	}
	provisioned := time.Since(start)
	first, err := e.measureFleets(ctx, pools, instanceTypes, 1)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%d NodePools side by side, provisioned in %.0f s", len(pools), provisioned.Seconds())
	nominated, err := scrapeSeries(ctx, e.Cluster.ControllerMetricsURL(), nominatedStarting, nominatedReady)
	if err != nil {
		return nil, fmt.Errorf("reading the controller's nominations: %w", err)
	}
	note += fmt.Sprintf(" (%.0f pods nominated to their starting nodes, %.0f more to nodes just Ready)", nominated[nominatedStarting], nominated[nominatedReady])
	// kube-scheduler binds pods as it scores nodes (least allocated first), not as core planned
	// them, so the fleet that first runs every pod holds nodes launched for pods that went
	// elsewhere; consolidation then removes them. The targets are the consolidated fleet's.
	var rows []Row
	fleets, where := first, "on the cluster"
	if run.settle > 0 {
		e.Config.Progressf("  %s: every mix running in %.0f s; waiting for consolidation to settle", e.Provider, provisioned.Seconds())
		rows = append(rows, fleetRows(pools, first, "on the cluster, when every pod first ran", false)...)
		settled, err := e.settle(ctx, pools, 1, run)
		if err != nil {
			return nil, err
		}
		if fleets, err = e.measureFleets(ctx, pools, instanceTypes, 1); err != nil {
			return nil, err
		}
		note += fmt.Sprintf(", consolidated in %.0f s more (no NodeClaim created or deleted for %v)", settled.Seconds(), run.settle)
		where = "on the cluster, consolidated"
	}
	rows = append(rows, fleetRows(pools, fleets, where, true)...)
	fallback, err := e.fallbackRows(ctx, pools, instanceTypes, where)
	if err != nil {
		return nil, err
	}
	rows = append(rows, fallback...)
	contracts, err := e.costContracts(ctx, pools)
	if err != nil {
		return nil, err
	}
	rows = append(rows, contracts...)
	if !run.shrink {
		rows[len(rows)-1].Note += "; " + note
		return rows, nil
	}

	shrinking := slices.DeleteFunc(slices.Clone(pools), func(p costPool) bool { return p.variant != "readme" })
	for _, p := range pools {
		if p.variant != "readme" {
			if err := e.removeMix(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	shrunk, settled, err := e.shrinkMixes(ctx, shrinking, instanceTypes, run)
	if err != nil {
		return nil, err
	}
	for _, f := range shrunk {
		row := f.row("on the cluster, scaled to a third")
		row.Target = costTargetShrink
		rows = append(rows, row)
	}

	e.Config.Progressf("  %s: watching the fleet at rest for %v", e.Provider, run.steady)
	before := e.Watch.ClaimChanges()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(run.steady):
	}
	if err := e.CheckHealthy(); err != nil {
		return nil, err
	}
	replaced := e.Watch.ClaimChanges() - before
	note += fmt.Sprintf("; the README's mixes scaled to a third, consolidation settled in %.0f s (no NodeClaim created or deleted for %v); NodeClaims created or deleted at rest after that",
		settled.Seconds(), run.settle)
	return append(rows, Row{Scenario: costScenario, Metric: fmt.Sprintf("nodes replaced in %v at rest after consolidation", run.steady),
		Value: float64(replaced), Target: "0", Note: note}), nil
}

// shrinkMixes scales every mix to a third, waits until consolidation has settled and measures
// the fleets again.
func (e *env) shrinkMixes(ctx context.Context, pools []costPool, instanceTypes []*cloudprovider.InstanceType, run costRun) ([]mixFleet, time.Duration, error) {
	e.Config.Progressf("  %s: scaling every mix to a third", e.Provider)
	for _, p := range pools {
		if err := e.applyMix(ctx, p, p.mix.scaled(3)); err != nil {
			return nil, 0, err
		}
	}
	settled, err := e.settle(ctx, pools, 3, run)
	if err != nil {
		return nil, 0, err
	}
	fleets, err := e.measureFleets(ctx, pools, instanceTypes, 3)
	return fleets, settled, err
}

// settle waits until consolidation has settled for the mixes, scaled down by divisor: every
// pod running, and no NodeClaim created or deleted for run.settle since the nodes could become
// candidates again. It returns how long that took.
func (e *env) settle(ctx context.Context, pools []costPool, divisor int, run costRun) (time.Duration, error) {
	// Nodes become candidates consolidateAfter after their pods last changed; only then can a
	// quiet fleet mean a settled one.
	consolidateAfter, err := time.ParseDuration(run.consolidateAfter)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = e.WaitFor(ctx, "consolidation settled", 20*time.Minute, func(ctx context.Context) (bool, error) {
		if time.Since(start) < consolidateAfter+run.settle || !e.Watch.ClaimsQuietFor(run.settle) {
			return false, nil
		}
		return e.mixesRunning(ctx, pools, divisor)
	})
	return time.Since(start), err
}

// fleetRows are a row per fleet and, per variant of NodePool, the summary rows; targets only
// where the fleets are measured against them.
func fleetRows(pools []costPool, fleets []mixFleet, where string, targets bool) []Row {
	var rows []Row
	for _, variant := range []string{"readme", "open"} {
		var measured []mixFleet
		var variantRows []Row
		for i, p := range pools {
			if p.variant == variant {
				measured = append(measured, fleets[i])
				variantRows = append(variantRows, fleets[i].row(where))
			}
		}
		if len(measured) == 0 {
			continue
		}
		variantRows = append(variantRows, summaryRows(measured, where, variantName(variant))...)
		if !targets {
			for i := range variantRows {
				variantRows[i].Target = ""
			}
		}
		rows = append(rows, variantRows...)
	}
	return rows
}

// regionInstanceTypes are the region's plans as the controller's instance types describe them,
// read from the cluster's Linode API emulator with the controller's default settings.
func (e *env) regionInstanceTypes(ctx context.Context) ([]*cloudprovider.InstanceType, error) {
	provider := instancetype.NewDefaultProvider(e.Cluster.Emulator.NewClient(), e.Cluster.Region(), mode.LKE,
		cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL), instancetype.WithHypervisorMemoryPercent(localcluster.HypervisorMemoryPercent))
	if err := provider.UpdateCatalogue(ctx); err != nil {
		return nil, err
	}
	return provider.List(ctx, &v1.LinodeNodeClass{})
}

const costNodeClass = "cost"

func (e *env) createCostNodeClass(ctx context.Context) error {
	nodeClass := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: costNodeClass}}
	if err := e.Cluster.Kube.Create(ctx, nodeClass); err != nil {
		return fmt.Errorf("creating the node class %s: %w", costNodeClass, err)
	}
	return nil
}

// createCostPool creates the mix's NodePool with the variant's requirements and taints and the
// run's disruption settings, and waits until it is Ready; for a fallback mix, the weighted
// NodePool and its fallback; for an overlay mix, the NodeOverlay on its NodePool.
func (e *env) createCostPool(ctx context.Context, p costPool, run costRun) error {
	if !p.mix.fallback {
		if err := e.createCostNodePool(ctx, p.name, p.pool.requirements, p.pool.taints, nil, nil, run); err != nil {
			return err
		}
	} else {
		labels := map[string]string{mixNodesLabel: p.name}
		if err := e.createCostNodePool(ctx, p.name, p.pool.requirements, p.pool.taints, ptr.To[int32](defaultWeight), labels, run); err != nil {
			return err
		}
		if err := e.createCostNodePool(ctx, p.fallbackName(), fallbackRequirements, p.pool.taints, ptr.To[int32](fallbackWeight), labels, run); err != nil {
			return err
		}
	}
	if p.mix.overlay == nil {
		return nil
	}
	overlay := &v1alpha1.NodeOverlay{
		ObjectMeta: metav1.ObjectMeta{Name: p.name},
		Spec: v1alpha1.NodeOverlaySpec{Requirements: []v1alpha1.NodeSelectorRequirement{
			{Key: karpv1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{p.name}},
			{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{p.mix.overlay.plan}},
		}},
	}
	if strings.HasPrefix(p.mix.overlay.change, "+") || strings.HasPrefix(p.mix.overlay.change, "-") {
		overlay.Spec.PriceAdjustment = &p.mix.overlay.change
	} else {
		overlay.Spec.Price = &p.mix.overlay.change
	}
	if err := e.Cluster.Kube.Create(ctx, overlay); err != nil {
		return fmt.Errorf("creating NodeOverlay %s: %w", overlay.Name, err)
	}
	return nil
}

// createCostNodePool creates a NodePool of the cost run and waits until it is Ready.
func (e *env) createCostNodePool(ctx context.Context, name string, requirements []karpv1.NodeSelectorRequirementWithMinValues, taints []corev1.Taint,
	weight *int32, labels map[string]string, run costRun) error {
	nodePool := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: karpv1.NodePoolSpec{
			Weight: weight,
			Template: karpv1.NodeClaimTemplate{
				ObjectMeta: karpv1.ObjectMeta{Labels: labels},
				Spec: karpv1.NodeClaimTemplateSpec{
					NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: costNodeClass},
					Requirements: requirements,
					Taints:       taints,
				},
			},
			Disruption: karpv1.Disruption{
				ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				ConsolidateAfter:    karpv1.MustParseNillableDuration(run.consolidateAfter),
			},
		},
	}
	if run.budget != "" {
		nodePool.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: run.budget}}
	}
	if err := e.Cluster.Kube.Create(ctx, nodePool); err != nil {
		return fmt.Errorf("creating NodePool %s: %w", name, err)
	}
	return e.WaitFor(ctx, "NodePool "+name+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
		if err := e.Cluster.Kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool); err != nil {
			return false, err
		}
		return nodePool.StatusConditions().Root().IsTrue(), nil
	})
}

// applyMix creates or scales the mix's Deployments and DaemonSets on the pool's NodePool.
// removeMix deletes the mix's Deployments and DaemonSets, then its NodePool and nodes: pods
// left pending for a NodePool that is gone would keep the shrunk fleet from counting as running.
func (e *env) removeMix(ctx context.Context, p costPool) error {
	kube := e.Cluster.Kube
	for _, d := range p.mix.deployments {
		if err := kube.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: p.name + "-" + d.name, Namespace: harness.Namespace}}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	for _, d := range p.mix.daemonSets {
		if err := kube.Delete(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: p.name + "-" + d.name, Namespace: harness.Namespace}}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return e.Remove(ctx, p.name)
}

func (e *env) applyMix(ctx context.Context, p costPool, mix costMix) error {
	kube := e.Cluster.Kube
	for _, d := range mix.deployments {
		labels := mix.podLabels(d, p.name)
		deployment := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: p.name + "-" + d.name, Namespace: harness.Namespace},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(d.replicas)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: mix.podSpec(d, p.name)},
			},
		}
		existing := &appsv1.Deployment{}
		switch err := kube.Get(ctx, client.ObjectKeyFromObject(deployment), existing); {
		case err == nil:
			existing.Spec.Replicas = deployment.Spec.Replicas
			if err := kube.Update(ctx, existing); err != nil {
				return fmt.Errorf("scaling deployment %s: %w", deployment.Name, err)
			}
		case client.IgnoreNotFound(err) == nil:
			if err := kube.Create(ctx, deployment); err != nil {
				return fmt.Errorf("creating deployment %s: %w", deployment.Name, err)
			}
		default:
			return err
		}
	}
	for _, d := range mix.daemonSets {
		labels := map[string]string{appLabel: p.name + "-" + d.name}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: p.name + "-" + d.name, Namespace: harness.Namespace},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: mix.daemonSetSpec(d, p.name)},
			},
		}
		if err := kube.Create(ctx, ds); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating DaemonSet %s: %w", ds.Name, err)
		}
	}
	return nil
}

// mixesRunning tells whether every mix, scaled down by divisor, has exactly its pods, all
// running and ready.
func (e *env) mixesRunning(ctx context.Context, pools []costPool, divisor int) (bool, error) {
	var pods corev1.PodList
	if err := e.Cluster.Kube.List(ctx, &pods, client.InNamespace(harness.Namespace), client.HasLabels{harness.PoolLabel}); err != nil {
		return false, err
	}
	running := map[string]int{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if pod.Status.Phase != corev1.PodRunning || !nodesim.PodReady(pod) {
			return false, nil
		}
		running[pod.Labels[harness.PoolLabel]]++
	}
	for _, p := range pools {
		if running[p.name] != p.mix.scaled(divisor).pods() {
			return false, nil
		}
	}
	return true, nil
}

// measureFleets prices each pool's NodeClaims and measures them against the mix, scaled down
// by divisor, as in process: the lower bound over the region's plans, the cheapest fleet of one
// plan the NodePool allows.
func (e *env) measureFleets(ctx context.Context, pools []costPool, instanceTypes []*cloudprovider.InstanceType, divisor int) ([]mixFleet, error) {
	var claims karpv1.NodeClaimList
	if err := e.Cluster.Kube.List(ctx, &claims); err != nil {
		return nil, err
	}
	var fleets []mixFleet
	for _, p := range pools {
		// A mix with an overlay pays, and is bounded by, the overlay's prices.
		instanceTypes := p.mix.overlaid(instanceTypes)
		prices := map[string]float64{}
		for _, it := range instanceTypes {
			if offering := it.Offerings.Cheapest(); offering != nil {
				prices[it.Name] = offering.Price
			}
		}
		mix := p.mix.scaled(divisor)
		fleet := mixFleet{mix: mix, pool: p.pool, plans: map[string]int{}}
		for _, claim := range claims.Items {
			if !slices.Contains(p.nodePools(), claim.Labels[karpv1.NodePoolLabelKey]) || !claim.DeletionTimestamp.IsZero() {
				continue
			}
			plan := claim.Labels[corev1.LabelInstanceTypeStable]
			price, ok := prices[plan]
			if !ok {
				return nil, fmt.Errorf("NodeClaim %s of %s has plan %q, which the catalogue does not price", claim.Name, p.name, plan)
			}
			fleet.price += price
			fleet.plans[plan]++
		}
		nodePool := &karpv1.NodePool{Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{Requirements: p.pool.requirements}}}}
		var err error
		if fleet.yardsticks, err = mixYardsticks(instanceTypes, nodePool, mix, mixPods(mix, p.name), mixDaemons(mix, p.name)); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		fleets = append(fleets, fleet)
	}
	return fleets, nil
}

// mixPods are one pod of each of the mix's Deployments, as its template makes them.
func mixPods(mix costMix, nodePool string) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, d := range mix.deployments {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.name, Labels: mix.podLabels(d, nodePool)}, Spec: mix.podSpec(d, nodePool)})
	}
	return pods
}

// mixDaemons are the pods the mix's DaemonSets run on each node.
func mixDaemons(mix costMix, nodePool string) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, d := range mix.daemonSets {
		pods = append(pods, daemonset.PodForDaemonSet(&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, UID: types.UID(d.name)},
			Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: mix.daemonSetSpec(d, nodePool)}},
		}))
	}
	return pods
}

// costContracts checks what core expects of the provider, over every NodeClaim the run made:
// each launched one of the plans it offered; none drifted; no node was left unpriceable (core's
// consolidation says so with an Unconsolidatable event naming an instance type it cannot find).
func (e *env) costContracts(ctx context.Context, pools []costPool) ([]Row, error) {
	var claims karpv1.NodeClaimList
	if err := e.Cluster.Kube.List(ctx, &claims); err != nil {
		return nil, err
	}
	var offPlan, drifted []string
	for _, claim := range claims.Items {
		plan := claim.Labels[corev1.LabelInstanceTypeStable]
		offered := corescheduling.NewNodeSelectorRequirementsWithMinValues(claim.Spec.Requirements...).Get(corev1.LabelInstanceTypeStable)
		if plan != "" && !offered.Has(plan) {
			offPlan = append(offPlan, fmt.Sprintf("%s on %s", claim.Name, plan))
		}
		if claim.StatusConditions().IsTrue(karpv1.ConditionTypeDrifted) {
			drifted = append(drifted, claim.Name)
		}
	}
	var events corev1.EventList
	if err := e.Cluster.Kube.List(ctx, &events); err != nil {
		return nil, err
	}
	unpriced := 0
	for _, event := range events.Items {
		if event.Reason == "Unconsolidatable" && strings.Contains(event.Message, "Instance Type") && strings.Contains(event.Message, "not found") {
			unpriced++
		}
	}
	note := fmt.Sprintf("%d NodeClaims of %d NodePools", len(claims.Items), len(pools))
	return []Row{
		{Scenario: costScenario, Metric: "NodeClaims launched on a plan they did not offer", Value: float64(len(offPlan)), Target: "0", Note: withList(note, offPlan)},
		{Scenario: costScenario, Metric: "NodeClaims drifted", Value: float64(len(drifted)), Target: "0", Note: withList(note, drifted)},
		{Scenario: costScenario, Metric: "nodes consolidation could not price (Unconsolidatable: instance type not found)", Value: float64(unpriced), Target: "0", Note: note},
	}, nil
}

func withList(note string, items []string) string {
	if len(items) == 0 {
		return note
	}
	return note + ": " + strings.Join(items[:min(len(items), 5)], ", ")
}

// overlaid are the instance types with the mix's NodeOverlay applied to its plan's offerings, as
// core prices them for the mix's NodePool; the instance types themselves without an overlay.
func (m costMix) overlaid(instanceTypes []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	if m.overlay == nil {
		return instanceTypes
	}
	out := make([]*cloudprovider.InstanceType, len(instanceTypes))
	for i, it := range instanceTypes {
		if it.Name != m.overlay.plan {
			out[i] = it
			continue
		}
		changed := &cloudprovider.InstanceType{Name: it.Name, Requirements: it.Requirements, Capacity: it.Capacity, Overhead: it.Overhead,
			VolumeAttachmentLimits: it.VolumeAttachmentLimits, DynamicResources: it.DynamicResources, Offerings: make(cloudprovider.Offerings, len(it.Offerings))}
		for j, offering := range it.Offerings {
			copied := *offering
			copied.ApplyPriceOverlay(m.overlay.change)
			changed.Offerings[j] = &copied
		}
		out[i] = changed
	}
	return out
}

// fallbackRows count, for each fallback mix, its pods running on the fallback NodePool that the
// default NodePool could have taken: a plan it allows has room for the pod. Core offers a pod to
// the NodePool of highest weight first, so the count should be 0.
func (e *env) fallbackRows(ctx context.Context, pools []costPool, instanceTypes []*cloudprovider.InstanceType, where string) ([]Row, error) {
	var rows []Row
	for _, p := range pools {
		if !p.mix.fallback {
			continue
		}
		var pods corev1.PodList
		if err := e.Cluster.Kube.List(ctx, &pods, client.InNamespace(harness.Namespace), client.MatchingLabels{harness.PoolLabel: p.name}); err != nil {
			return nil, err
		}
		var nodes corev1.NodeList
		if err := e.Cluster.Kube.List(ctx, &nodes, client.MatchingLabels{karpv1.NodePoolLabelKey: p.fallbackName()}); err != nil {
			return nil, err
		}
		onFallback := map[string]string{}
		for _, node := range nodes.Items {
			onFallback[node.Name] = node.Labels[corev1.LabelInstanceTypeStable]
		}
		defaultAllows := corescheduling.NewNodeSelectorRequirementsWithMinValues(p.pool.requirements...)
		fallbackPods, couldTake := 0, map[string]int{}
		for i := range pods.Items {
			pod := &pods.Items[i]
			plan, ok := onFallback[pod.Spec.NodeName]
			if !ok || !pod.DeletionTimestamp.IsZero() {
				continue
			}
			fallbackPods++
			requests := resources.RequestsForPods(pod)
			if slices.ContainsFunc(instanceTypes, func(it *cloudprovider.InstanceType) bool {
				return it.Requirements.Intersects(defaultAllows) == nil && resources.Fits(requests, it.Allocatable())
			}) {
				couldTake[fmt.Sprintf("%s on %s", planner.FormatRequests(requests), plan)]++
			}
		}
		taken := 0
		var which []string
		for what, n := range couldTake {
			taken += n
			which = append(which, fmt.Sprintf("%d× %s", n, what))
		}
		slices.Sort(which)
		rows = append(rows, Row{Scenario: costScenario,
			Metric: fmt.Sprintf("%s (%s, %s): pods on the fallback NodePool that the default NodePool could take", p.mix.name, p.pool.name, where),
			Value:  float64(taken), Target: "0",
			Note: withList(fmt.Sprintf("%d of the mix's pods on %d fallback nodes", fallbackPods, len(nodes.Items)), which),
		})
	}
	return rows, nil
}
