package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Names of the cluster scenarios, for Config.Scenarios.
const (
	ScenarioCapacity   = "capacity"
	ScenarioDuplicates = "duplicates"
	ScenarioAPICost    = "api-cost"
	ScenarioScale      = "scale"
	ScenarioCostFleets = "cost-fleets"
	ScenarioScale5000  = "scale-5000"
	// ScenarioLeaderKilled is scale-5000's burst with the leader killed halfway, in the mode
	// the plan names.
	ScenarioLeaderKilled = "scale-5000-leader-killed"
	// ScenarioDay plays a day's trace on every provider side by side.
	ScenarioDay = "day"
)

// ClusterScenarios are the scenarios Run knows.
var ClusterScenarios = []string{ScenarioCapacity, ScenarioDuplicates, ScenarioAPICost, ScenarioScale, ScenarioScale5000, ScenarioLeaderKilled, ScenarioCostFleets, ScenarioDay}

// plan is what a run measures: pod counts, boot delays, durations, and which scenarios share a
// cluster.
type plan struct {
	capacityPods  []int
	duplicatePods int
	duplicateBoot time.Duration
	apiCostNodes  int
	apiCostBoot   time.Duration
	apiCostRest   time.Duration
	scalePods     int
	fleet         scaleFleetRun
	cost          costRun
	costBoot      time.Duration
	day           dayRun
	// instanceScenarios are those that run in instance mode too, beside LKE mode.
	instanceScenarios []string
	// groups are the timed scenarios, each group run one scenario after another on a new cluster
	// of each provider, with nothing else running unless timedSideBySide. The counted scenarios, duplicates (both
	// providers) and the API cost (Linode's), run first, side by side on clusters of their own:
	// their figures are counts, which sharing the machine does not change, and duplicates mostly
	// waits for its nodes to boot.
	groups []clusterGroup
	// leftToTests are scenarios the plan runs only when named, since the test suites check the
	// same thing in CI.
	leftToTests []string
	// timedSideBySide runs every group's clusters at once: the timed figures then say what a
	// loaded machine gives, which is enough where the run only shows that the scenarios play.
	timedSideBySide bool
}

// timedRun is a group's scenarios on a cluster of one provider.
type timedRun struct {
	provider  harness.Provider
	group     clusterGroup
	scenarios []string
}

type clusterGroup struct {
	boot      time.Duration
	scenarios []string
	// tune, when set, changes the options of the group's cluster for each provider.
	tune func(harness.Provider, *localcluster.Options)
}

// fullPlan is the issue's: 5, 50 and 500 pods, a 3-minute boot, 100 nodes at rest (for three
// minutes: at least one cycle of the 2-minute garbage collectors, core's and ours, that read the
// API at rest, and long enough for the maintenance controller's two cadences, 1 and 5 minutes, to
// give a rate whatever the window's phase), 1,000 pods on a cluster of their own, so no earlier scenario's objects weigh on the heap.
var fullPlan = plan{
	capacityPods:  []int{5, 50, 500},
	duplicatePods: 50,
	duplicateBoot: 3 * time.Minute,
	apiCostNodes:  100,
	apiCostBoot:   5 * time.Second,
	apiCostRest:   3 * time.Minute,
	scalePods:     1000,
	// 5,000 pods on about 450 nodes, a 30-second boot: in instance mode Linode's create limit
	// (20 per 15 s) sets the time to all running; then 10 minutes at rest and back to zero. The
	// leader's loss is measured in instance mode, where the dead leader's creates wait for turns.
	fleet:             scaleFleetRun{divisor: 1, boot: 30 * time.Second, rest: 10 * time.Minute, killLeader: harness.LinodeInstance},
	instanceScenarios: []string{ScenarioCapacity, ScenarioDuplicates, ScenarioAPICost, ScenarioScale5000},
	// Every mix for the README's NodePools and for one open to every plan; the README's then
	// scaled to a third and 10 minutes at rest. Consolidation as the README's default NodePool
	// has it but sooner and with every node in the budget (the README's 1m and core's default of
	// 10% reach the same fleet more slowly). The fleet counts as settled once it has been quiet
	// through one of core's revalidations of a consolidated cluster (every 5 minutes): a shorter
	// quiet showed a late replacement at rest.
	cost: costRun{mixes: allCostMixes(), open: true, shrink: true, consolidateAfter: "15s", budget: "100%",
		settle: 5*time.Minute + 30*time.Second, steady: 10 * time.Minute},
	costBoot: 5 * time.Second,
	// A day in 24 minutes (a minute of the day a second), LKE mode, instance mode and kwok side by
	// side, after everything else.
	day: dayRun{length: 24 * time.Minute, providers: []harness.Provider{harness.Linode, harness.LinodeInstance, harness.Kwok}},
	groups: []clusterGroup{
		{5 * time.Second, []string{ScenarioCapacity}, nil},
		{3 * time.Second, []string{ScenarioScale}, nil},
		{30 * time.Second, []string{ScenarioScale5000}, scaleFleetCluster},
	},
}

