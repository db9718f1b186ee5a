package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

const (
	scaleFleetScenario       = "Scale to 5,000 pods"
	scaleFleetKilledScenario = "Scale to 5,000 pods, leader killed"
)

// scaleFleetReplicas are the controller's replicas in the fleet scenario: the chart's two, with
// leader election.
const scaleFleetReplicas = 2

// fleetNodeCPUs sizes the fleet's nodes, as a NodePool kept to one size: about 450 of them hold
// the fleet mix, a fleet of the size Linode's create limit binds on.
const fleetNodeCPUs = 4

// fleetMix is the fleet scenario's workload at full size: 5,000 pods in five shapes, one of them
// a replicated service spread over hostnames.
var fleetMix = costMix{name: "fleet", deployments: []costDeployment{
	{name: "frontend", replicas: 2000, requests: requests("100m", "256Mi")},
	{name: "api", replicas: 1500, requests: requests("250m", "512Mi")},
	{name: "worker", replicas: 800, requests: requests("500m", "1Gi")},
	{name: "cache", replicas: 200, requests: requests("250m", "2Gi")},
	{name: "replicated", replicas: 500, requests: requests("500m", "512Mi"), spread: true},
}}

// scaleFleetRun sizes the fleet scenario.
type scaleFleetRun struct {
	// divisor divides fleetMix's replicas: 1 for 5,000 pods.
	divisor int
	boot    time.Duration
	// rest is how long the fleet stays idle while the controller's Linode API calls are
	// counted; 0 skips it.
	rest time.Duration
	// killLeader names the mode whose burst is run a second time, on a cluster of its own, with
	// the leader killed halfway through; empty for none.
	killLeader harness.Provider
}

// scaleFleetCluster runs the controller as the chart does (two replicas) and keeps every request
// the emulator answers, for the counts.
func scaleFleetCluster(provider harness.Provider, opts *localcluster.Options) {
	if provider == harness.Kwok {
		return
	}
	opts.ControllerReplicas = scaleFleetReplicas
	opts.EmulatorOptions = append(opts.EmulatorOptions, emulator.WithRequestLogSize(500_000))
}

