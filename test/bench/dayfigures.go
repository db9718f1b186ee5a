package bench

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// defaultDaySample is how often, in the day's time, the lower bound, the fleet's price and the
// pending pods are sampled for the bound's integral and the plot, unless the run says otherwise.
const defaultDaySample = 5 * time.Minute

// dayFigures are what a user reads off one provider's day, or off the plain LKE pool's.
type dayFigures struct {
	// name heads the provider's column; provider is empty for the plain LKE pool.
	name     string
	provider harness.Provider
	// cost is what the fleet cost over the day, bound the integral of the per-moment lower bound
	// of the pods it ran, both in dollars.
	cost, bound float64
	// evicted counts the pods evicted or deleted by disruption, by the disruption reason of the
	// NodeClaim they ran on; podHours the hours pods ran, in the day's time.
	evicted  map[string]int
	podHours float64
	// launches and deletions count the NodeClaims created and deleted over the day; plans the
	// plans launched.
	launches, deletions int
	plans               map[string]int
	// pending are, by workload, how long its pods waited from created to running, on the clock.
	pending map[string]waits
	// onePlan is the plain LKE pool's fleet.
	onePlan *planner.PlanFleet
	// late and warmUp are the record's.
	late, warmUp time.Duration
	series       daySeries
}

// waits are how long a workload's pods waited pending, in seconds on the clock.
type waits struct {
	n             int
	p50, p95, max float64
}

// daySeries is the day sampled every dayInput.sample: the hour of the day, the fleet's and the lower
// bound's $/h, and the pods pending.
type daySeries struct {
	hours, fleet, bound, pending []float64
}

func (f dayFigures) ratio() float64 { return f.cost / f.bound }

func (f dayFigures) evictedTotal() int {
	n := 0
	for _, count := range f.evicted {
		n += count
	}
	return n
}

// evictionsPer1000PodHours is the pods evicted or deleted by disruption per 1,000 pod-hours.
func (f dayFigures) evictionsPer1000PodHours() float64 {
	if f.podHours == 0 {
		return 0
	}
	return float64(f.evictedTotal()) / f.podHours * 1000
}

// podKey is what makes pods alike to the lower bound: requests, node requirements and the most of
// them one node may hold.
type podKey struct {
	kind planner.PodKind
	key  string
}

func keyOf(pod *corev1.Pod) podKey {
	kind := planner.PodKind{N: 1, Requests: resources.RequestsForPods(pod), Requirements: corescheduling.NewStrictPodRequirements(pod),
		PerNodeMost: planner.HostnameSpreadLimit(pod)}
	return podKey{kind: kind, key: fmt.Sprintf("%v|%s|%d", kind.Requests, kind.Requirements, kind.PerNodeMost)}
}

// boundMemo is the lower bound of each set of pods already solved, by the set's key; the days
// measured side by side share it.
type boundMemo struct {
	plans []planner.PlanRoom
	mu    sync.Mutex
	known map[string]float64
}

func newBoundMemo(instanceTypes []*cloudprovider.InstanceType, overhead corev1.ResourceList) *boundMemo {
	return &boundMemo{plans: planner.PlanRooms(instanceTypes, overhead), known: map[string]float64{}}
}

// of is the lower bound of the pods, their per-node limits aside (as every cost bound here).
func (m *boundMemo) of(pods map[string]*planner.PodKind) (float64, error) {
	keys := slices.Sorted(maps.Keys(pods))
	var signature strings.Builder
	var kinds []planner.PodKind
	for _, k := range keys {
		fmt.Fprintf(&signature, "%s=%d;", k, pods[k].N)
		kinds = append(kinds, *pods[k])
	}
	m.mu.Lock()
	bound, ok := m.known[signature.String()]
	m.mu.Unlock()
	if ok {
		return bound, nil
	}
	bound, err := planner.LowerBound(m.plans, planner.WithoutPerNodeLimits(kinds))
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.known[signature.String()] = bound
	m.mu.Unlock()
	return bound, nil
}