// quickPlan keeps every scenario but shrinks it, and runs clusters side by side, to fit CI's budget.
var quickPlan = plan{
	capacityPods:  []int{5, 50},
	duplicatePods: 20,
	duplicateBoot: 20 * time.Second,
	apiCostNodes:  10,
	apiCostBoot:   5 * time.Second,
	apiCostRest:   15 * time.Second,
	// A twentieth of the fleet (250 pods, about 23 nodes), LKE mode beside kwok, no time at rest.
	fleet: scaleFleetRun{divisor: 20, boot: 5 * time.Second},
	// Three mixes for the README's NodePools, provisioned, consolidated and measured; scaling
	// down and the fleet at rest take many minutes, too long for CI.
	cost:     costRun{mixes: quickCostMixes(), consolidateAfter: "15s", budget: "100%", settle: 45 * time.Second},
	costBoot: 5 * time.Second,
	// The day in 2 minutes (twelve minutes of the day a second), LKE mode beside kwok, its bound
	// sampled every quarter hour: it shows the day plays and is measured; consolidation lags hours
	// of the day behind at this speed.
	day:               dayRun{length: 2 * time.Minute, providers: []harness.Provider{harness.Linode, harness.Kwok}, sample: 15 * time.Minute},
	instanceScenarios: []string{ScenarioCapacity, ScenarioAPICost},
	// Duplicates are the end-to-end suites' to check in CI, in both modes, against Linode's
	// boot: the quick run would only repeat them.
	leftToTests: []string{ScenarioDuplicates},
	// The time to capacity and the fleet share each provider's cluster (the chart's two replicas
	// in the Linode modes), and the providers' clusters run side by side.
	groups: []clusterGroup{
		{5 * time.Second, []string{ScenarioCapacity, ScenarioScale5000}, scaleFleetCluster},
	},
	timedSideBySide: true,
}

