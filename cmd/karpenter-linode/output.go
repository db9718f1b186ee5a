package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

// writeTable writes the report for a reader: where the prices come from, the fleet by NodePool,
// what it is measured against, and the pods that would not run.
func writeTable(w io.Writer, r *planner.Report) {
	age := "undated"
	if r.Catalogue.AgeDays >= 0 {
		age = fmt.Sprintf("as of %s, %d days old", r.Catalogue.AsOf, r.Catalogue.AgeDays)
	}
	fmt.Fprintf(w, "Catalogue: %s (%s); region %s, %s mode.\n", r.Catalogue.Source, age, r.Region, modeName(r.Mode))
	for _, note := range r.Notes {
		fmt.Fprintf(w, "Note: %s.\n", note)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "Warning: %s.\n", warning)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "Skipped (not workloads, NodePools or LinodeNodeClasses): %s.\n", strings.Join(r.Skipped, ", "))
	}
	fmt.Fprintln(w)

	if len(r.NodePools) == 0 {
		fmt.Fprintln(w, "No node would launch.")
	}
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(r.NodePools) > 0 {
		fmt.Fprintln(table, "NODEPOOL\tPLAN\tNODES\tPODS PER NODE\t$/HOUR\t$/MONTH")
	}
	nodes := 0
	for _, pool := range r.NodePools {
		for _, plan := range pool.Plans {
			fmt.Fprintf(table, "%s\t%s\t%d\t%s\t%.3f\t%.2f\n", pool.NodePool, plan.Plan, plan.Nodes, podsPerNode(plan.PodsPerNode), plan.Hourly, plan.Monthly)
			nodes += plan.Nodes
		}
	}
	if len(r.NodePools) > 0 {
		fmt.Fprintf(table, "fleet\t\t%d\t%d pod(s)\t%.3f\t%.2f\n", nodes, r.Pods, r.Fleet.Hourly, r.Fleet.Monthly)
		_ = table.Flush()
		fmt.Fprintln(w)
	}

	if r.LowerBound > 0 {
		fmt.Fprintf(w, "Lower bound (the cheapest whole nodes of the plans each NodePool allows could cost for its pods): $%.3f/h; the fleet is %.2f× it.\n", r.LowerBound, r.Ratio)
	}
	if r.OnePlan != nil {
		var pools []string
		for _, pool := range r.NodePools {
			pools = append(pools, fmt.Sprintf("%s %d× %s", pool.NodePool, pool.OnePlan.Nodes, pool.OnePlan.Plan))
		}
		// LKE's own autoscaler grows a pool of one plan; a self-managed cluster's, a node group of one.
		who := "an LKE pool with its own autoscaler"
		if r.Mode != string(mode.LKE) {
			who = "a node group of one plan and an autoscaler"
		}
		fmt.Fprintf(w, "Cheapest fleet of one plan per NodePool (what %s needs): %s, $%.3f/h ($%.2f/month).\n",
			who, strings.Join(pools, "; "), r.OnePlan.Hourly, r.OnePlan.Monthly)
	} else if len(r.NodePools) > 0 {
		fmt.Fprintln(w, "Cheapest fleet of one plan: none, no single plan holds every pod of some NodePool.")
	}
	if r.Current != nil {
		fmt.Fprintf(w, "The cluster's %d nodes now: %s, $%.3f/h ($%.2f/month)", r.Current.Nodes, formatCounts(r.Current.Plans), r.Current.Hourly, r.Current.Monthly)
		if len(r.Current.Unpriced) > 0 {
			fmt.Fprintf(w, "; not priced (no plan of the catalogue): %s", strings.Join(r.Current.Unpriced, ", "))
		}
		fmt.Fprintln(w, ".")
	}
	if len(r.Unplaceable) > 0 {
		fmt.Fprintf(w, "\nPods that would not run (%d):\n", len(r.Unplaceable))
		for _, u := range r.Unplaceable {
			fmt.Fprintf(w, "  %s: %s: %s\n", u.Pod, u.Reason, u.Detail)
		}
	}
}

// podsPerNode is e.g. "4, 4, 3", or "4 each" when every node runs as many.
func podsPerNode(counts []int) string {
	if len(counts) > 1 && slices.Min(counts) == slices.Max(counts) {
		return fmt.Sprintf("%d each", counts[0])
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

func formatCounts(plans map[string]int) string {
	if len(plans) == 0 {
		return "no priced plan"
	}
	parts := make([]string, 0, len(plans))
	for _, plan := range slices.Sorted(maps.Keys(plans)) {
		parts = append(parts, fmt.Sprintf("%d× %s", plans[plan], plan))
	}
	return strings.Join(parts, ", ")
}

// modeName is how the README names the mode.
func modeName(m string) string {
	if m == string(mode.LKE) {
		return "LKE"
	}
	return m
}
