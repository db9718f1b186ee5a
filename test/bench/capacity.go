package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
)

const capacityScenario = "Time to capacity"

// timeToCapacity deploys each count of one-CPU pods on an empty NodePool and waits until all
// run, and reports p50 and p95 over the pods of three intervals from the moment each pod was
// created: to the provider's first create after it, to the registration of the node it runs on,
// and to running.
func timeToCapacity(ctx context.Context, e *env, podCounts []int) ([]Row, error) {
	var rows []Row
	for _, n := range podCounts {
		if err := e.RemovePools(ctx); err != nil {
			return rows, err
		}
		pool := fmt.Sprintf("capacity-%d", n)
		if err := e.CreateNodePool(ctx, pool, 0); err != nil {
			return rows, err
		}
		e.Cluster.Emulator.ResetCounters()
		if _, err := e.Deploy(ctx, pool, n); err != nil {
			return rows, err
		}
		if err := e.WaitRunning(ctx, pool, n, 5*time.Minute); err != nil {
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
	for _, pod := range e.Watch.PodsOf(pool) {
		if pod.Running.IsZero() {
			continue
		}
		create, ok := firstAtOrAfter(creates, pod.Created)
		if !ok {
			return out, fmt.Errorf("pod of %s created at %s: no create call after it", pool, pod.Created.Format(time.StampMilli))
		}
		registered := e.Watch.NodeSeen(pod.Node)
		if registered.IsZero() {
			return out, fmt.Errorf("pod of %s runs on node %s, which was never seen", pool, pod.Node)
		}
		out.toCreate = append(out.toCreate, create.Sub(pod.Created))
		out.toRegistered = append(out.toRegistered, registered.Sub(pod.Created))
		out.toRunning = append(out.toRunning, pod.Running.Sub(pod.Created))
	}
	return out, nil
}

// createTimes are when the provider launched capacity for the pool, oldest first: its Linode
// create requests (the emulator's log was reset before the pool's pods were created), or, for
// core's kwok provider, which calls no API, the moments its NodeClaims were seen launched.
func (e *env) createTimes(pool string) []time.Time {
	var times []time.Time
	switch e.Provider {
	case harness.Kwok:
		for _, claim := range e.Watch.ClaimsOf(pool) {
			if !claim.Launched.IsZero() {
				times = append(times, claim.Launched)
			}
		}
	case harness.Linode, harness.LinodeInstance:
		for _, r := range e.ControllerRequests() {
			if harness.CreateRoutes[r.Route] && r.Status < 300 {
				times = append(times, r.Time)
			}
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}

func (c capacityIntervals) rows(pods int, e *env) []Row {
	note := fmt.Sprintf("%d pods; boot delay %v", len(c.toRunning), e.BootDelay)
	var createNote string
	switch e.Provider {
	case harness.Linode:
		createNote = note + "; first POST creating an LKE pool after the pod was created"
	case harness.LinodeInstance:
		createNote = note + "; first POST creating a Linode after the pod was created; nodes join by TLS bootstrap"
	case harness.Kwok:
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
				Scenario: e.Scenario(capacityScenario),
				Metric:   fmt.Sprintf("%d pods: %s, p%.0f", pods, interval.name, p),
				Value:    harness.Percentile(harness.Seconds(interval.values), p),
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
