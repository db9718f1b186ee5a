package sizing

import (
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

// Anyone who may create pods sets the pending pods' shapes, and so how much work a change in them
// costs the policy: a decision over pods of as many shapes must grow no faster than n log n in
// them. Its work is counted (timeBudget.work: each pod placed and each bin tried for it), not
// timed, so that a busy machine does not fail the test.
func TestDecisionWorkGrowsAsNLogN(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	template := nodeClaimTemplate("standard", "dedicated", "highmem")
	tradeoff := defaultTradeoff
	work := func(shapes int) int {
		groups, queue := pendingOn(template, instanceTypes, distinctPendingPods(shapes))
		budget := newTimeBudget(time.Hour)
		if _, decision := decide(tradeoff, template, instanceTypes, groups, queue, nil, nil, 0, false, nil, budget); decision.fleet.nodes == 0 {
			t.Fatalf("no fleet for %d shapes: %+v", shapes, decision)
		}
		return budget.work
	}
	// Before the bin index looked for each offered plan's room apart (packer.addToOpenBin), a pod
	// among 1,000 shapes tried 13 bins on average and one among 6,000 shapes 31.
	const n = 1000
	small, large := work(n), work(4*n)
	if bound := 4 * math.Log(4*n) / math.Log(n); float64(large) > bound*float64(small) {
		t.Errorf("%d shapes took %d units of work, %.1f times the %d of %d shapes; n log n allows %.1f times", 4*n, large, float64(large)/float64(small), small, n, bound)
	}
}

// The round over several NodePools (joint.go) places each pod on the first NodeClaim of any of
// them that takes it: its work too must grow no faster than n log n in the shapes. Before it
// found that NodeClaim through the index, it tried every NodeClaim for every pod.
func TestJointRoundWorkGrowsAsNLogN(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	tradeoff := defaultTradeoff
	work := func(shapes int) int {
		pending := distinctPendingPods(2 * shapes)
		// The small NodePool's pods join the default's NodeClaims, which hold standard plans too.
		var pools []*roundPool
		for i, template := range []*corescheduling.NodeClaimTemplate{nodeClaimTemplate("standard", "dedicated", "highmem"), nodeClaimTemplate("standard")} {
			groups, queue := pendingOn(template, instanceTypes, pending[i*shapes:(i+1)*shapes])
			pool := &roundPool{name: fmt.Sprintf("pool-%d", i), template: template, taints: hardTaints(template), priced: instanceTypes, groups: groups, queue: queue}
			pool.sizedAlone(tradeoff, nil)
			pools = append(pools, pool)
		}
		budget := newTimeBudget(time.Hour)
		pools[0].budget = budget
		if f := newJointRound(pools, nil).round(pools[0].sized.decision.ceiling); f.nodes == 0 {
			t.Fatalf("no fleet for %d shapes in each NodePool", shapes)
		}
		return budget.work
	}
	const n = 1000
	small, large := work(n), work(4*n)
	if bound := 4 * math.Log(4*n) / math.Log(n); float64(large) > bound*float64(small) {
		t.Errorf("%d shapes took %d units of work, %.1f times the %d of %d shapes; n log n allows %.1f times", 4*n, large, float64(large)/float64(small), small, n, bound)
	}
}

// pendingOn are the pending pods grouped by shape and laid out in core's queue order for a
// NodePool of the template, alone in the cluster.
func pendingOn(template *corescheduling.NodeClaimTemplate, instanceTypes []*cloudprovider.InstanceType, pending []pendingPod) ([]*podGroup, []groupRun) {
	pools := &rankedNodePools{
		pools:         []rankedNodePool{{name: "default", template: template, taints: hardTaints(template)}},
		instanceTypes: instanceTypes, rooms: map[[2]int]corev1.ResourceList{}, placements: map[string]placement{},
	}
	return groupPending(pools, 0, pending, nil)
}
