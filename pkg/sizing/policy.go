package sizing

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Placements is what Karpenter core's cluster state knows of its own scheduling decisions
// (*state.Cluster implements it): which pods it placed on which NodeClaim, which NodeClaims
// exist, when it last tried and managed to place a pod, and the nodes it schedules onto.
type Placements interface {
	PodNodeClaimMapping(podKey types.NamespacedName) string
	NodeClaimExists(nodeClaimName string) bool
	PodSchedulingDecisionTime(podKey types.NamespacedName) time.Time
	PodSchedulingSuccessTime(podKey types.NamespacedName) time.Time
	Nodes() iter.Seq[*state.StateNode]
}

// largeFor is how long a NodePool that counted as large on its own keeps counting as large: longer
// than a burst of thousands of pods takes to reach Karpenter, so that the burst's last rounds get
// the plans its first rounds got, whatever they add.
const largeFor = 10 * time.Minute

// Policy narrows the plans Karpenter may launch for a NodePool to those that suit its pending
// pods. The package documentation says why and how.
type Policy struct {
	kubeClient client.Client
	recorder   events.Recorder
	tradeoff   Tradeoff
	clock      clock.Clock
	// timeBudget is how long a decision may simulate before the NodePool is offered every plan;
	// 0 for no limit.
	timeBudget time.Duration
	placements atomic.Pointer[placementsHolder]
	overlays   atomic.Pointer[overlaysHolder]
	// podIndex and nodeClaimIndex, once ReadFromInformers set them, hold the unbound pods and the
	// NodeClaims the policy reads.
	podIndex, nodeClaimIndex atomic.Pointer[informerStore]

	mu sync.Mutex
	// shapes caches what the policy reads of each unbound pod, by UID, and shapesByPod by the
	// informer's store's pod; shapesByKey are the pods' shapes, one for each key; listings counts
	// the listings of unbound pods, which mark the pods and shapes they held.
	shapes      map[types.UID]*cachedShape
	shapesByPod map[*corev1.Pod]*cachedShape
	shapesByKey map[string]*internedShape
	listings    uint64
	// decisions are each NodePool's last answer, by NodePool name.
	decisions map[string]*memo
	// sized are each NodePool's last decision for its own pods, by NodePool name: the round's
	// other NodePools read it (joint.go).
	sized map[string]*sizedPool
	// simulating are the decisions being simulated, by NodePool name.
	simulating map[string]*simulation
	// overran are the NodePools whose last decision took longer than the time budget, by name.
	overran map[string]overrun
	// largeUntil is when each NodePool that counted as large stops counting as large, unless it
	// does on its own again, by NodePool name.
	largeUntil map[string]time.Time
	// templates are other NodePools' NodeClaim templates, by NodePool name.
	templates map[string]cachedTemplate
	// unknownAnnotations are the values of AnnotationSizingPolicy already logged as unknown, by
	// NodePool name.
	unknownAnnotations map[string]string
	// packs are the fleets packed for recent decisions, which a decision after one more pod
	// arrived mostly packs again.
	packs *packMemo
	// explanations are each NodePool's last *explanation, by NodePool name, read without mu: the
	// cloud provider reads them as it launches, while a round may be sizing.
	explanations sync.Map
}

type placementsHolder struct{ Placements }

// Overlays apply the NodeOverlays of a NodePool to its instance types, as core does to what the
// cloud provider returns before it schedules (core's nodeoverlay.InstanceTypeStore).
type Overlays interface {
	ApplyAll(nodePoolName string, instanceTypes []*cloudprovider.InstanceType) ([]*cloudprovider.InstanceType, error)
}

type overlaysHolder struct{ Overlays }

type memo struct {
	// inputs identifies what the answer was computed from.
	inputs uint64
	// instanceTypes is the answer; ceiling its price ceiling, 0 when every plan is offered, and
	// floor the price below which no plan is offered while a burst arrives, 0 for none.
	instanceTypes  []*cloudprovider.InstanceType
	ceiling, floor float64
	// passedOver are the plans at the ceiling's price that are not offered.
	passedOver []string
	// template is the NodePool's NodeClaim template, for its generation.
	template   *corescheduling.NodeClaimTemplate
	generation int64
	uid        types.UID
	// summary describes a new ceiling for the log, and logged says a log has it: a caller may ask
	// with a logger that keeps nothing at the info level, and a ceiling it saw first is logged by
	// the next caller whose logger keeps it.
	summary []any
	logged  bool
	// explanation says what the answer offers and why, for the NodeClaims it launches.
	explanation *explanation
}