// Run runs the cluster scenarios (time to capacity, duplicates, Linode API cost and scale) with
// this project's controller in LKE mode, those of the plan's instanceScenarios again in instance
// mode, and all but the API cost with core's kwok provider, on new local clusters. It returns the rows of every scenario that finished and the settings in
// effect; a scenario that fails is named in the error and the others still run.
func Run(ctx context.Context, cfg Config) ([]Row, map[string]string, error) {
	p := fullPlan
	if cfg.Quick {
		p = quickPlan
	}
	if len(cfg.Mixes) > 0 {
		p.cost.mixes = selectMixes(costMixes, cfg.Mixes)
	}
	var boots []string
	for _, g := range p.groups {
		boots = append(boots, fmt.Sprintf("%s %v", strings.Join(g.scenarios, ", "), g.boot))
	}
	settings := map[string]string{
		"Pods":     "pause containers asking for 1 CPU each, one Deployment per run, pinned to a NodePool of their own",
		"Batching": "Karpenter's defaults in every scenario (BATCH_IDLE_DURATION 1s, BATCH_MAX_DURATION 10s)",
		"Modes": fmt.Sprintf("Linode rows are LKE mode's (single-node LKE pools); rows named \"%s\" are instance mode's, for %s "+
			"(plain Linodes from %s that read their user data from the Metadata service and join by TLS bootstrap)",
			strings.TrimPrefix(harness.InstanceModeSuffix, ", "), strings.Join(p.instanceScenarios, ", "), harness.InstanceImage),
		"NodePools": fmt.Sprintf("Linode: standard and dedicated plans; kwok: core's built-in catalogue, amd64 linux on-demand; "+
			"%d-vCPU nodes only for duplicates, %d-vCPU for the API cost; never consolidated, so only the scenario changes the fleet. "+
			"Cost fleets: a NodePool per mix (%s) with the requirements and taints of the README's NodePools (%s; %s for GPU pods)%s, "+
			"consolidating when empty or underutilized after %s, budget %s; SIZING_* settings at their defaults; %s",
			duplicatesNodeCPUs, apiCostNodeCPUs, costMixNames(p.cost.mixes), defaultNodePoolFile, gpuNodePoolFile,
			map[bool]string{true: " and another open to every plan", false: ""}[p.cost.open], p.cost.consolidateAfter, p.cost.budget,
			map[bool]string{
				true: fmt.Sprintf("measured when every pod first ran and once consolidation settled (no NodeClaim created or deleted for %v); "+
					"the README's mixes then scaled to a third, measured once settled again, and watched at rest for %v", p.cost.settle, p.cost.steady),
				false: fmt.Sprintf("measured when every pod first ran and once consolidation settled (no NodeClaim created or deleted for %v); no scaling down, no watch at rest", p.cost.settle),
			}[p.cost.shrink]),
		"Boot delay": fmt.Sprintf("from the provider's create to a registered node: for Linode, the emulator's delays (160 s) scaled; "+
			"for instance mode, 150 s (no LKE pool) scaled; for kwok, its KWOKNodeClass's nodeRegistrationDelay. %s; duplicates %v; api-cost %v; cost fleets %v", strings.Join(boots, "; "), p.duplicateBoot, p.apiCostBoot, p.costBoot),
		"Fleet": fmt.Sprintf("scale-5000: %d pods (%s) into one NodePool of %d-vCPU nodes, the controller as the chart runs it (%d replicas, leader election; "+
			"the leading replica's heap and CPU), kwok with one; %s; then every Deployment scaled to zero, consolidation removing empty nodes at once",
			fleetMix.scaled(p.fleet.divisor).pods(), fleetMix.scaled(p.fleet.divisor).describe(), fleetNodeCPUs, scaleFleetReplicas,
			map[bool]string{true: fmt.Sprintf("the Linode modes' fleets then idle for %v while their API calls are counted", p.fleet.rest), false: "no time at rest"}[p.fleet.rest > 0]),
		"Targets": "duplicates: none; scale: core's thresholds for its kwok provider (all running within 2 min, heap under 120 MB, " +
			"CPU under 0.5 core), for both providers",
		"Clusters": "local: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok kubelets, the Linode API emulator " +
			"with Linode's published rate limits. A new one per provider for each of: " + strings.Join(groupNames(p), "; ") +
			". The duplicates clusters (Linode in each mode, kwok), the API cost's (each mode) and the cost fleets' run at the same time, before the others: their figures are counts and prices; " +
			map[bool]string{true: "scenarios left to the test suites unless named: " + strings.Join(p.leftToTests, ", ") + "; ", false: ""}[len(p.leftToTests) > 0] +
			map[bool]string{false: "the timed scenarios run one cluster at a time, with nothing else on the machine",
				true: "the timed scenarios' clusters then run all at once, so their times are a loaded machine's"}[p.timedSideBySide],
	}
	scenarios := map[string]func(context.Context, *env) ([]Row, error){
		ScenarioCapacity:   func(ctx context.Context, e *env) ([]Row, error) { return timeToCapacity(ctx, e, p.capacityPods) },
		ScenarioDuplicates: func(ctx context.Context, e *env) ([]Row, error) { return duplicates(ctx, e, p.duplicatePods) },
		ScenarioAPICost: func(ctx context.Context, e *env) ([]Row, error) {
			return apiCost(ctx, e, p.apiCostNodes, p.apiCostRest)
		},
		ScenarioScale:        func(ctx context.Context, e *env) ([]Row, error) { return scale(ctx, e, p.scalePods) },
		ScenarioScale5000:    func(ctx context.Context, e *env) ([]Row, error) { return scaleFleet(ctx, e, p.fleet, false) },
		ScenarioLeaderKilled: func(ctx context.Context, e *env) ([]Row, error) { return scaleFleet(ctx, e, p.fleet, true) },
		ScenarioCostFleets:   func(ctx context.Context, e *env) ([]Row, error) { return costOnCluster(ctx, e, p.cost) },
	}
	var ours, kwok []Row
	// keep files a cluster's rows with kwok's or with ours, which withBaseline pairs.
	keep := func(provider harness.Provider, rows []Row) {
		if provider == harness.Kwok {
			kwok = append(kwok, rows...)
		} else {
			ours = append(ours, rows...)
		}
	}
	var errs []error
	counted := []countedRun{
		{harness.Linode, p.duplicateBoot, ScenarioDuplicates, nil},
		{harness.Kwok, p.duplicateBoot, ScenarioDuplicates, nil},
		{harness.Linode, p.apiCostBoot, ScenarioAPICost, nil},
		{harness.Linode, p.costBoot, ScenarioCostFleets, costClusterPlan(p.cost.mixes)},
	}
	for _, r := range slices.Clone(counted) {
		if r.provider == harness.Linode && slices.Contains(p.instanceScenarios, r.scenario) {
			counted = append(counted, countedRun{harness.LinodeInstance, r.boot, r.scenario, r.tune})
		}
	}
	counted = slices.DeleteFunc(counted, func(r countedRun) bool { return !p.runs(cfg, r.scenario) || !cfg.runsWith(r.provider) })
	var alongside sync.WaitGroup
	if cfg.WhileCounting != nil {
		alongside.Go(func() { cfg.WhileCounting(ctx) })
	}
	if len(counted) > 0 {
		cfg.Progressf("%s, side by side", strings.Join(countedNames(counted), ", "))
		rows := make([][]Row, len(counted))
		runErrs := make([]error, len(counted))
		var wg sync.WaitGroup
		for i, r := range counted {
			wg.Go(func() {
				rows[i], runErrs[i] = runGroup(ctx, cfg, r.provider, r.boot, []string{r.scenario}, scenarios, r.tunes()...)
			})
		}
		wg.Wait()
		for i, r := range counted {
			keep(r.provider, rows[i])
		}
		errs = append(errs, runErrs...)
	}
	alongside.Wait()
	var timed []timedRun
	for _, g := range p.groups {
		for _, provider := range []harness.Provider{harness.Linode, harness.LinodeInstance, harness.Kwok} {
			names := slices.DeleteFunc(slices.Clone(g.scenarios), func(s string) bool {
				return !p.runs(cfg, s) || !cfg.runsWith(provider) || (provider == harness.LinodeInstance && !slices.Contains(p.instanceScenarios, s))
			})
			if len(names) > 0 {
				timed = append(timed, timedRun{provider, g, names})
			}
		}
	}
	runTimed := func(r timedRun) ([]Row, error) {
		cfg.Progressf("%s: %s", r.provider, strings.Join(r.scenarios, ", "))
		var tune []func(*localcluster.Options)
		if r.group.tune != nil {
			tune = append(tune, func(o *localcluster.Options) { r.group.tune(r.provider, o) })
		}
		return runGroup(ctx, cfg, r.provider, r.group.boot, r.scenarios, scenarios, tune...)
	}
	timedRows := make([][]Row, len(timed))
	timedErrs := make([]error, len(timed))
	if p.timedSideBySide {
		var wg sync.WaitGroup
		for i, r := range timed {
			wg.Go(func() { timedRows[i], timedErrs[i] = runTimed(r) })
		}
		wg.Wait()
	} else {
		for i, r := range timed {
			timedRows[i], timedErrs[i] = runTimed(r)
		}
	}
	for i, r := range timed {
		keep(r.provider, timedRows[i])
	}
	errs = append(errs, timedErrs...)
	if p.runs(cfg, ScenarioLeaderKilled) && p.fleet.killLeader != "" && cfg.runsWith(p.fleet.killLeader) {
		provider := p.fleet.killLeader
		cfg.Progressf("%s: %s", provider, ScenarioLeaderKilled)
		got, err := runGroup(ctx, cfg, provider, p.fleet.boot, []string{ScenarioLeaderKilled}, scenarios,
			func(o *localcluster.Options) { scaleFleetCluster(provider, o) })
		ours = append(ours, got...)
		errs = append(errs, err)
	}
	if p.runs(cfg, ScenarioDay) {
		run := p.day
		if cfg.DayLength > 0 {
			run.length = cfg.DayLength
		}
		got, daySettings, err := runDay(ctx, cfg, run)
		ours = append(ours, got...)
		errs = append(errs, err)
		maps.Copy(settings, daySettings)
	}
	// The order, whatever order the clusters ran in, instance mode's rows after LKE mode's.
	var order []string
	for _, scenario := range []string{capacityScenario, duplicatesScenario, apiCostScenario, scaleScenario, scaleFleetScenario, scaleFleetKilledScenario, costScenario, dayScenario} {
		order = append(order, scenario, scenario+harness.InstanceModeSuffix, scenario+kwokSuffix)
	}
	rows := withBaseline(ours, kwok)
	slices.SortStableFunc(rows, func(a, b Row) int {
		return slices.Index(order, a.Scenario) - slices.Index(order, b.Scenario)
	})
	return rows, settings, errors.Join(errs...)
}