// scaleFleet deploys the fleet mix at once into an empty NodePool and measures, until every pod
// runs, the time against the floor Linode's create limit and the boot delay set, the create calls
// and 429s, and the leading replica's heap and CPU; then, for the Linode modes, the API calls at
// rest; then it scales the mix to zero, lets core remove the empty nodes and counts the deletes,
// the 429s and the Linodes left. With withLeaderKill it kills the leading replica once a quarter of
// the NodeClaims have launched and reports the takeover, duplicates and leaks instead.
func scaleFleet(ctx context.Context, e *env, run scaleFleetRun, withLeaderKill bool) ([]Row, error) {
	const pool = "fleet"
	mix := fleetMix.scaled(run.divisor)
	scenario := e.Scenario(scaleFleetScenario)
	if withLeaderKill {
		scenario = e.Scenario(scaleFleetKilledScenario)
	}
	if err := e.CreateNodePool(ctx, pool, fleetNodeCPUs); err != nil {
		return nil, err
	}
	metricsURL, err := e.leaderMetricsURL(ctx)
	if err != nil {
		return nil, err
	}
	e.Cluster.Emulator.ResetCounters()
	sampler, err := startSampler(ctx, metricsURL, time.Second)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := e.applyMix(ctx, costPool{name: pool, mix: mix}, mix); err != nil {
		sampler.stop()
		return nil, err
	}
	pods := mix.pods()
	var takeover harness.LeaderTakeover
	if withLeaderKill {
		if err := e.WaitFor(ctx, "a quarter of the NodeClaims launched", 10*time.Minute, func(context.Context) (bool, error) {
			claims := e.Watch.ClaimsOf(pool)
			return len(claims) >= pods/50 && 4*launchedOf(claims) >= len(claims), nil
		}); err != nil {
			sampler.stop()
			return nil, err
		}
		sampler.stop()
		if takeover, err = harness.KillLeader(ctx, e.Cluster); err != nil {
			return nil, err
		}
	}
	err = e.WaitRunning(ctx, pool, pods, 30*time.Minute)
	wall := time.Since(start)
	usage := sampler.stop()
	if err != nil {
		return nil, err
	}
	seen := e.Watch.ClaimsOf(pool)
	// NodeClaims core gave up on before their create's turn came (its launch timeout) never
	// launched: a node is a NodeClaim that did.
	claims, nodes := len(seen), launchedOf(seen)
	launched := e.ControllerRequests()
	note := fmt.Sprintf("%d pods (%s) on %d-vCPU nodes; boot delay %v; %d NodeClaims, %d launched", pods, mix.describe(), fleetNodeCPUs, e.BootDelay, claims, nodes)
	floor, floorNote := e.launchFloor(nodes)
	var podWaits []float64
	for _, p := range e.Watch.PodsOf(pool) {
		podWaits = append(podWaits, p.Running.Sub(p.Created).Seconds())
	}
	rows := []Row{
		{Scenario: scenario, Metric: "pending -> all running", Value: wall.Seconds(), Unit: "s", Target: runningTarget(e.Provider, floor, e.BootDelay), Note: note},
		{Scenario: scenario, Metric: "pending -> running, p50 over pods", Value: harness.Percentile(podWaits, 50), Unit: "s", Note: note},
		{Scenario: scenario, Metric: "pending -> running, p95 over pods", Value: harness.Percentile(podWaits, 95), Unit: "s", Note: note},
		{Scenario: scenario, Metric: "NodeClaims", Value: float64(claims), Unit: "NodeClaims", Note: note},
	}
	if e.Provider != harness.Kwok {
		creates := countRoutes(launched, harness.CreateRoutes)
		rows = append(rows,
			Row{Scenario: scenario, Metric: "floor: create limit and boot delay", Value: floor.Seconds(), Unit: "s", Note: floorNote},
			Row{Scenario: scenario, Metric: "pending -> all running, over the floor", Value: wall.Seconds() / floor.Seconds(), Unit: "x",
				Target: map[bool]string{true: "<= 1.1", false: ""}[floor > e.BootDelay], Note: floorNote},
			Row{Scenario: scenario, Metric: "create calls per node", Value: float64(creates) / float64(max(nodes, 1)), Unit: "calls", Target: "<= 1.05",
				Note: fmt.Sprintf("%d creates for %d NodeClaims launched, of %d created, retries included", creates, nodes, claims)},
			Row{Scenario: scenario, Metric: "answers 429 while launching", Value: float64(countStatus(launched, http.StatusTooManyRequests)), Unit: "answers", Target: "0",
				Note: "per route: " + routeSummary(slices.DeleteFunc(slices.Clone(launched), func(r emulator.RequestRecord) bool { return r.Status != http.StatusTooManyRequests }), 1)},
		)
	}
	if withLeaderKill {
		leaked, duplicates, err := harness.FleetMismatches(ctx, e.Cluster)
		if err != nil {
			return rows, err
		}
		killNote := fmt.Sprintf("replica %d led and was killed with %d NodeClaims created; lease %v", takeover.Killed+1, len(e.Watch.ClaimsOf(pool)), takeover.Lease)
		return append(rows,
			Row{Scenario: scenario, Metric: "standby holds the lease, after the kill", Value: takeover.After.Seconds(), Unit: "s",
				Target: fmt.Sprintf("<= %v lease + the standby's look", takeover.Lease), Note: killNote},
			Row{Scenario: scenario, Metric: "Linodes or Nodes beyond one per NodeClaim", Value: float64(duplicates), Target: "0", Note: killNote},
			Row{Scenario: scenario, Metric: "Linodes no NodeClaim accounts for", Value: float64(leaked), Target: "0", Note: killNote},
			replicaRestarts(scenario, e.Cluster),
		), nil
	}
	samples := fmt.Sprintf("the leading replica's, sampled every second (%d samples, %d missed)", len(usage.heap), usage.missed)
	rows = append(rows,
		Row{Scenario: scenario, Metric: "controller heap in use, peak", Value: slices.Max(usage.heap) / 1e6, Unit: "MB", Target: "<= 1.5x kwok", Note: samples},
		Row{Scenario: scenario, Metric: "controller heap in use, p95", Value: harness.Percentile(usage.heap, 95) / 1e6, Unit: "MB", Target: "<= 1.5x kwok", Note: samples},
		Row{Scenario: scenario, Metric: "controller CPU, mean", Value: usage.cpuSeconds / wall.Seconds(), Unit: "cores", Note: "the leading replica's CPU seconds over the wall time"},
	)
	if e.Provider != harness.Kwok && run.rest > 0 {
		rest, err := e.callsAtRest(ctx, scenario, nodes, run.rest)
		rows = append(rows, rest...)
		if err != nil {
			return rows, err
		}
	}
	zero, err := e.scaleToZero(ctx, scenario, pool, mix, nodes)
	return append(rows, zero...), err
}