// NewPolicy returns a policy that reads pods, DaemonSets and NodeClaims through kubeClient (the
// manager's cached client), tells the pods a ceiling holds back through recorder, and trades price
// for fewer nodes as tradeoff says; clk times how long a burst keeps a NodePool large. It offers
// every plan until Track gives it core's cluster state.
func NewPolicy(kubeClient client.Client, recorder events.Recorder, tradeoff Tradeoff, clk clock.Clock) *Policy {
	return &Policy{
		kubeClient:         kubeClient,
		recorder:           recorder,
		tradeoff:           tradeoff,
		clock:              clk,
		shapes:             map[types.UID]*cachedShape{},
		shapesByPod:        map[*corev1.Pod]*cachedShape{},
		shapesByKey:        map[string]*internedShape{},
		decisions:          map[string]*memo{},
		sized:              map[string]*sizedPool{},
		simulating:         map[string]*simulation{},
		overran:            map[string]overrun{},
		largeUntil:         map[string]time.Time{},
		templates:          map[string]cachedTemplate{},
		unknownAnnotations: map[string]string{},
		packs:              newPackMemo(),
	}
}

// LimitTime sets how long a decision may simulate before the NodePool is offered every plan, as
// core does on its own; 0, as until it is called, sets no limit. A pod of a shape of
// its own costs the simulation more than one more pod of a known shape, and anyone who may create
// pods may create thousands of shapes: the limit keeps core's provisioning round, which waits
// for the answer, from waiting on them.
func (p *Policy) LimitTime(budget time.Duration) { p.timeBudget = budget }

// ModelOverlays has the policy price and size plans as core will once it applied the NodePool's
// NodeOverlays (with the NodeOverlay feature gate on): an overlay that makes a big plan cheap, or
// gives a plan more room, changes the cheapest fleet, and a ceiling chosen from the list prices
// would hide that plan from core.
func (p *Policy) ModelOverlays(overlays Overlays) {
	p.overlays.Store(&overlaysHolder{overlays})
}

// AsCoreSees returns the instance types with the NodePool's NodeOverlays applied, when core
// applies them; otherwise, and while core has not evaluated the NodePool's overlays (it then
// schedules nothing for the NodePool), the instance types themselves.
func (p *Policy) AsCoreSees(ctx context.Context, nodePool string, instanceTypes []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	holder := p.overlays.Load()
	if holder == nil || !coreoptions.FromContext(ctx).FeatureGates.NodeOverlay {
		return instanceTypes
	}
	overlaid, err := holder.ApplyAll(nodePool, instanceTypes)
	if err != nil || len(overlaid) != len(instanceTypes) {
		return instanceTypes
	}
	return overlaid
}

// Track gives the policy core's cluster state. Core builds it from the cloud provider, which
// holds the policy, so it comes after construction.
func (p *Policy) Track(placements Placements) {
	p.placements.Store(&placementsHolder{placements})
}

