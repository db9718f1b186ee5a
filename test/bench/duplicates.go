package bench

import (
	"context"
	"fmt"
	"time"
)

const duplicatesScenario = "Duplicates"

// duplicatesNodeCPUs sizes the scenario's nodes: three one-CPU pods fit a 4-vCPU node, so the
// pods need many NodeClaims, launched over several batches while the first nodes still boot.
const duplicatesNodeCPUs = 4

// duplicates deploys pods on an empty NodePool while nodes take the env's boot delay to register,
// with Karpenter's default batching (1 s idle, 10 s max), waits until every pod runs, and counts
// the NodeClaims the pods did not need: those beyond the nodes the pods ended up on, and those
// whose node never ran one of them. A NodeClaim launched again for pods whose capacity is still
// booting, or for a node that registered without core noticing, shows up in both.
func duplicates(ctx context.Context, e *env, pods int) ([]Row, error) {
	const pool = "duplicates"
	if err := e.CreateNodePool(ctx, pool, duplicatesNodeCPUs); err != nil {
		return nil, err
	}
	if _, err := e.Deploy(ctx, pool, pods); err != nil {
		return nil, err
	}
	if err := e.WaitRunning(ctx, pool, pods, e.BootDelay+5*time.Minute); err != nil {
		return nil, err
	}
	nodesWithPods := map[string]bool{}
	for _, pod := range e.Watch.PodsOf(pool) {
		if pod.Node != "" {
			nodesWithPods[pod.Node] = true
		}
	}
	claims := e.Watch.ClaimsOf(pool)
	idle := 0
	for _, claim := range claims {
		if !nodesWithPods[claim.Node] {
			idle++
		}
	}
	note := fmt.Sprintf("%d one-CPU pods on %d-vCPU nodes; boot delay %v; default batching; NodeClaims: %d, nodes with pods: %d",
		pods, duplicatesNodeCPUs, e.BootDelay, len(claims), len(nodesWithPods))
	return []Row{
		{Scenario: e.Scenario(duplicatesScenario), Metric: "NodeClaims beyond the nodes the pods run on", Value: float64(len(claims) - len(nodesWithPods)), Target: "0", Note: note},
		{Scenario: e.Scenario(duplicatesScenario), Metric: "NodeClaims whose node runs none of the pods", Value: float64(idle), Target: "0", Note: note},
	}, nil
}