// replicaRestarts counts the times the controller's replicas were started again, as their
// Deployment's pods would be, after the kill or after exiting on their own (a replica exits when
// it loses its lease); beyond the killed leader's return, each is a lease lost under load.
func replicaRestarts(scenario string, cluster *localcluster.Cluster) Row {
	var each []string
	for i := range cluster.ControllerReplicas() {
		each = append(each, fmt.Sprintf("replica %d: %d", i+1, cluster.ReplicaRestarts(i)))
	}
	return Row{Scenario: scenario, Metric: "controller replicas started again", Value: float64(cluster.ControllerRestarts()), Unit: "restarts",
		Note: strings.Join(each, ", ") + "; the killed leader's return counts one, each lease lost under load one more"}
}

// leaderMetricsURL is where the replica that leads serves its metrics: the one replica when
// there is one.
func (e *env) leaderMetricsURL(ctx context.Context) (string, error) {
	if e.Provider == harness.Kwok || e.Cluster.ControllerReplicas() == 1 {
		return e.Cluster.ControllerMetricsURL(), nil
	}
	leader := -1
	err := e.WaitFor(ctx, "a replica leads", 2*time.Minute, func(ctx context.Context) (bool, error) {
		var err error
		leader, err = e.Cluster.Leader(ctx)
		return err == nil, nil
	})
	if err != nil {
		return "", err
	}
	return e.Cluster.ReplicaMetricsURL(leader), nil
}

// launchFloor is the shortest time from pending to all running that Linode's rate limit on the
// mode's creates and the boot delay allow for n nodes: the last create's turn, then a boot.
func (e *env) launchFloor(n int) (time.Duration, string) {
	limits := emulator.DefaultRateLimits()
	perWindow, window, what := limits.OtherPerMinute, time.Minute, "LKE pool creates count against the limit of other operations"
	if e.Provider == harness.LinodeInstance {
		perWindow, window, what = limits.LinodeCreates, limits.LinodeCreateWindow, "Linode creates"
	}
	lastTurn := time.Duration((n-1)/perWindow) * window
	return lastTurn + e.BootDelay, fmt.Sprintf("%s: %d per %v; the last of %d creates' turn %v after the first, then the boot delay %v",
		what, perWindow, window, n, lastTurn, e.BootDelay)
}

// runningTarget is the issue's: within 1.1x the floor where Linode's create limit sets it, within
// 1.3x kwok's time where it does not.
func runningTarget(provider harness.Provider, floor, boot time.Duration) string {
	switch {
	case provider == harness.Kwok:
		return ""
	case floor > boot:
		return fmt.Sprintf("<= %.0f s (1.1x the floor)", 1.1*floor.Seconds())
	default:
		return "<= 1.3x kwok"
	}
}

// callsAtRest leaves the fleet idle and counts the controller's Linode API calls.
func (e *env) callsAtRest(ctx context.Context, scenario string, nodes int, rest time.Duration) ([]Row, error) {
	idle, err := e.requestsAtRest(ctx, nodes, rest)
	if err != nil {
		return nil, err
	}
	return []Row{{
		Scenario: scenario, Metric: fmt.Sprintf("Linode API calls per minute at rest, %d nodes", nodes),
		Value: float64(len(idle)) / rest.Minutes(), Unit: "calls/min", Target: "<= 2",
		Note: fmt.Sprintf("both replicas, idle for %v: %s", rest, routeSummary(idle, 1)),
	}}, nil
}