// InstanceTypes returns the NodePool's instance types with every offering dearer than this
// round's price ceiling marked unavailable. It returns them unchanged with no pending pod for the
// NodePool, before Track, for a NodePool annotated AnnotationSizingPolicy=disabled, and to core's
// disruption controller. It never removes a plan, so core can still price and match every node it
// runs. The slice and the instance types must not be modified.
func (p *Policy) InstanceTypes(ctx context.Context, nodePool *karpv1.NodePool, instanceTypes []*cloudprovider.InstanceType) ([]*cloudprovider.InstanceType, error) {
	holder := p.placements.Load()
	// Core launches a static NodePool's nodes from its template, for no pending pod.
	if holder == nil || len(instanceTypes) == 0 || nodePool.Spec.Template.Spec.NodeClassRef == nil || nodePool.Spec.Replicas != nil || askedByDisruption(ctx) {
		return instanceTypes, nil
	}
	p.mu.Lock()
	locked := true
	defer func() {
		if locked {
			p.mu.Unlock()
		}
	}()
	previous := p.decisions[nodePool.Name]
	if !p.sizes(ctx, nodePool) {
		p.offerAll(ctx, nodePool.Name, previous, "the NodePool's "+v1.AnnotationSizingPolicy+" annotation disables sizing")
		p.tell(ctx, nodePool.Name, &explanation{every: true, why: "its " + v1.AnnotationSizingPolicy + " annotation is " + v1.SizingPolicyDisabled}, nil)
		return instanceTypes, nil
	}
	pending, err := p.pendingPods(ctx, holder.Placements)
	if err != nil {
		return nil, err
	}
	if len(pending.pods) == 0 {
		p.offerAll(ctx, nodePool.Name, previous, noPendingPod)
		p.tell(ctx, nodePool.Name, &explanation{every: true, why: noPendingPod}, nil)
		return instanceTypes, nil
	}
	template := p.template(nodePool, previous)
	daemons, daemonsKey, err := p.daemonPods(ctx)
	if err != nil {
		return nil, err
	}
	pools, self, poolsKey, err := p.rankedNodePools(ctx, nodePool, template)
	if err != nil {
		return nil, err
	}
	priced := p.AsCoreSees(ctx, nodePool.Name, instanceTypes)
	pools.instanceTypes, pools.daemons = priced, daemons
	groups, queue := groupPending(pools, self, pending.pods, pending.coming)
	if len(groups) == 0 {
		p.offerAll(ctx, nodePool.Name, previous, noPendingPod)
		p.tell(ctx, nodePool.Name, &explanation{every: true, why: noPendingPod}, nil)
		return instanceTypes, nil
	}
	existing, err := p.nodeClaims(ctx, nodePool.Name)
	if err != nil {
		return nil, err
	}
	starting := startingNodes(holder.Placements, nodePool.Name, pending.placed)
	wasLarge := p.wasLarge(nodePool.Name)
	own := inputsHash(nodePool, priced, daemonsKey+"|"+poolsKey, existing, wasLarge, starting, queue)
	others, err := p.otherRoundPools(ctx, pools, self, pending, holder.Placements, instanceTypes, daemonsKey+"|"+poolsKey)
	if err != nil {
		return nil, err
	}
	inputs := roundInputs(own, others)
	if previous != nil && previous.inputs == inputs {
		logDecision(ctx, nodePool.Name, previous)
		p.tell(ctx, nodePool.Name, previous.explanation, groups)
		return previous.instanceTypes, nil
	}
	if held := p.heldOff(nodePool.Name, len(groups)); held != nil {
		next := &memo{inputs: inputs, generation: nodePool.Generation, uid: nodePool.UID, instanceTypes: instanceTypes, template: template, explanation: held}
		p.decisions[nodePool.Name] = next
		heldOffDecisions.Inc(map[string]string{nodePoolLabel.Name: nodePool.Name})
		p.tell(ctx, nodePool.Name, held, nil)
		return instanceTypes, nil
	}
	// Another caller simulating the same inputs answers this one too.
	if f, ok := p.simulating[nodePool.Name]; ok && f.inputs == inputs {
		p.mu.Unlock()
		locked = false
		select {
		case <-f.done:
			return f.instanceTypes, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &simulation{inputs: inputs, done: make(chan struct{})}
	p.simulating[nodePool.Name] = f
	asking := &roundPool{
		name: nodePool.Name, template: template, taints: hardTaints(template), instanceTypes: instanceTypes, priced: priced,
		groups: groups, queue: queue, starting: starting, existing: existing, wasLarge: wasLarge, inputs: own, packs: p.packs,
	}
	if cached, ok := p.sized[nodePool.Name]; ok && cached.inputs == own {
		asking.sized = cached
	}
	// The simulation reads nothing of the policy's: callers for other NodePools, or with answers
	// in the memo, need not wait for it.
	budget := newTimeBudget(p.timeBudget)
	for _, r := range append(others, asking) {
		r.budget = budget
	}
	p.mu.Unlock()
	locked = false
	next, d, decision := simulate(p.tradeoff, asking, others, daemons)
	next.inputs, next.generation, next.uid = inputs, nodePool.Generation, nodePool.UID
	if budget.over() {
		// What the simulation found before it stopped is not a decision.
		next = &memo{inputs: inputs, generation: nodePool.Generation, uid: nodePool.UID, instanceTypes: instanceTypes, template: template,
			explanation: &explanation{every: true, why: "sizing for its pending pods took longer than the time budget of " + p.timeBudget.String()}}
	}
	f.instanceTypes = next.instanceTypes
	close(f.done)
	p.mu.Lock()
	locked = true
	if p.simulating[nodePool.Name] == f {
		delete(p.simulating, nodePool.Name)
	}
	if budget.over() {
		p.overBudget(ctx, nodePool, next, pending.pods, groups)
		return next.instanceTypes, nil
	}
	delete(p.overran, nodePool.Name)
	for _, r := range append(others, asking) {
		if r.sized != nil && !r.offersAll {
			p.sized[r.name] = r.sized
		}
	}
	if decision.largeOnItsOwn {
		p.largeUntil[nodePool.Name] = p.clock.Now().Add(largeFor)
	}
	previous = p.decisions[nodePool.Name]
	if len(d.shapes) > 0 {
		p.report(ctx, nodePool.Name, previous, next, d, decision)
		next.explanation = explain(next, d, decision)
	} else {
		p.offerAll(ctx, nodePool.Name, previous, noPendingPod)
		next.explanation = &explanation{every: true, why: "no plan holds any of its pending pods"}
	}
	p.decisions[nodePool.Name] = next
	p.tell(ctx, nodePool.Name, next.explanation, groups)
	return next.instanceTypes, nil
}

// simulation is a decision being simulated for a NodePool: done is closed once instanceTypes
// holds its answer.
type simulation struct {
	inputs        uint64
	done          chan struct{}
	instanceTypes []*cloudprovider.InstanceType
}

// simulate chooses the plans to offer for the asking NodePool's pending pods: the memo of a
// decision, without its inputs, generation and UID, and the demand and decision it was chosen
// from. With no shape to size for, it offers every plan. It simulates with the instance types as
// core prices them (priced: with the NodePool's overlays, offering for offering) and restricts
// those the cloud provider returns. The decision's fleet is the one expected once the round's
// other NodePools, each at its own ceiling, are simulated beside it (joint.go).
func simulate(tradeoff Tradeoff, asking *roundPool, others []*roundPool, daemons []*corev1.Pod) (*memo, demand, decision) {
	sized := asking.sizedAlone(tradeoff, daemons)
	d, decision := sized.demand, sized.decision
	next := &memo{instanceTypes: asking.instanceTypes, template: asking.template}
	if len(d.shapes) == 0 {
		return next, d, decision
	}
	round := []*roundPool{asking}
	for _, r := range others {
		if alone := r.sizedAlone(tradeoff, daemons).demand; len(alone.shapes) > 0 || len(alone.starting) > 0 {
			round = append(round, r)
		}
	}
	if len(round) > 1 && !asking.budget.over() {
		decision.joint = newJointRound(round, daemons)
		decision.fleet = decision.joint.fleet(decision.ceiling, decision.fleet)
		// The cheapest fleet found: the cheapest ceiling's, alone the cheapest, unless the round
		// makes the chosen one's cheaper.
		cheapest := decision.fleet
		if decision.cheapestCeiling != decision.ceiling {
			if f := decision.joint.fleet(decision.cheapestCeiling, decision.cheapest); f.price < cheapest.price {
				cheapest = f
			}
		}
		decision.cheapest = cheapest
	}
	price := d.plans[decision.ceiling.top].price
	next.floor = d.burstFloor(decision.burstCeiling, asking.template.Requirements)
	next.passedOver = decision.ceiling.passedOver(d.plans)
	if decision.ceiling.top < len(d.plans)-1 || next.floor > 0 || len(next.passedOver) > 0 {
		next.instanceTypes, next.ceiling = restrict(asking.instanceTypes, asking.priced, next.floor, price, next.passedOver), price
	}
	return next, d, decision
}

// decide chooses the NodePool's ceiling for its own pending pods, and describes its demand.
func decide(tradeoff Tradeoff, template *corescheduling.NodeClaimTemplate, priced []*cloudprovider.InstanceType, groups []*podGroup, queue []groupRun,
	daemons []*corev1.Pod, starting []startingNode, existing int, wasLarge bool, recent *packMemo, budget *timeBudget) (demand, decision) {
	d := nodePoolDemand(template, priced, groups, queue, daemons, starting)
	d.recent, d.budget = recent, budget
	if len(d.shapes) == 0 {
		return d, decision{}
	}
	decision := d.choose(tradeoff, existing, wasLarge)
	if template.Requirements.HasMinValues() {
		// minValues count every plan at the ceiling's price.
		decision.ceiling = decision.ceiling.whole(d.plans)
	}
	if raised := d.satisfyMinValues(decision.ceiling.top, template.Requirements); raised != decision.ceiling.top {
		decision.ceiling, decision.deferred = ceiling{top: raised}, deferredAt(d.plans, d.shapes, raised)
	}
	return d, decision
}

// sizes says whether the NodePool's AnnotationSizingPolicy leaves its plans to the policy; an
// unknown value does, and is logged once per NodePool and value.
func (p *Policy) sizes(ctx context.Context, nodePool *karpv1.NodePool) bool {
	value, ok := nodePool.Annotations[v1.AnnotationSizingPolicy]
	switch {
	case value == v1.SizingPolicyDisabled:
		return false
	case !ok || value == v1.SizingPolicyEnabled:
		delete(p.unknownAnnotations, nodePool.Name)
		return true
	}
	logger := log.FromContext(ctx).WithValues("NodePool", nodePool.Name)
	if logged, ok := p.unknownAnnotations[nodePool.Name]; (!ok || logged != value) && logger.Enabled() {
		logger.Error(nil, fmt.Sprintf("ignoring the NodePool's annotation %s=%q: use %s or %s; sizing the plans offered as if it were %s",
			v1.AnnotationSizingPolicy, value, v1.SizingPolicyEnabled, v1.SizingPolicyDisabled, v1.SizingPolicyEnabled))
		p.unknownAnnotations[nodePool.Name] = value
	}
	return true
}

// wasLarge says whether the NodePool counted as large on its own in the last largeFor.
func (p *Policy) wasLarge(nodePool string) bool {
	until, ok := p.largeUntil[nodePool]
	if ok && !p.clock.Now().Before(until) {
		delete(p.largeUntil, nodePool)
		return false
	}
	return ok
}