// runGroup runs the named scenarios one after another on a new cluster of the provider, and
// stops at the first that fails.
func runGroup(ctx context.Context, cfg Config, provider harness.Provider, boot time.Duration, names []string,
	scenarios map[string]func(context.Context, *env) ([]Row, error), tune ...func(*localcluster.Options)) ([]Row, error) {
	e, err := startEnv(ctx, cfg, provider, boot, tune...)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, name := range names {
		err := e.RemovePools(ctx)
		if err == nil {
			var got []Row
			got, err = scenarios[name](ctx, e)
			rows = append(rows, got...)
		}
		if err != nil {
			return rows, errors.Join(fmt.Errorf("%s, %s provider: %w", name, provider, err), e.StopAfter(err))
		}
	}
	return rows, e.Stop()
}

// countedRun is a counted scenario on a cluster of its own; tune, when set, changes the
// cluster's options.
type countedRun struct {
	provider harness.Provider
	boot     time.Duration
	scenario string
	tune     func(*localcluster.Options)
}

func costMixNames(mixes []costMix) string {
	var names []string
	for _, m := range mixes {
		names = append(names, m.name)
	}
	return strings.Join(names, ", ")
}

func (r countedRun) tunes() []func(*localcluster.Options) {
	if r.tune == nil {
		return nil
	}
	return []func(*localcluster.Options){r.tune}
}

