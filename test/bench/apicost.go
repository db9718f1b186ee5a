package bench

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

const apiCostScenario = "Linode API cost"

// apiCostNodeCPUs sizes the API-cost scenario's nodes: a one-CPU pod fills a 2-vCPU node (less
// what kubelet reserves), so each pod makes one node.
const apiCostNodeCPUs = 2

// Rate-limit budgets, as Linode publishes them and the emulator enforces them
// (emulator.DefaultRateLimits).
const (
	budgetPaginated = "paginated GETs"
	budgetCreate    = "Linode creates"
	budgetOther     = "other operations"
)

// apiCost launches nodes (one pod each), counting the controller's Linode API requests per node
// launched, then leaves them idle and counts the requests per minute at rest, as a share of each
// of Linode's rate limits.
func apiCost(ctx context.Context, e *env, nodes int, rest time.Duration) ([]Row, error) {
	const pool = "api-cost"
	if err := e.CreateNodePool(ctx, pool, apiCostNodeCPUs); err != nil {
		return nil, err
	}
	e.Cluster.Emulator.ResetCounters()
	if _, err := e.Deploy(ctx, pool, nodes); err != nil {
		return nil, err
	}
	if err := e.WaitRunning(ctx, pool, nodes, 5*time.Minute); err != nil {
		return nil, err
	}
	launched := e.ControllerRequests()
	claims := len(e.Watch.ClaimsOf(pool))
	launchNote := fmt.Sprintf("%d NodeClaims for %d one-CPU pods on %d-vCPU nodes, until all ran; per node: %s", claims, nodes, apiCostNodeCPUs, routeSummary(launched, claims))
	createRoute := "POST /lke/clusters/{clusterId}/pools"
	if e.Provider == harness.LinodeInstance {
		createRoute = "POST /linode/instances"
	}
	creates := len(slices.DeleteFunc(slices.Clone(launched), func(r emulator.RequestRecord) bool { return r.Route != createRoute }))
	throttled := countStatus(launched, http.StatusTooManyRequests)

	idle, err := e.requestsAtRest(ctx, claims, rest)
	if err != nil {
		return nil, err
	}
	perMinute := float64(len(idle)) / rest.Minutes()
	restNote := fmt.Sprintf("%d nodes idle for %v; %s", claims, rest, routeSummary(idle, 1))
	rows := []Row{
		{Scenario: e.Scenario(apiCostScenario), Metric: "calls per launched node", Value: float64(len(launched)) / float64(max(claims, 1)), Unit: "calls", Note: launchNote},
		{Scenario: e.Scenario(apiCostScenario), Metric: "create calls per launched node", Value: float64(creates) / float64(max(claims, 1)), Unit: "calls", Target: "<= 1.05",
			Note: fmt.Sprintf("%d %s for %d NodeClaims, retries of refused creates included", creates, createRoute, claims)},
		{Scenario: e.Scenario(apiCostScenario), Metric: "answers 429 while launching", Value: float64(throttled), Unit: "answers", Target: "0",
			Note: "the API refusing a request over its rate limit; the controller paces its requests to the limits"},
		{Scenario: e.Scenario(apiCostScenario), Metric: fmt.Sprintf("calls per minute at rest, %d nodes", claims), Value: perMinute, Unit: "calls/min", Note: restNote},
	}
	rows = append(rows, budgetShares(e.Scenario(apiCostScenario), "at rest", idle, rest, "")...)
	maintenance := slices.DeleteFunc(slices.Clone(idle), func(r emulator.RequestRecord) bool { return !maintenanceRoutes[r.Route] })
	listingsTarget, sharesTarget := "< 2 calls/min", "< 1 %"
	note := fmt.Sprintf("one filtered listing of events per MAINTENANCE_POLL_INTERVAL (%v), one of maintenance per MAINTENANCE_LEAD_TIME/24 (%v): %s",
		options.DefaultMaintenancePollInterval, options.DefaultMaintenanceLeadTime/24, routeSummary(maintenance, 1))
	if rest < options.DefaultMaintenancePollInterval {
		// A window shorter than the interval holds zero or one poll, depending on its phase.
		listingsTarget, sharesTarget = "", ""
		note += fmt.Sprintf("; counted over %v, less than one poll interval, so not a rate", rest)
	}
	rows = append(rows, Row{
		Scenario: e.Scenario(apiCostScenario),
		Metric:   fmt.Sprintf("maintenance controller: listings per minute at rest, %d nodes", claims),
		Value:    float64(len(maintenance)) / rest.Minutes(),
		Unit:     "calls/min",
		Target:   listingsTarget,
		Note:     note,
	})
	return append(rows, budgetShares(e.Scenario(apiCostScenario), "maintenance controller at rest", maintenance, rest, sharesTarget)...), nil
}

