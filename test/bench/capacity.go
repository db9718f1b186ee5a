package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const capacityScenario = "Time to capacity"

// createRoutes are the requests that launch a Linode: an LKE pool (LKE mode) or a Linode
// (instance mode).
var createRoutes = map[string]bool{
	"POST /lke/clusters/{clusterId}/pools": true,
	"POST /linode/instances":               true,
}

// timeToCapacity deploys each count of one-CPU pods on an empty NodePool and waits until all
// run, and reports p50 and p95 over the pods of three intervals from the moment each pod was
// created: to the provider's first create after it, to the registration of the node it runs on,
// and to running.
func timeToCapacity(ctx context.Context, e *env, podCounts []int) ([]Row, error) {
	var rows []Row
	for _, n := range podCounts {
		if err := e.removePools(ctx); err != nil {
			return rows, err
		}
		pool := fmt.Sprintf("capacity-%d", n)
		if err := e.createNodePool(ctx, pool, 0); err != nil {
			return rows, err
		}
		e.cluster.Emulator.ResetCounters()
		if _, err := e.deploy(ctx, pool, n); err != nil {
			return rows, err
		}
		if err := e.waitRunning(ctx, pool, n, 5*time.Minute); err != nil {
			return rows, err
		}
		intervals, err := e.capacityIntervals(pool)
		if err != nil {
			return rows, err
		}
		rows = append(rows, intervals.rows(n, e)...)
	}
	return rows, nil
}

// capacityIntervals are, per pod, the time from its creation to each milestone.
type capacityIntervals struct {
	toCreate, toRegistered, toRunning []time.Duration
}

func (e *env) capacityIntervals(pool string) (capacityIntervals, error) {
	creates := e.createTimes(pool)
	var out capacityIntervals
	for _, pod := range e.watch.podsOf(pool) {
		if pod.running.IsZero() {
			continue
		}
		create, ok := firstAtOrAfter(creates, pod.created)
		if !ok {
			return out, fmt.Errorf("pod of %s created at %s: no create call after it", pool, pod.created.Format(time.StampMilli))
		}
		registered := e.watch.nodeSeen(pod.node)
		if registered.IsZero() {
			return out, fmt.Errorf("pod of %s runs on node %s, which was never seen", pool, pod.node)
		}
		out.toCreate = append(out.toCreate, create.Sub(pod.created))
		out.toRegistered = append(out.toRegistered, registered.Sub(pod.created))
		out.toRunning = append(out.toRunning, pod.running.Sub(pod.created))
	}
	return out, nil
}

// createTimes are when the provider launched capacity for the pool, oldest first: its Linode
// create requests (the emulator's log was reset before the pool's pods were created), or, for
// core's kwok provider, which calls no API, the moments its NodeClaims were seen launched.
func (e *env) createTimes(pool string) []time.Time {
	var times []time.Time
	switch e.provider {
	case Kwok:
		for _, claim := range e.watch.claimsOf(pool) {
			if !claim.launched.IsZero() {
				times = append(times, claim.launched)
			}
		}
	case Linode, LinodeInstance:
		for _, r := range e.controllerRequests() {
			if createRoutes[r.Route] && r.Status < 300 {
				times = append(times, r.Time)
			}
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}

func (c capacityIntervals) rows(pods int, e *env) []Row {
	note := fmt.Sprintf("%d pods; boot delay %v", len(c.toRunning), e.bootDelay)
	var createNote string
	switch e.provider {
	case Linode:
		createNote = note + "; first POST creating an LKE pool after the pod was created"
	case LinodeInstance:
		createNote = note + "; first POST creating a Linode after the pod was created; nodes join by TLS bootstrap"
	case Kwok:
		createNote = note + "; kwok calls no API: the first NodeClaim seen launched (its Create returned) after the pod was created"
	}
	var rows []Row
	for _, interval := range []struct {
		name   string
		values []time.Duration
		note   string
	}{
		{"pending -> first create call", c.toCreate, createNote},
		{"pending -> node registered", c.toRegistered, note},
		{"pending -> running", c.toRunning, note},
	} {
		for _, p := range []float64{50, 95} {
			rows = append(rows, Row{
				Scenario: e.scenario(capacityScenario),
				Metric:   fmt.Sprintf("%d pods: %s, p%.0f", pods, interval.name, p),
				Value:    percentile(seconds(interval.values), p),
				Unit:     "s",
				Note:     interval.note,
			})
		}
	}
	return rows
}

// firstAtOrAfter is the first of the sorted times not before t.
func firstAtOrAfter(sorted []time.Time, t time.Time) (time.Time, bool) {
	for _, s := range sorted {
		if !s.Before(t) {
			return s, true
		}
	}
	return time.Time{}, false
}

// isControllerRequest tells the controller's requests by the user agent pkg/linode gives it.
func isControllerRequest(r emulator.RequestRecord) bool {
	return strings.HasPrefix(r.UserAgent, linode.DefaultClientOptions().UserAgent)
}
