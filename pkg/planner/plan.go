package planner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/sizing"
)

// Workloads are what a plan is made for: the pods to place, the DaemonSets that run on every node
// they tolerate, and the NodePools and LinodeNodeClasses to launch from.
type Workloads struct {
	// Pods are the pods to place, each with a namespace and a name unique in it.
	Pods        []*corev1.Pod
	DaemonSets  []*appsv1.DaemonSet
	NodePools   []*karpv1.NodePool
	NodeClasses []*v1.LinodeNodeClass
}

// Settings say where the fleet runs and at what prices.
type Settings struct {
	Region    string
	Mode      mode.Mode
	Catalogue *Catalogue
}

// Report is the plan: the fleet by NodePool, what it costs, what it is measured against, and the
// pods that would not run.
type Report struct {
	Region    string        `json:"region"`
	Mode      string        `json:"mode"`
	Catalogue CatalogueNote `json:"catalogue"`
	NodePools []PoolFleet   `json:"nodePools"`
	// Pods is how many pods the fleet runs; Unplaceable are those it would not.
	Pods        int           `json:"pods"`
	Unplaceable []Unplaceable `json:"unplaceable"`
	Fleet       Price         `json:"fleet"`
	// LowerBound is the least any fleet of whole nodes of the plans each NodePool allows costs for
	// the pods core gave it; Ratio the fleet's hourly price over it.
	LowerBound float64 `json:"lowerBoundHourly"`
	Ratio      float64 `json:"ratio"`
	// OnePlan is the cheapest fleet of one plan per NodePool, what an LKE pool sized by its own
	// autoscaler needs; nil when some NodePool's pods fit no single plan.
	OnePlan *Price `json:"onePlan,omitempty"`
	// Rounds is how many provisioning rounds launched the fleet.
	Rounds   int      `json:"rounds"`
	Warnings []string `json:"warnings,omitempty"`
	// Current is what a live cluster's nodes cost now, nil when the plan is for manifests.
	Current *CurrentFleet `json:"current,omitempty"`
	// Skipped name the objects of kinds the planner does not plan for; Notes say what it assumed.
	Skipped []string `json:"skipped,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// CurrentFleet is what a cluster's nodes cost now, by their plans.
type CurrentFleet struct {
	Nodes int            `json:"nodes"`
	Plans map[string]int `json:"plans"`
	Price
	// Unpriced are the nodes whose plan the catalogue does not price in the region.
	Unpriced []string `json:"unpriced,omitempty"`
}

// PriceNodes is what the nodes cost, by the plan their node.kubernetes.io/instance-type label
// names, in the region.
func PriceNodes(catalogue *Catalogue, region string, nodes []corev1.Node) CurrentFleet {
	current := CurrentFleet{Nodes: len(nodes), Plans: map[string]int{}}
	for _, node := range nodes {
		plan := node.Labels[corev1.LabelInstanceTypeStable]
		hourly, monthly, ok := catalogue.Price(plan, region)
		if !ok {
			current.Unpriced = append(current.Unpriced, node.Name)
			continue
		}
		current.Plans[plan]++
		current.Hourly += hourly
		current.Monthly += monthly
	}
	current.Price = current.rounded()
	return current
}

// CatalogueNote says which catalogue priced the plan and how old it is.
type CatalogueNote struct {
	Source string `json:"source"`
	// AsOf is YYYY-MM-DD, empty when the catalogue is undated; AgeDays -1 then.
	AsOf    string `json:"asOf,omitempty"`
	AgeDays int    `json:"ageDays"`
}

// Price is an hourly and a monthly price.
type Price struct {
	Hourly  float64 `json:"hourly"`
	Monthly float64 `json:"monthly"`
}

// roundPrice rounds a price to a millionth of a dollar: sums of float prices and the lower
// bound's linear program leave noise below that.
func roundPrice(price float64) float64 { return math.Round(price*1e6) / 1e6 }

func (p Price) rounded() Price {
	return Price{Hourly: roundPrice(p.Hourly), Monthly: roundPrice(p.Monthly)}
}

// PoolFleet is what one NodePool launches.
type PoolFleet struct {
	NodePool string      `json:"nodePool"`
	Plans    []PlanCount `json:"plans"`
	Price
	// LowerBound is the least whole nodes of the plans the NodePool allows cost for its pods.
	LowerBound float64 `json:"lowerBoundHourly"`
	// OnePlan is the cheapest fleet of one plan the NodePool allows for its pods; nil when no
	// single plan holds them all.
	OnePlan *OnePlanFleet `json:"onePlan,omitempty"`
}

// PlanCount is the nodes of one plan in a NodePool's fleet.
type PlanCount struct {
	Plan  string `json:"plan"`
	Nodes int    `json:"nodes"`
	// PodsPerNode is how many pods each of the nodes runs, most first.
	PodsPerNode []int `json:"podsPerNode"`
	Price
}

// OnePlanFleet is a fleet of nodes of one plan.
type OnePlanFleet struct {
	Plan  string `json:"plan"`
	Nodes int    `json:"nodes"`
	Price
}

// Unplaceable is a pod that would not run, and why.
type Unplaceable struct {
	Pod    string `json:"pod"`
	Reason Reason `json:"reason"`
	Detail string `json:"detail"`
}

// Reason says why a pod would not run.
type Reason string

const (
	ReasonNotTolerated   Reason = "no NodePool tolerates it"
	ReasonNoMatchingPlan Reason = "no plan its NodePools allow matches its node requirements"
	ReasonUnavailable    Reason = "no plan that would hold it is available in the region"
	ReasonTooBig         Reason = "too big for every allowed plan"
	ReasonLimits         Reason = "NodePool limits"
	ReasonNotPlaced      Reason = "core's scheduler placed it nowhere"
)

// Plan runs the provisioning rounds the controller would run for the workloads, from nothing, and
// reports the fleet.
func Plan(ctx context.Context, settings Settings, w Workloads) (*Report, error) {
	if !settings.Catalogue.HasRegion(settings.Region) {
		return nil, fmt.Errorf("region %q is not in the catalogue (%s)", settings.Region, settings.Catalogue.Source)
	}
	ctx, err := ControllerContext(ctx)
	if err != nil {
		return nil, err
	}
	unavailable := cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	instanceTypes := instancetype.NewDefaultProvider(api{settings.Catalogue}, settings.Region, settings.Mode, unavailable)
	if err := instanceTypes.UpdateCatalogue(ctx); err != nil {
		return nil, err
	}
	objects, pods, daemons := clusterObjects(w)
	// The sizing policy lists pending pods by node name, through the index the controller's
	// manager keeps.
	kubeClient := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objects...).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).Build()
	sizer := sizing.NewPolicy(kubeClient, DiscardEvents(), sizing.Tradeoff{
		LargeFleetNodes: options.DefaultSizingLargeFleetNodes, Tolerance: options.DefaultSizingTolerancePercent / 100,
	}, clock.RealClock{})
	cloudProvider := cloudprovider.New(kubeClient, instanceTypes, &paperNodes{region: settings.Region, unavailable: unavailable}, settings.Mode, cloudprovider.WithSizer(sizer))

	report := &Report{Region: settings.Region, Mode: string(settings.Mode), Catalogue: catalogueNote(settings.Catalogue), Warnings: nodePoolWarnings(w), Unplaceable: []Unplaceable{}}
	provisioned, err := Provision(ctx, Cloud{KubeClient: kubeClient, CloudProvider: cloudProvider, Sizing: sizer}, w.NodePools, pods, daemons, ProvisionOptions{
		NodeClaimName: func(round, i int) string { return fmt.Sprintf("plan-%d-%04d", round, i) },
	})
	if err != nil {
		return nil, err
	}
	report.Rounds = provisioned.Rounds
	offered := map[string][]*corecloudprovider.InstanceType{}
	for _, nodePool := range w.NodePools {
		if offered[nodePool.Name], err = nodePoolInstanceTypes(ctx, instanceTypes, w.NodeClasses, nodePool); err != nil {
			return nil, err
		}
	}
	if err := report.addFleets(settings, w, daemons, provisioned.Launched, offered); err != nil {
		return nil, err
	}
	for pod, reason := range provisioned.Unplaced {
		report.Unplaceable = append(report.Unplaceable, explain(pod, reason, w.NodePools, offered, daemons))
	}
	slices.SortFunc(report.Unplaceable, func(a, b Unplaceable) int { return strings.Compare(a.Pod, b.Pod) })
	return report, nil
}

func catalogueNote(c *Catalogue) CatalogueNote {
	note := CatalogueNote{Source: c.Source, AgeDays: c.Age(time.Now())}
	if !c.AsOf.IsZero() {
		note.AsOf = c.AsOf.Format(time.DateOnly)
	}
	return note
}

// clusterObjects are the objects the planner's in-memory cluster holds: the NodeClasses as the
// NodeClass controller leaves a usable class (every condition true), the NodePools, the
// DaemonSets, and the pods pending as kube-scheduler leaves a pod no node holds. It returns them,
// the pods, and the pods the DaemonSets run on each node.
func clusterObjects(w Workloads) ([]client.Object, []*corev1.Pod, []*corev1.Pod) {
	var objects []client.Object
	for _, nodeClass := range w.NodeClasses {
		ready := nodeClass.DeepCopy()
		ready.UID = types.UID("linodenodeclass/" + ready.Name)
		for _, condition := range ready.StatusConditions().List() {
			ready.StatusConditions().SetTrue(condition.Type)
		}
		objects = append(objects, ready)
	}
	for _, nodePool := range w.NodePools {
		objects = append(objects, withUID(nodePool.DeepCopy(), "nodepool"))
	}
	var daemons []*corev1.Pod
	for _, ds := range w.DaemonSets {
		ds = withUID(ds.DeepCopy(), "daemonset")
		objects = append(objects, ds)
		daemons = append(daemons, daemonset.PodForDaemonSet(ds))
	}
	pods := make([]*corev1.Pod, 0, len(w.Pods))
	for _, pod := range w.Pods {
		pod = withUID(pod.DeepCopy(), "pod")
		pod.Spec.NodeName = ""
		requestLimits(pod)
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}}
		objects = append(objects, pod)
		pods = append(pods, pod)
	}
	return objects, pods, daemons
}

// requestLimits gives each container, for each resource it limits without requesting, a request
// of its limit, as the apiserver defaults a pod: a manifest that only limits GPUs asks for them.
func requestLimits(pod *corev1.Pod) {
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			resources := &containers[i].Resources
			for name, limit := range resources.Limits {
				if _, ok := resources.Requests[name]; ok {
					continue
				}
				if resources.Requests == nil {
					resources.Requests = corev1.ResourceList{}
				}
				resources.Requests[name] = limit.DeepCopy()
			}
		}
	}
}

// withUID gives the object a UID of its own, which core's scheduler keys its caches by.
func withUID[T client.Object](obj T, kind string) T {
	obj.SetUID(types.UID(kind + "/" + obj.GetNamespace() + "/" + obj.GetName()))
	obj.SetResourceVersion("")
	return obj
}

// nodePoolWarnings name the NodePools that can launch nothing: their NodeClass is not ours or not
// among the workloads.
func nodePoolWarnings(w Workloads) []string {
	var warnings []string
	for _, nodePool := range w.NodePools {
		ref := nodePool.Spec.Template.Spec.NodeClassRef
		switch {
		case ref == nil || ref.Group != apis.Group || ref.Kind != v1.Kind:
			warnings = append(warnings, fmt.Sprintf("NodePool %s refers to no LinodeNodeClass: it launches nothing", nodePool.Name))
		case !slices.ContainsFunc(w.NodeClasses, func(c *v1.LinodeNodeClass) bool { return c.Name == ref.Name }):
			warnings = append(warnings, fmt.Sprintf("NodePool %s refers to LinodeNodeClass %s, which is not given: it launches nothing", nodePool.Name, ref.Name))
		}
	}
	return warnings
}

// nodePoolInstanceTypes are the plans the NodePool's requirements allow, every one of them as
// the catalogue has them (no sizing), nil for a NodePool without its NodeClass.
func nodePoolInstanceTypes(ctx context.Context, provider *instancetype.DefaultProvider, nodeClasses []*v1.LinodeNodeClass, nodePool *karpv1.NodePool) ([]*corecloudprovider.InstanceType, error) {
	ref := nodePool.Spec.Template.Spec.NodeClassRef
	if ref == nil {
		return nil, nil
	}
	i := slices.IndexFunc(nodeClasses, func(c *v1.LinodeNodeClass) bool { return c.Name == ref.Name })
	if i < 0 {
		return nil, nil
	}
	all, err := provider.List(ctx, nodeClasses[i])
	if err != nil {
		return nil, err
	}
	requirements := corescheduling.NewNodeSelectorRequirementsWithMinValues(nodePool.Spec.Template.Spec.Requirements...)
	requirements.Add(corescheduling.NewLabelRequirements(nodePool.Spec.Template.Labels).Values()...)
	var allowed []*corecloudprovider.InstanceType
	for _, it := range all {
		if it.Requirements.Intersects(requirements) == nil {
			allowed = append(allowed, it)
		}
	}
	return allowed, nil
}

// addFleets sums up the launched nodes by NodePool and measures each NodePool's fleet against the
// lower bound and the cheapest fleet of one plan for the pods core gave it.
func (r *Report) addFleets(settings Settings, w Workloads, daemons []*corev1.Pod, launched []Launched, offered map[string][]*corecloudprovider.InstanceType) error {
	byPool := map[string][]Launched{}
	for _, l := range launched {
		byPool[l.NodePool] = append(byPool[l.NodePool], l)
	}
	var onePlan Price
	everyPoolHasOnePlan := true
	for _, name := range slices.Sorted(maps.Keys(byPool)) {
		nodePool := w.NodePools[slices.IndexFunc(w.NodePools, func(p *karpv1.NodePool) bool { return p.Name == name })]
		fleet, pods, err := measurePool(settings, nodePool, byPool[name], offered[name], daemonsOn(nodePool, daemons))
		if err != nil {
			return fmt.Errorf("NodePool %s: %w", name, err)
		}
		if fleet.OnePlan == nil {
			everyPoolHasOnePlan = false
		} else {
			onePlan.Hourly += fleet.OnePlan.Hourly
			onePlan.Monthly += fleet.OnePlan.Monthly
		}
		r.NodePools = append(r.NodePools, fleet)
		r.Pods += pods
		r.Fleet.Hourly += fleet.Hourly
		r.Fleet.Monthly += fleet.Monthly
		r.LowerBound += fleet.LowerBound
	}
	r.Fleet, r.LowerBound = r.Fleet.rounded(), roundPrice(r.LowerBound)
	if r.LowerBound > 0 {
		r.Ratio = math.Round(r.Fleet.Hourly/r.LowerBound*1e4) / 1e4
	}
	if len(byPool) > 0 && everyPoolHasOnePlan {
		onePlan = onePlan.rounded()
		r.OnePlan = &onePlan
	}
	return nil
}

// measurePool is the NodePool's fleet of the nodes launched for it, with the lower bound and the
// cheapest fleet of one plan for their pods on the plans it allows, each node's room less what
// the DaemonSets that run there ask for; and how many pods it runs.
func measurePool(settings Settings, nodePool *karpv1.NodePool, nodes []Launched, offered []*corecloudprovider.InstanceType, daemons []*corev1.Pod) (PoolFleet, int, error) {
	price := func(plan string, nodes int) (Price, error) {
		hourly, monthly, ok := settings.Catalogue.Price(plan, settings.Region)
		if !ok {
			return Price{}, fmt.Errorf("plan %s is not in the catalogue", plan)
		}
		return Price{Hourly: hourly * float64(nodes), Monthly: monthly * float64(nodes)}, nil
	}
	fleet := PoolFleet{NodePool: nodePool.Name}
	perPlan := map[string][]int{}
	var pods []*corev1.Pod
	for _, n := range nodes {
		perPlan[n.Plan] = append(perPlan[n.Plan], len(n.Pods))
		pods = append(pods, n.Pods...)
	}
	for plan, counts := range perPlan {
		p, err := price(plan, len(counts))
		if err != nil {
			return PoolFleet{}, 0, err
		}
		slices.SortFunc(counts, func(a, b int) int { return b - a })
		fleet.Plans = append(fleet.Plans, PlanCount{Plan: plan, Nodes: len(counts), PodsPerNode: counts, Price: p})
		fleet.Hourly += p.Hourly
		fleet.Monthly += p.Monthly
	}
	slices.SortFunc(fleet.Plans, func(a, b PlanCount) int {
		return cmp.Or(b.Nodes-a.Nodes, strings.Compare(a.Plan, b.Plan))
	})
	fleet.Price = fleet.rounded()

	plans := PlanRooms(offered, resources.RequestsForPods(daemons...))
	kinds := WithoutPerNodeLimits(podKinds(pods))
	bound, err := LowerBound(plans, kinds)
	if err != nil {
		return PoolFleet{}, 0, fmt.Errorf("the lower bound: %w", err)
	}
	fleet.LowerBound = roundPrice(bound)
	one, err := CheapestPlanFleet(plans, kinds)
	switch {
	case errors.Is(err, ErrNoPlanHoldsPods):
	case err != nil:
		return PoolFleet{}, 0, err
	default:
		p, err := price(one.Plan, one.Nodes)
		if err != nil {
			return PoolFleet{}, 0, err
		}
		fleet.OnePlan = &OnePlanFleet{Plan: one.Plan, Nodes: one.Nodes, Price: p.rounded()}
	}
	return fleet, len(pods), nil
}

// daemonsOn are the DaemonSets' pods that run on the NodePool's nodes: those that tolerate its
// taints and whose node requirements its nodes can meet.
func daemonsOn(nodePool *karpv1.NodePool, daemons []*corev1.Pod) []*corev1.Pod {
	requirements := corescheduling.NewNodeSelectorRequirementsWithMinValues(nodePool.Spec.Template.Spec.Requirements...)
	requirements.Add(corescheduling.NewLabelRequirements(nodePool.Spec.Template.Labels).Values()...)
	var on []*corev1.Pod
	for _, pod := range daemons {
		if corescheduling.Taints(nodePool.Spec.Template.Spec.Taints).ToleratesPod(pod) != nil {
			continue
		}
		if requirements.Compatible(corescheduling.NewStrictPodRequirements(pod), corescheduling.AllowUndefinedWellKnownLabels) != nil {
			continue
		}
		on = append(on, pod)
	}
	return on
}

// podKinds groups identical pods: the same requests, node requirements and hostname spread.
func podKinds(pods []*corev1.Pod) []PodKind {
	var kinds []PodKind
	index := map[string]int{}
	for _, pod := range pods {
		kind := PodKind{N: 1, Requests: resources.RequestsForPods(pod), Requirements: corescheduling.NewStrictPodRequirements(pod), PerNodeMost: HostnameSpreadLimit(pod)}
		key := fmt.Sprintf("%v|%s|%d", kind.Requests, kind.Requirements, kind.PerNodeMost)
		if i, ok := index[key]; ok {
			kinds[i].N++
			continue
		}
		index[key] = len(kinds)
		kinds = append(kinds, kind)
	}
	return kinds
}

// explain says why core placed the pod nowhere: no NodePool tolerates it, none allows a plan its
// node requirements match, every such plan is too small for it and the DaemonSets beside it, or
// the NodePools' limits; else core's own reason.
func explain(pod *corev1.Pod, coreReason error, nodePools []*karpv1.NodePool, offered map[string][]*corecloudprovider.InstanceType, daemons []*corev1.Pod) Unplaceable {
	u := Unplaceable{Pod: pod.Namespace + "/" + pod.Name}
	var tolerating []*karpv1.NodePool
	var taints []string
	for _, nodePool := range nodePools {
		if err := corescheduling.Taints(nodePool.Spec.Template.Spec.Taints).ToleratesPod(pod); err != nil {
			taints = append(taints, fmt.Sprintf("%s: %v", nodePool.Name, err))
			continue
		}
		tolerating = append(tolerating, nodePool)
	}
	if len(tolerating) == 0 {
		u.Reason, u.Detail = ReasonNotTolerated, strings.Join(taints, "; ")
		if len(nodePools) == 0 {
			u.Detail = "there is no NodePool"
		}
		return u
	}
	podRequirements := corescheduling.NewStrictPodRequirements(pod)
	requests := resources.RequestsForPods(pod)
	var matching, unavailable, largest []string
	for _, nodePool := range tolerating {
		var biggest *corecloudprovider.InstanceType
		var room corev1.ResourceList
		for _, it := range offered[nodePool.Name] {
			if it.Requirements.Compatible(podRequirements, corescheduling.AllowUndefinedWellKnownLabels) != nil {
				continue
			}
			matching = append(matching, it.Name)
			allocatable := resources.Subtract(it.Allocatable(), resources.RequestsForPods(daemonsOn(nodePool, daemons)...))
			switch fits, available := resources.Fits(requests, allocatable), it.Offerings.Available().HasCompatible(podRequirements); {
			case fits && available:
				u.Reason, u.Detail = ReasonNotPlaced, coreReason.Error()
				if strings.Contains(coreReason.Error(), "limits") {
					u.Reason, u.Detail = ReasonLimits, limitsDetail(tolerating)
				}
				return u
			case fits:
				unavailable = append(unavailable, it.Name)
			case biggest == nil || it.Capacity.Cpu().Cmp(*biggest.Capacity.Cpu()) > 0 || it.Capacity.Memory().Cmp(*biggest.Capacity.Memory()) > 0:
				biggest, room = it, allocatable
			}
		}
		if biggest != nil {
			largest = append(largest, fmt.Sprintf("NodePool %s's largest, %s, has %s free beside its DaemonSets", nodePool.Name, biggest.Name, formatRoom(room, requests)))
		}
	}
	switch {
	case len(unavailable) > 0:
		u.Reason, u.Detail = ReasonUnavailable, strings.Join(unavailable, ", ")+" are sold out there, or need a capability the region lacks"
	case len(matching) == 0:
		u.Reason, u.Detail = ReasonNoMatchingPlan, fmt.Sprintf("it requires %s; NodePools that tolerate it: %s", podRequirements, poolNames(tolerating))
	default:
		u.Reason, u.Detail = ReasonTooBig, fmt.Sprintf("it asks for %s; %s", formatRoom(requests, requests), strings.Join(largest, "; "))
	}
	return u
}

// formatRoom is e.g. "63.77 CPU, 482.4 GiB memory, 0 nvidia.com/gpu": the resources of list that
// requests asks for, pods aside.
func formatRoom(list, requests corev1.ResourceList) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		quantity := list[name]
		switch {
		case requests.Name(name, resource.DecimalSI).IsZero() || name == corev1.ResourcePods:
		case name == corev1.ResourceCPU:
			parts = append(parts, strconv.FormatFloat(float64(quantity.MilliValue())/1000, 'f', -1, 64)+" CPU")
		case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage:
			parts = append(parts, fmt.Sprintf("%.1f GiB %s", float64(quantity.Value())/(1<<30), name))
		default:
			parts = append(parts, quantity.String()+" "+string(name))
		}
	}
	return strings.Join(parts, ", ")
}

func limitsDetail(nodePools []*karpv1.NodePool) string {
	var parts []string
	for _, nodePool := range nodePools {
		if len(nodePool.Spec.Limits) == 0 {
			continue
		}
		var limits []string
		for _, name := range slices.Sorted(maps.Keys(nodePool.Spec.Limits)) {
			quantity := nodePool.Spec.Limits[name]
			limits = append(limits, fmt.Sprintf("%s %s", name, quantity.String()))
		}
		parts = append(parts, fmt.Sprintf("NodePool %s is limited to %s", nodePool.Name, strings.Join(limits, ", ")))
	}
	return strings.Join(parts, "; ")
}

func poolNames(nodePools []*karpv1.NodePool) string {
	names := make([]string, len(nodePools))
	for i, p := range nodePools {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
