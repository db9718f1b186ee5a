package sizing

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
)

// overBudget offers the NodePool every plan for inputs that took longer to size than the time
// budget, and says so: in the log, a metric and an event on the NodePool. The answer is kept for
// the same inputs, so that core's next calls do not spend the budget again.
func (p *Policy) overBudget(ctx context.Context, nodePool *karpv1.NodePool, next *memo, pending []pendingPod, groups []*podGroup) {
	last := p.overran[nodePool.Name]
	p.offerAll(ctx, nodePool.Name, p.decisions[nodePool.Name], next.explanation.why)
	log.FromContext(ctx).WithValues("NodePool", nodePool.Name).Info("offering every plan: "+next.explanation.why, "pods", len(pending), "shapes", len(groups))
	p.decisions[nodePool.Name] = next
	overrun := p.overBudgetAgain(nodePool.Name, last, len(groups))
	timeBudgetExceeded.Inc(map[string]string{nodePoolLabel.Name: nodePool.Name})
	if p.recorder != nil {
		p.recorder.Publish(timeBudgetEvent(nodePool, p.timeBudget, len(pending), len(groups), overrun.hold()))
	}
	p.tell(ctx, nodePool.Name, next.explanation, nil)
}

// noPendingPod is why the policy offers every plan when nothing waits for the NodePool.
const noPendingPod = "no pending pod left to size for"

// offerAll forgets the NodePool's ceiling, saying so, and why, if it had one, and its overruns of
// the time budget.
func (p *Policy) offerAll(ctx context.Context, nodePool string, previous *memo, why string) {
	delete(p.overran, nodePool)
	if previous == nil {
		return
	}
	if previous.ceiling > 0 {
		log.FromContext(ctx).WithValues("NodePool", nodePool).Info("offering every plan again: " + why)
	}
	labels := map[string]string{nodePoolLabel.Name: nodePool}
	priceCeiling.Delete(labels)
	deferredPods.Delete(labels)
	expectedFleetPrice.Delete(labels)
	cheapestFleetPrice.Delete(labels)
	delete(p.decisions, nodePool)
	delete(p.sized, nodePool)
}

func (p *Policy) report(ctx context.Context, nodePool string, previous, next *memo, d demand, decision decision) {
	labels := map[string]string{nodePoolLabel.Name: nodePool}
	if next.ceiling > 0 {
		priceCeiling.Set(next.ceiling, labels)
	} else {
		priceCeiling.Delete(labels)
	}
	deferredPods.Set(float64(decision.deferred), labels)
	expectedFleetPrice.Set(decision.fleet.price, labels)
	cheapestFleetPrice.Set(decision.cheapest.price, labels)
	if previous != nil && previous.logged && previous.ceiling == next.ceiling && previous.floor == next.floor && slices.Equal(previous.passedOver, next.passedOver) {
		next.logged = true
		return
	}
	ceiling := "none"
	if next.ceiling > 0 {
		ceiling = fmt.Sprintf("%s ($%.3f/h)", d.plans[decision.ceiling.top].name, next.ceiling)
		if len(next.passedOver) > 0 {
			ceiling += ", not " + strings.Join(next.passedOver, ", ")
		}
	}
	next.summary = []any{"pods", d.pods, "comingPods", d.coming, "shapes", len(d.shapes), "ceiling", ceiling, "floor", fmt.Sprintf("$%.3f/h", next.floor), "deferredPods", decision.deferred,
		"expectedFleet", fmt.Sprintf("$%.3f/h on %d nodes", decision.fleet.price, decision.fleet.nodes),
		"cheapestFleet", fmt.Sprintf("$%.3f/h on %d nodes", decision.cheapest.price, decision.cheapest.nodes)}
	logDecision(ctx, nodePool, next)
}

// explain says what the decision offers and why.
func explain(next *memo, d demand, decision decision) *explanation {
	top := d.plans[decision.ceiling.top]
	e := &explanation{
		pods: d.pods, coming: d.coming, ceiling: planPrice{name: top.name, price: top.price}, passedOver: next.passedOver, floor: next.floor,
		expected: decision.fleet, cheapest: decision.cheapest, deferred: decision.deferred, held: map[string]planPrice{},
	}
	e.cheaper, e.dearer = decision.alternatives(decision.ceiling)
	if decision.solver.budget.over() {
		// Packs past the budget are empty: the alternatives are unknown.
		e.cheaper, e.dearer = nil, nil
	}
	for _, sh := range d.shapes {
		if cheapest := d.plans[sh.cheapest]; cheapest.price > top.price {
			e.held[sh.key] = planPrice{name: cheapest.name, price: cheapest.price}
		}
	}
	return e
}

// tell keeps what a provisioning round was offered for the NodeClaims it launches, and tells
// each of the round's pods that no plan up to the ceiling holds that it waits for a later round.
// Other callers' answers are not what core launches from.
func (p *Policy) tell(ctx context.Context, nodePool string, e *explanation, groups []*podGroup) {
	if injection.GetControllerName(ctx) != provisionerName {
		return
	}
	p.explanations.Store(nodePool, e)
	if p.recorder == nil {
		return
	}
	for _, g := range groups {
		holding, ok := e.held[g.shape.key]
		if !ok {
			continue
		}
		for _, pod := range g.members {
			p.recorder.Publish(deferredEvent(pod, nodePool, e.ceiling, holding))
		}
	}
}

// logDecision logs the decision's new ceiling once, through the caller's logger if it keeps logs.
func logDecision(ctx context.Context, nodePool string, decision *memo) {
	if decision.logged || decision.summary == nil {
		return
	}
	logger := log.FromContext(ctx).WithValues("NodePool", nodePool)
	if !logger.Enabled() {
		return
	}
	logger.Info("sized the plans offered for pending pods", decision.summary...)
	decision.logged = true
}
