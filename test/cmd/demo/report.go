package main

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

// count is how many pods satisfy pred.
func (w *watcher) count(pred func(*podRecord) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.pods {
		if pred(p) {
			n++
		}
	}
	return n
}

// printTimeline shows, for each pod of the scale-up, when it was seen pending, when the NodeClaim
// of the node it runs on was created and launched, when that node registered and when the pod
// ran, in seconds after the deployment was scaled.
func (d *demo) printTimeline() {
	w := d.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	since := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.1f", t.Sub(d.scaleUpStart).Seconds())
	}
	fmt.Printf("\n▶ Timeline of the scale-up: seconds after `kubectl scale`, as observed every %v\n", pollInterval)
	fmt.Printf("  %-28s %8s %14s %9s %11s %8s  %s\n", "POD", "PENDING", "CLAIM CREATED", "LAUNCHED", "REGISTERED", "RUNNING", "NODE (PLAN)")
	var slowest time.Duration
	for _, name := range sortedKeys(w.pods) {
		pod := w.pods[name]
		if pod.pending.IsZero() || pod.pending.After(d.scaleUpEnd) {
			continue
		}
		claim := &claimRecord{}
		for _, c := range w.claims {
			if c.nodeName != "" && c.nodeName == pod.nodeName {
				claim = c
			}
		}
		fmt.Printf("  %-28s %8s %14s %9s %11s %8s  %s (%s)\n", name, since(pod.pending), since(claim.created), since(claim.launched),
			since(w.nodes[pod.nodeName]), since(pod.running), pod.nodeName, claim.plan)
		if !pod.running.IsZero() {
			slowest = max(slowest, pod.running.Sub(pod.pending))
		}
	}
	fmt.Printf("  Slowest pod, pending to running: %.1fs (Linode boot scaled to %.0f%%).\n", slowest.Seconds(), 100*d.timeScale)
}

// printCost adds up what the Linodes the demo launched cost at their hourly prices, for the time
// each existed.
func (d *demo) printCost(ctx context.Context) {
	type planUse struct {
		count int
		up    time.Duration
		cost  float64
	}
	uses := map[string]*planUse{}
	var total float64
	var totalUp time.Duration
	d.watch.mu.Lock()
	linodes := d.watch.linodes
	d.watch.mu.Unlock()
	for _, linode := range linodes {
		end := linode.gone
		if end.IsZero() {
			end = time.Now()
		}
		price, err := d.price(ctx, linode.plan, linode.region)
		if err != nil {
			continue
		}
		use := uses[linode.plan]
		if use == nil {
			use = &planUse{}
			uses[linode.plan] = use
		}
		up := end.Sub(linode.created)
		use.count++
		use.up += up
		use.cost += float64(price.Hourly) * up.Hours()
		total += float64(price.Hourly) * up.Hours()
		totalUp += up
	}
	fmt.Println("\n▶ The fleet's cost, at hourly prices for the time each Linode existed")
	plans := make([]string, 0, len(uses))
	for plan := range uses {
		plans = append(plans, plan)
	}
	sort.Strings(plans)
	for _, plan := range plans {
		use := uses[plan]
		fmt.Printf("  %-16s %-11s %6.1f node-minutes  $%.5f\n", plan, plural(use.count, "Linode"), use.up.Minutes(), use.cost)
	}
	fmt.Printf("  %-16s %-11s %6.1f node-minutes  $%.5f\n", "total", plural(len(linodes), "Linode"), totalUp.Minutes(), total)
	fmt.Printf("  At its peak the fleet cost $%.3f an hour ($%.2f a month). Linode bills by the hour,\n"+
		"  capped at the monthly price; boot delays here are %g× Linode's.\n", d.peakHourly, d.peakMonthly, d.timeScale)
}

// printPlan puts karpenter-linode plan's answer, from before the deployment, beside the fleet
// Karpenter launched.
func (d *demo) printPlan() {
	fmt.Println("\n▶ karpenter-linode plan's answer beside what Karpenter launched")
	fmt.Printf("  planned before the deployment: %-40s $%.3f/h\n", planner.FormatPlans(d.planned), d.plannedHourly)
	fmt.Printf("  launched:                      %-40s $%.3f/h\n", planner.FormatPlans(d.launched), d.peakHourly)
	if maps.Equal(d.planned, d.launched) {
		fmt.Println("  ✓ the same fleet, plan for plan")
	} else {
		fmt.Println("  ✗ the fleets differ")
	}
}