// measureDays measures each provider's day, and the plain LKE pool's from the trace, side by side.
func measureDays(in *dayInput, records []dayRecord) ([]dayFigures, error) {
	overhead := in.daemonSetRequests()
	memos := map[mode.Mode]*boundMemo{}
	for m, instanceTypes := range in.instanceTypes {
		memos[m] = newBoundMemo(instanceTypes, overhead)
	}
	days := make([]dayFigures, len(records)+1)
	errs := make([]error, len(records)+1)
	var wg sync.WaitGroup
	for i, r := range records {
		m := mode.LKE
		if r.provider == harness.LinodeInstance {
			m = mode.Instance
		}
		wg.Go(func() {
			days[i], errs[i] = measureDay(in, r, in.instanceTypes[m], memos[m])
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", r.provider, errs[i])
			}
		})
	}
	wg.Go(func() {
		days[len(records)], errs[len(records)] = plainPoolDay(in, overhead, memos[mode.LKE])
		if errs[len(records)] != nil {
			errs[len(records)] = fmt.Errorf("the plain LKE pool: %w", errs[len(records)])
		}
	})
	wg.Wait()
	return days, errors.Join(errs...)
}

// prices are the plans' hourly prices in the region.
func prices(instanceTypes []*cloudprovider.InstanceType) map[string]float64 {
	out := map[string]float64{}
	for _, it := range instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			out[it.Name] = offering.Price
		}
	}
	return out
}

func providerTitle(p harness.Provider) string {
	switch p {
	case harness.Linode:
		return "Linode, LKE mode"
	case harness.LinodeInstance:
		return "Linode, instance mode"
	case harness.Kwok:
		return "core's kwok provider"
	}
	return string(p)
}