// deleteRoutes are the requests that remove a Linode: its LKE pool or the Linode itself.
var deleteRoutes = map[string]bool{
	"DELETE /lke/clusters/{clusterId}/pools/{poolId}": true,
	"DELETE /linode/instances/{linodeId}":             true,
}

// scaleToZero scales every Deployment of the mix to zero replicas, lets core's consolidation
// remove the empty nodes (every node in the budget, no wait), and measures until no NodeClaim,
// Node or Linode of the fleet is left.
func (e *env) scaleToZero(ctx context.Context, scenario, pool string, mix costMix, nodes int) ([]Row, error) {
	var nodePool karpv1.NodePool
	if err := e.Cluster.Kube.Get(ctx, client.ObjectKey{Name: pool}, &nodePool); err != nil {
		return nil, err
	}
	nodePool.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration("0s")
	nodePool.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: "100%"}}
	if err := e.Cluster.Kube.Update(ctx, &nodePool); err != nil {
		return nil, fmt.Errorf("letting NodePool %s remove empty nodes: %w", pool, err)
	}
	e.Cluster.Emulator.ResetCounters()
	empty := mix
	empty.deployments = slices.Clone(mix.deployments)
	for i := range empty.deployments {
		empty.deployments[i].replicas = 0
	}
	start := time.Now()
	if err := e.applyMix(ctx, costPool{name: pool, mix: empty}, empty); err != nil {
		return nil, err
	}
	err := e.WaitFor(ctx, fmt.Sprintf("the %d nodes of %s are gone", nodes, pool), 20*time.Minute, func(ctx context.Context) (bool, error) {
		var claims karpv1.NodeClaimList
		if err := e.Cluster.Kube.List(ctx, &claims, client.MatchingLabels{karpv1.NodePoolLabelKey: pool}); err != nil {
			return false, nil //nolint:nilerr // kube-apiserver busy deleting hundreds of nodes: ask again
		}
		if len(claims.Items) > 0 {
			return false, nil
		}
		return e.Provider == harness.Kwok || len(e.Cluster.Emulator.Instances()) == 0, nil
	})
	took := time.Since(start)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("from the Deployments scaled to zero (consolidateAfter 0s, budget 100%%) until no NodeClaim of the %d is left", nodes)
	rows := []Row{{Scenario: scenario, Metric: "scale to zero: every node gone", Value: took.Seconds(), Unit: "s", Note: note}}
	if e.Provider == harness.Kwok {
		return rows, nil
	}
	requests := e.ControllerRequests()
	deletes := countRoutes(requests, deleteRoutes)
	leaked, _, err := harness.FleetMismatches(ctx, e.Cluster)
	if err != nil {
		return rows, err
	}
	return append(rows,
		Row{Scenario: scenario, Metric: "scale to zero: delete calls per node", Value: float64(deletes) / float64(max(nodes, 1)), Unit: "calls",
			Note: fmt.Sprintf("%d deletes for %d nodes; per route: %s", deletes, nodes, routeSummary(requests, nodes))},
		Row{Scenario: scenario, Metric: "scale to zero: answers 429", Value: float64(countStatus(requests, http.StatusTooManyRequests)), Unit: "answers", Target: "0"},
		Row{Scenario: scenario, Metric: "scale to zero: Linodes left", Value: float64(leaked), Unit: "Linodes", Target: "0",
			Note: "Linodes no NodeClaim accounts for once every NodeClaim is gone"},
	), nil
}

// launchedOf counts the NodeClaims that launched.
func launchedOf(claims []harness.ClaimTimes) int {
	n := 0
	for _, c := range claims {
		if !c.Launched.IsZero() {
			n++
		}
	}
	return n
}

func countRoutes(requests []emulator.RequestRecord, routes map[string]bool) int {
	n := 0
	for _, r := range requests {
		if routes[r.Route] {
			n++
		}
	}
	return n
}