// requestsAtRest leaves the nodes idle for rest and returns the controller's Linode API requests
// meanwhile.
func (e *env) requestsAtRest(ctx context.Context, nodes int, rest time.Duration) ([]emulator.RequestRecord, error) {
	e.Config.Progressf("  %s: %d nodes up: counting the controller's requests at rest for %v", e.Provider, nodes, rest)
	e.Cluster.Emulator.ResetCounters()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(rest):
	}
	if err := e.CheckHealthy(); err != nil {
		return nil, err
	}
	return e.ControllerRequests(), nil
}

// maintenanceRoutes are the routes the maintenance controller calls, and no other part of the
// controller does.
var maintenanceRoutes = map[string]bool{"GET /account/maintenance": true, "GET /account/events": true, "GET /account/events/{eventId}": true}

// budgetShares are the requests' shares of each of Linode's rate limits over the duration, as rows
// of the scenario named after what made them.
func budgetShares(scenario, what string, requests []emulator.RequestRecord, over time.Duration, target string) []Row {
	limits := emulator.DefaultRateLimits()
	byBudget := map[string]int{}
	for _, r := range requests {
		byBudget[rateLimitBudget(r.Route)]++
	}
	var rows []Row
	for _, budget := range []struct {
		name   string
		limit  int
		window time.Duration
	}{
		{budgetPaginated, limits.ListsPerMinute, time.Minute},
		{budgetOther, limits.OtherPerMinute, time.Minute},
		{budgetCreate, limits.LinodeCreates, limits.LinodeCreateWindow},
	} {
		perWindow := float64(byBudget[budget.name]) / over.Seconds() * budget.window.Seconds()
		window := fmt.Sprintf("per %g s", budget.window.Seconds())
		rows = append(rows, Row{
			Scenario: scenario,
			Metric:   fmt.Sprintf("%s: share of the %s limit (%d %s)", what, budget.name, budget.limit, window),
			Value:    100 * perWindow / float64(budget.limit),
			Unit:     "%",
			Target:   target,
			Note:     fmt.Sprintf("%.1f calls %s", perWindow, window),
		})
	}
	return rows
}

// rateLimitBudget names the rate limit a route counts against, as test/emulator/ratelimit.go
// assigns them: Linode creates have their own budget, collection GETs (every GET whose path does
// not end in an object's id, except one region's availability, an object) share one, and
// everything else shares another.
func rateLimitBudget(route string) string {
	method, path, _ := strings.Cut(route, " ")
	last := path[strings.LastIndex(path, "/")+1:]
	switch {
	case route == "POST /linode/instances":
		return budgetCreate
	case method == http.MethodGet && !strings.HasPrefix(last, "{") && route != "GET /regions/{regionId}/availability":
		return budgetPaginated
	default:
		return budgetOther
	}
}

// routeSummary lists the requests per route, most frequent first, divided by per (e.g. per node).
func routeSummary(requests []emulator.RequestRecord, per int) string {
	counts := map[string]int{}
	for _, r := range requests {
		counts[r.Route]++
	}
	routes := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return counts[b] - counts[a] })
	parts := make([]string, 0, len(routes))
	for _, route := range routes {
		parts = append(parts, fmt.Sprintf("%s %.2f", route, float64(counts[route])/float64(per)))
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

func countStatus(requests []emulator.RequestRecord, status int) int {
	n := 0
	for _, r := range requests {
		if r.Status == status {
			n++
		}
	}
	return n
}