// measureDay reads one provider's day off its record.
func measureDay(in *dayInput, r dayRecord, instanceTypes []*cloudprovider.InstanceType, memo *boundMemo) (dayFigures, error) {
	t := in.timers
	f := dayFigures{name: providerTitle(r.provider), provider: r.provider, evicted: map[string]int{}, plans: map[string]int{},
		pending: map[string]waits{}, late: r.late, warmUp: r.warmUp}
	hoursOf := func(d time.Duration) float64 { return t.dayOf(d).Hours() }
	within := func(at time.Time) bool { return !at.Before(r.start) && at.Before(r.end) }
	ended := func(at time.Time) time.Time {
		if at.IsZero() || at.After(r.end) {
			return r.end
		}
		return at
	}
	price := prices(instanceTypes)

	// The fleet: each NodeClaim from its creation (Linode bills a Linode from its create) until it
	// was gone, at its plan's price.
	claimByNode := map[string]harness.ClaimLife{}
	for _, c := range r.claims {
		if c.Node != "" {
			claimByNode[c.Node] = c
		}
		if within(c.Created) {
			f.launches++
			if c.InstanceType != "" {
				f.plans[c.InstanceType]++
			}
		}
		if within(c.Gone) {
			f.deletions++
		}
		if c.InstanceType == "" {
			continue
		}
		hourly, ok := price[c.InstanceType]
		if !ok {
			return dayFigures{}, fmt.Errorf("NodeClaim %s has plan %q, which the NodePool does not allow", c.Name, c.InstanceType)
		}
		from, to := maxTime(c.Created, r.start), ended(c.Gone)
		if to.After(from) {
			f.cost += hourly * hoursOf(to.Sub(from))
		}
	}

	// The pods: evictions, pod-hours and waits, DaemonSets' aside.
	var pods []harness.PodLife
	waited := map[string][]float64{}
	for _, p := range r.pods {
		if isDaemonPod(p.Pod) || p.Pod.Labels[dayWorkloadLabel] == "" {
			continue
		}
		pods = append(pods, p)
		if !p.Running.IsZero() {
			from, to := maxTime(p.Running, r.start), ended(p.Ended)
			if to.After(from) {
				f.podHours += hoursOf(to.Sub(from))
			}
		}
		if p.Disrupted != "" && within(p.Ended) {
			reason := claimByNode[p.Node].DisruptionReason
			if reason == "" {
				reason = "no disruption reason on its NodeClaim (" + p.Disrupted + ")"
			}
			f.evicted[reason]++
		}
		if within(p.Created) {
			until := p.Running
			if until.IsZero() {
				until = ended(p.Ended)
			}
			waited[p.Pod.Labels[dayWorkloadLabel]] = append(waited[p.Pod.Labels[dayWorkloadLabel]], until.Sub(p.Created).Seconds())
		}
	}
	for workload, seconds := range waited {
		f.pending[workload] = waits{n: len(seconds), p50: harness.Percentile(seconds, 50), p95: harness.Percentile(seconds, 95), max: slices.Max(seconds)}
	}

	// Every sample: the pods that exist and have not finished, running or waiting to, and what
	// the cheapest fleet of whole nodes for them costs; the fleet's price; the pods pending.
	keys := map[types.UID]podKey{}
	for _, p := range pods {
		keys[p.Pod.UID] = keyOf(p.Pod)
	}
	samples := int(Day / in.sample)
	for s := range samples {
		at := r.start.Add(t.clock(time.Duration(s) * in.sample))
		demand := map[string]*planner.PodKind{}
		pending := 0
		for _, p := range pods {
			if p.Created.After(at) || (!p.Ended.IsZero() && !p.Ended.After(at)) {
				continue
			}
			if p.Running.IsZero() || p.Running.After(at) {
				pending++
			}
			k := keys[p.Pod.UID]
			if demand[k.key] == nil {
				kind := k.kind
				kind.N = 0
				demand[k.key] = &kind
			}
			demand[k.key].N++
		}
		bound, err := memo.of(demand)
		if err != nil {
			return dayFigures{}, fmt.Errorf("the lower bound at %s: %w", TimeOfDay(time.Duration(s)*in.sample), err)
		}
		fleet := 0.0
		for _, c := range r.claims {
			if c.InstanceType != "" && !c.Created.After(at) && (c.Gone.IsZero() || c.Gone.After(at)) {
				fleet += price[c.InstanceType]
			}
		}
		f.bound += bound * in.sample.Hours()
		f.series.hours = append(f.series.hours, (time.Duration(s) * in.sample).Hours())
		f.series.fleet = append(f.series.fleet, fleet)
		f.series.bound = append(f.series.bound, bound)
		f.series.pending = append(f.series.pending, float64(pending))
	}
	return f, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func isDaemonPod(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" })
}

// daemonSetRequests is what the trace's DaemonSets ask for on every node.
func (in *dayInput) daemonSetRequests() corev1.ResourceList {
	var pods []*corev1.Pod
	for _, o := range in.objects {
		if ds, ok := o.object.(*appsv1.DaemonSet); ok {
			pods = append(pods, daemonset.PodForDaemonSet(ds))
		}
	}
	if len(pods) == 0 {
		return nil
	}
	return resources.RequestsForPods(pods...)
}

// templatePod is a pod as the template makes it.
func templatePod(name string, template corev1.PodTemplateSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: template.Labels}, Spec: template.Spec}
}

// traceDemand is, at each sample of the day, the pods the trace asks for: each Deployment's
// and StatefulSet's replicas, each CronJob's running runs.
func (in *dayInput) traceDemand() []map[string]*planner.PodKind {
	counts := slices.Clone(in.midnight)
	running := make([]int32, len(in.objects))
	keys := make([]podKey, len(in.objects))
	for i, o := range in.objects {
		switch obj := o.object.(type) {
		case *appsv1.Deployment:
			keys[i] = keyOf(templatePod(o.name, obj.Spec.Template))
		case *appsv1.StatefulSet:
			keys[i] = keyOf(templatePod(o.name, obj.Spec.Template))
		case *batchv1.CronJob:
			keys[i] = keyOf(templatePod(o.name, obj.Spec.JobTemplate.Spec.Template))
			counts[i] = 0
		}
	}
	var demand []map[string]*planner.PodKind
	next := 0
	for s := range int(Day / in.sample) {
		at := time.Duration(s) * in.sample
		for ; next < len(in.events) && in.events[next].at <= at; next++ {
			event := in.events[next]
			switch event.kind {
			case eventScale:
				counts[event.workload] = event.replicas
			case eventRunStart:
				running[event.workload]++
			case eventRunEnd:
				running[event.workload]--
			}
		}
		pods := map[string]*planner.PodKind{}
		for i, o := range in.objects {
			n := counts[i]
			if cronJob, ok := o.object.(*batchv1.CronJob); ok {
				n = running[i] * ptrDeref(cronJob.Spec.JobTemplate.Spec.Parallelism, 1)
			}
			if n == 0 || keys[i].key == "" {
				continue
			}
			if pods[keys[i].key] == nil {
				kind := keys[i].kind
				kind.N = 0
				pods[keys[i].key] = &kind
			}
			pods[keys[i].key].N += int(n)
		}
		demand = append(demand, pods)
	}
	return demand
}

