package sizing

import (
	"context"
	"fmt"
	"hash"
	"hash/fnv"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

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

// overBudget offers the NodePool every plan for inputs that took longer to size than the time
// budget, and says so: in the log, a metric and an event on the NodePool. The answer is kept for
// the same inputs, so that core's next calls do not spend the budget again.
func (p *Policy) overBudget(ctx context.Context, nodePool *karpv1.NodePool, next *memo, pending []pendingPod, groups []*podGroup) {
	p.offerAll(ctx, nodePool.Name, p.decisions[nodePool.Name], next.explanation.why)
	log.FromContext(ctx).WithValues("NodePool", nodePool.Name).Info("offering every plan: "+next.explanation.why, "pods", len(pending), "shapes", len(groups))
	p.decisions[nodePool.Name] = next
	timeBudgetExceeded.Inc(map[string]string{nodePoolLabel.Name: nodePool.Name})
	if p.recorder != nil {
		p.recorder.Publish(timeBudgetEvent(nodePool, p.timeBudget, len(pending), len(groups)))
	}
	p.tell(ctx, nodePool.Name, next.explanation, nil)
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

// askedByDisruption says whether core's disruption controller asks. Its simulations reschedule the
// pods of the nodes it would remove or replace, which are not the pending pods the ceiling was
// chosen for, and it only ever replaces nodes with cheaper ones: offered every plan, consolidation
// can replace a node with any cheaper plan the NodePool allows, as core does on its own.
func askedByDisruption(ctx context.Context) bool {
	name := injection.GetControllerName(ctx)
	return name == "disruption" || strings.HasPrefix(name, "disruption.")
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

// template is the NodePool's NodeClaim template as core's scheduler builds it, reused while the
// NodePool's spec is unchanged: building it hashes the NodePool.
func (p *Policy) template(nodePool *karpv1.NodePool, previous *memo) *corescheduling.NodeClaimTemplate {
	if previous != nil && previous.uid == nodePool.UID && previous.generation == nodePool.Generation && nodePool.Generation != 0 {
		return previous.template
	}
	return corescheduling.NewNodeClaimTemplate(nodePool)
}

// rankedNodePools are the cluster's NodePools core provisions for, in the order its scheduler
// tries them (highest weight first), with the asking NodePool's index among them and a key that
// changes when any of them changes. Every NodePool is taken to offer the asking NodePool's
// catalogue: the provider lists the same plans for every NodeClass of a region.
func (p *Policy) rankedNodePools(ctx context.Context, nodePool *karpv1.NodePool, template *corescheduling.NodeClaimTemplate) (*rankedNodePools, int, string, error) {
	var list karpv1.NodePoolList
	if err := p.kubeClient.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, 0, "", fmt.Errorf("listing NodePools: %w", err)
	}
	nodePools := []*karpv1.NodePool{nodePool}
	for i := range list.Items {
		np := &list.Items[i]
		if np.Name != nodePool.Name && np.Spec.Replicas == nil && np.DeletionTimestamp.IsZero() && np.Spec.Template.Spec.NodeClassRef != nil {
			nodePools = append(nodePools, np)
		}
	}
	nodepoolutils.OrderByWeight(nodePools)
	ranked := &rankedNodePools{rooms: map[[2]int]corev1.ResourceList{}, placements: map[string]placement{}}
	keys := make([]string, 0, len(nodePools))
	self := 0
	for i, np := range nodePools {
		t := template
		if np.Name != nodePool.Name {
			t = p.otherTemplate(np)
		} else {
			self = i
		}
		ranked.pools = append(ranked.pools, rankedNodePool{name: np.Name, nodePool: np, template: t, taints: hardTaints(t)})
		keys = append(keys, fmt.Sprintf("%s/%s/%d", np.Name, np.UID, np.Generation))
	}
	return ranked, self, strings.Join(keys, ","), nil
}

// otherTemplate is another NodePool's NodeClaim template, reused while its spec is unchanged.
func (p *Policy) otherTemplate(nodePool *karpv1.NodePool) *corescheduling.NodeClaimTemplate {
	if cached, ok := p.templates[nodePool.Name]; ok && cached.uid == nodePool.UID && cached.generation == nodePool.Generation && nodePool.Generation != 0 {
		return cached.template
	}
	t := corescheduling.NewNodeClaimTemplate(nodePool)
	p.templates[nodePool.Name] = cachedTemplate{uid: nodePool.UID, generation: nodePool.Generation, template: t}
	return t
}

type cachedTemplate struct {
	uid        types.UID
	generation int64
	template   *corescheduling.NodeClaimTemplate
}

// noPendingPod is why the policy offers every plan when nothing waits for the NodePool.
const noPendingPod = "no pending pod left to size for"

// offerAll forgets the NodePool's ceiling, saying so, and why, if it had one.
func (p *Policy) offerAll(ctx context.Context, nodePool string, previous *memo, why string) {
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

// provisionerName is the controller name core's provisioner asks with.
const provisionerName = "provisioner"

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

// daemonPods are the pods the cluster's DaemonSets would run on a new node, and a key that
// changes when they change.
func (p *Policy) daemonPods(ctx context.Context) ([]*corev1.Pod, string, error) {
	var list appsv1.DaemonSetList
	if err := p.kubeClient.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, "", fmt.Errorf("listing DaemonSets: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	keys := make([]string, 0, len(list.Items))
	for i := range list.Items {
		ds := &list.Items[i]
		pods = append(pods, daemonset.PodForDaemonSet(ds))
		keys = append(keys, fmt.Sprintf("%s/%d", ds.UID, ds.Generation))
	}
	slices.Sort(keys)
	return pods, strings.Join(keys, ","), nil
}

// nodeClaims counts the NodePool's NodeClaims that are not being deleted: its nodes, launched or
// not.
func (p *Policy) nodeClaims(ctx context.Context, nodePool string) (int, error) {
	if index := p.nodeClaimIndex.Load(); index != nil && index.synced() {
		objects, err := index.ByIndex(NodePoolNodeClaimsIndex, nodePool)
		if err != nil {
			return 0, fmt.Errorf("reading the NodePool's NodeClaims: %w", err)
		}
		n := 0
		for _, o := range objects {
			if nodeClaim, ok := o.(*karpv1.NodeClaim); ok && nodeClaim.DeletionTimestamp.IsZero() {
				n++
			}
		}
		return n, nil
	}
	var list karpv1.NodeClaimList
	if err := p.kubeClient.List(ctx, &list, client.MatchingLabels{karpv1.NodePoolLabelKey: nodePool}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("listing the NodePool's NodeClaims: %w", err)
	}
	n := 0
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n, nil
}

// inputsHash identifies everything a NodePool's answer depends on: its spec, the instance types
// (their plans, capacity and offerings' prices and availability: the provider may rebuild some
// of them and keep others), the DaemonSets, the NodePool's node count, whether it still counts
// as large from an earlier burst, the room on its starting nodes and the pending pods by shape,
// in core's queue order, with how many of each group are still to come.
func inputsHash(nodePool *karpv1.NodePool, instanceTypes []*cloudprovider.InstanceType, daemonsKey string, existing int, wasLarge bool, starting []startingNode, queue []groupRun) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%s/%d/%t|", nodePool.UID, nodePool.Generation, daemonsKey, existing, wasLarge)
	hashInstanceTypes(h, instanceTypes)
	hashStartingNodes(h, starting)
	// The queue holds every group, in an order fixed by the pods: where groups ask for the same
	// CPU and memory, how core's queue interleaves them counts too. Pods still to come count
	// apart from those pending: they decide the floor a burst gets.
	for _, r := range queue {
		fmt.Fprintf(h, "|%s#%d#%d#%t#%t", r.of.shape.key, r.pods, r.of.coming, r.of.deferred, r.of.elsewhere)
	}
	return h.Sum64()
}

// hashInstanceTypes adds what the simulation reads of the instance types to h.
func hashInstanceTypes(h hash.Hash64, instanceTypes []*cloudprovider.InstanceType) {
	for _, it := range instanceTypes {
		fmt.Fprintf(h, "%s", it.Name)
		overhead := corev1.ResourceList{}
		if it.Overhead != nil {
			overhead = it.Overhead.Total()
		}
		for _, list := range []corev1.ResourceList{it.Capacity, overhead} {
			for _, name := range slices.Sorted(maps.Keys(list)) {
				quantity := list[name]
				fmt.Fprintf(h, ",%s=%d", name, quantity.MilliValue())
			}
			fmt.Fprint(h, ";")
		}
		for _, o := range it.Offerings {
			fmt.Fprintf(h, "%s/%s/%g/%t;", o.Zone(), o.CapacityType(), o.Price, o.Available)
		}
		fmt.Fprint(h, "|")
	}
}

// restrict returns the instance types with every available offering dearer than ceiling or
// cheaper than floor, and those of the plans passed over at the ceiling's price, marked
// unavailable. Instance types it changes are copies: the provider's are shared.
func restrict(instanceTypes, priced []*cloudprovider.InstanceType, floor, ceiling float64, passedOver []string) []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, len(instanceTypes))
	for i, it := range instanceTypes {
		skipped := slices.Contains(passedOver, it.Name)
		// Core prices an offering with the NodePool's overlays, which keep the offerings' order.
		outside := func(j int) bool {
			o := priced[i].Offerings[j]
			return o.Available && (skipped || o.Price > ceiling || o.Price < floor)
		}
		restricted := false
		for j := range it.Offerings {
			restricted = restricted || outside(j)
		}
		if !restricted {
			out[i] = it
			continue
		}
		offerings := make(cloudprovider.Offerings, len(it.Offerings))
		for j, o := range it.Offerings {
			offerings[j] = o
			if outside(j) {
				offerings[j] = o.DeepCopy()
				offerings[j].Available = false
			}
		}
		out[i] = &cloudprovider.InstanceType{
			Name:                   it.Name,
			Requirements:           it.Requirements,
			Offerings:              offerings,
			Capacity:               it.Capacity,
			Overhead:               it.Overhead,
			VolumeAttachmentLimits: it.VolumeAttachmentLimits,
			DynamicResources:       it.DynamicResources,
		}
	}
	return out
}
