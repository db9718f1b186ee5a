// Package planner answers, before anything is deployed, what Karpenter would launch on Linode for
// a set of pods: it runs Karpenter core's scheduler in process over the provider's instance types,
// with the sizing policy, in provisioning rounds as the controller does, and measures the fleet
// against the cheapest fleet of whole nodes (LowerBound) and the cheapest fleet of one plan
// (CheapestPlanFleet). `karpenter-linode plan` and the benchmarks (test/bench) both use it.
package planner