func ptrDeref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// plainPoolDay is the fleet a plain LKE pool would be: nodes of one plan, as many as the trace's
// busiest moment needs (first-fit decreasing, hard spreads honoured), all day; the cheapest such
// plan the README's NodePool allows. It is computed from the trace, not run.
func plainPoolDay(in *dayInput, overhead corev1.ResourceList, memo *boundMemo) (dayFigures, error) {
	rooms := planner.PlanRooms(in.instanceTypes[mode.LKE], overhead)
	demand := in.traceDemand()
	f := dayFigures{name: "plain LKE pool (computed)", evicted: map[string]int{}, pending: map[string]waits{}}
	var best *planner.PlanFleet
	for _, room := range rooms {
		most := 0
		for _, pods := range demand {
			var kinds []planner.PodKind
			for _, k := range pods {
				kinds = append(kinds, *k)
			}
			if len(kinds) == 0 {
				continue
			}
			fleet, err := planner.CheapestPlanFleet([]planner.PlanRoom{room}, kinds)
			if errors.Is(err, planner.ErrNoPlanHoldsPods) {
				most = -1
				break
			} else if err != nil {
				return dayFigures{}, err
			}
			most = max(most, fleet.Nodes)
		}
		if most > 0 && (best == nil || float64(most)*room.Price < best.Price) {
			best = &planner.PlanFleet{Plan: room.Name, Nodes: most, Price: float64(most) * room.Price}
		}
	}
	if best == nil {
		return dayFigures{}, planner.ErrNoPlanHoldsPods
	}
	f.onePlan = best
	f.cost = best.Price * Day.Hours()
	for s, pods := range demand {
		bound, err := memo.of(pods)
		if err != nil {
			return dayFigures{}, err
		}
		f.bound += bound * in.sample.Hours()
		f.series.hours = append(f.series.hours, (time.Duration(s) * in.sample).Hours())
		f.series.fleet = append(f.series.fleet, best.Price)
		f.series.bound = append(f.series.bound, bound)
		f.series.pending = append(f.series.pending, 0)
	}
	return f, nil
}