func countedNames(runs []countedRun) []string {
	var names []string
	for _, r := range runs {
		if !slices.Contains(names, r.scenario) {
			names = append(names, r.scenario)
		}
	}
	return names
}

func groupNames(p plan) []string {
	names := []string{ScenarioDuplicates, ScenarioAPICost, ScenarioCostFleets}
	for _, g := range p.groups {
		names = append(names, strings.Join(g.scenarios, " then "))
	}
	return names
}

// runsWith tells whether the provider was asked for; all are when none is named.
func (c Config) runsWith(provider harness.Provider) bool {
	return len(c.Providers) == 0 || slices.Contains(c.Providers, string(provider))
}

// runs tells whether the scenario was asked for; all are when none is named.
func (c Config) runs(scenario string) bool {
	return len(c.Scenarios) == 0 || slices.Contains(c.Scenarios, scenario)
}

// runs tells whether the plan runs the scenario: when it was asked for, and for one the plan
// leaves to the test suites, only when it was named.
func (p plan) runs(cfg Config, scenario string) bool {
	if slices.Contains(p.leftToTests, scenario) {
		return slices.Contains(cfg.Scenarios, scenario)
	}
	return cfg.runs(scenario)
}

// withBaseline gives each of our rows, in either mode, the kwok provider's figure for the same
// scenario and metric, and adds kwok's note where it says something ours does not.
func withBaseline(ours, kwok []Row) []Row {
	out := make([]Row, 0, len(ours))
	matched := make([]bool, len(kwok))
	for _, row := range ours {
		for i, k := range kwok {
			if k.Scenario != strings.TrimSuffix(row.Scenario, harness.InstanceModeSuffix) || k.Metric != row.Metric {
				continue
			}
			matched[i] = true
			value := k.Value
			row.Kwok = &value
			if k.Note != row.Note {
				row.Note += "; kwok: " + k.Note
			}
		}
		out = append(out, row)
	}
	// Kwok's figures stand alone where ours were not measured (-providers kwok).
	for i, k := range kwok {
		if !matched[i] {
			out = append(out, Row{Scenario: k.Scenario + kwokSuffix, Metric: k.Metric, Value: k.Value, Unit: k.Unit, Note: k.Note})
		}
	}
	return out
}

// kwokSuffix names the rows of kwok's figures that have none of ours beside them.
const kwokSuffix = ", kwok only"