// dayRows are the report's rows: a provider's figures beside kwok's where kwok ran.
func dayRows(days []dayFigures) []Row {
	var kwok *dayFigures
	ours := false
	for i := range days {
		switch days[i].provider {
		case harness.Kwok:
			kwok = &days[i]
		case harness.Linode, harness.LinodeInstance:
			ours = true
		}
	}
	var rows []Row
	for _, f := range days {
		if f.provider == "" {
			rows = append(rows, Row{Scenario: dayScenario, Metric: "plain LKE pool, one plan sized for the peak (computed): day's cost ÷ the trace's lower bound",
				Value: f.ratio(), Unit: "×", Note: fmt.Sprintf("%d× %s all day: $%.2f against $%.2f", f.onePlan.Nodes, f.onePlan.Plan, f.cost, f.bound)})
			continue
		}
		if f.provider == harness.Kwok && ours {
			continue
		}
		scenario := dayScenario
		if f.provider == harness.LinodeInstance {
			scenario += harness.InstanceModeSuffix
		}
		baseline := func(value func(dayFigures) float64) *float64 {
			if kwok == nil || f.provider == harness.Kwok {
				return nil
			}
			v := value(*kwok)
			return &v
		}
		row := func(metric string, unit, target string, value func(dayFigures) float64, note string) Row {
			return Row{Scenario: scenario, Metric: metric, Value: value(f), Unit: unit, Kwok: baseline(value), Target: target, Note: note}
		}
		rows = append(rows,
			row("day's cost ÷ the integral of the per-moment lower bound", "×", "≤ 1.10×", dayFigures.ratio,
				fmt.Sprintf("$%.2f against $%.2f", f.cost, f.bound)),
			row("day's cost", "$", "", func(d dayFigures) float64 { return d.cost }, ""),
			row("pods evicted or deleted by disruption per 1,000 pod-hours", "", "≤ kwok's", dayFigures.evictionsPer1000PodHours,
				fmt.Sprintf("%d pods over %.0f pod-hours: %s", f.evictedTotal(), f.podHours, formatCounts(f.evicted))),
			row("node launches per hour", "", "≤ 1.1× kwok's", func(d dayFigures) float64 { return float64(d.launches) / Day.Hours() },
				fmt.Sprintf("%d launched: %s", f.launches, planner.FormatPlans(f.plans))),
			row("node deletions per hour", "", "", func(d dayFigures) float64 { return float64(d.deletions) / Day.Hours() }, ""),
		)
		for _, workload := range slices.Sorted(maps.Keys(f.pending)) {
			w := f.pending[workload]
			of := func(pick func(waits) float64) func(dayFigures) float64 {
				return func(d dayFigures) float64 { return pick(d.pending[workload]) }
			}
			rows = append(rows,
				row(workload+": pending, p50", "s", "", of(func(w waits) float64 { return w.p50 }), ""),
				row(workload+": pending, p95", "s", "≤ 1.1× kwok's", of(func(w waits) float64 { return w.p95 }),
					fmt.Sprintf("%d pods; the longest %.1f s", w.n, w.max)))
		}
	}
	return rows
}

// formatCounts is e.g. "12 Underutilized, 3 Empty", most first; "none" when empty.
func formatCounts(counts map[string]int) string {
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%d %s", counts[name], name))
	}
	return joinOrNone(parts)
}

// describe says, for the report's settings, what the day played and which timers it scaled.
func (in *dayInput) describe(run dayRun, days []dayFigures) string {
	t := in.timers
	var late, warm []string
	for _, f := range days {
		if f.provider != "" {
			late = append(late, fmt.Sprintf("%s %.1f s", f.provider, f.late.Seconds()))
			warm = append(warm, fmt.Sprintf("%s %.0f s", f.provider, f.warmUp.Seconds()))
		}
	}
	return fmt.Sprintf("the %q trace (%s), %d workloads, replica counts every %v of the day, played in %v (%.0f× compressed) on the README's NodePool (%s: "+
		"its requirements and disruption, no limits) on every provider side by side. Scaled with the day: the trace's hours; a node's boot, "+
		"%v on Linode, to %v (kwok's registration delay the same); consolidateAfter %v to %v. Not scaled: core's batch windows "+
		"(1 s idle, 10 s at most: the local control plane takes a few hundred milliseconds to create a burst's pods, and shorter windows would "+
		"split bursts a real cluster batches whole), core's disruption timers (a 10 s poll and a 15 s validation, about %.0f and %.0f minutes of the day), "+
		"expireAfter (core's 720 h: no node expires). kwok runs on the README NodePool's Linode plans at their us-ord prices, each with the "+
		"allocatable resources the controller reports in LKE mode, so that one lower bound measures both. The lower bound is the planner's "+
		"(whole pods on whole-node patterns, pkg/planner/bound.go) of the pods that exist and have not finished at each %v of the day, DaemonSets' "+
		"requests reserved on every node; pending is from a pod's creation to running, on the clock. The midnight workloads ran before the clock started (%s); "+
		"the latest an event was played after its time: %s",
		in.trace.Name, in.trace.Description, len(in.objects), stepOf(in.trace), run.length, t.compression, defaultNodePoolFile,
		linodeBootOnLinode, t.boot, t.readmeConsolidateAfter, t.consolidateAfter,
		t.dayOf(10*time.Second).Minutes(), t.dayOf(15*time.Second).Minutes(), in.sample, strings.Join(warm, ", "), strings.Join(late, ", "))
}

func stepOf(trace *DayTrace) time.Duration {
	if trace.Step.Duration == 0 {
		return defaultStep
	}
	return trace.Step.Duration
}
