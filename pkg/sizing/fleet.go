package sizing

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// The fleet simulation works on plain numbers: a plan is its price and the room its node has for
// pods, and a shape is a group of identical pods, in the dimensions the demand uses (the pods'
// requests, the DaemonSets' requests and the pod count), each in milli-units.

// plan is a Linode plan of the NodePool: its price and the room a node of it has for pods, after
// the kubelet's reservations and the DaemonSets that would run on it.
type plan struct {
	name  string
	price float64
	room  vector
}

// vector is an amount of each dimension of the demand.
type vector []int64

// shape is a group of identical pending pods: same requests, same node requirements and
// tolerations, same spread over hostnames.
type shape struct {
	key      string
	requests vector
	pods     int
	// plans are the plans (indices into the price-ordered plans) a pod of the shape may run on:
	// those its node requirements allow.
	plans bitset
	// perNode is the most pods of the spread group one node takes (a hostname topology spread's
	// maxSkew, or 1 for required anti-affinity to itself), 0 when unlimited; group names it.
	perNode int
	group   string
	// cheapest is the index of the cheapest plan that holds one pod, -1 when none does.
	cheapest int
	// deferred says that core already tried to place pods of the shape and could not.
	deferred bool
	// arriving says that some of the shape's pods are still to come: its workloads have yet to
	// create them, or kube-scheduler to try them.
	arriving bool
}

// runOf is a run of consecutive pods of one kind (a group, a shape) in core's scheduling queue.
type runOf[K comparable] struct {
	of   K
	pods int
}

// run is a run of pods of one shape.
type run = runOf[*shape]

// appendRun appends r to the queue, joining it to the last run when that is of the same kind.
func appendRun[K comparable](queue []runOf[K], r runOf[K]) []runOf[K] {
	if n := len(queue); n > 0 && queue[n-1].of == r.of {
		queue[n-1].pods += r.pods
		return queue
	}
	return append(queue, r)
}

// only keeps the queue's pods of the given shapes, in the same order.
func only(queue []run, shapes []*shape) []run {
	kept := make(map[*shape]bool, len(shapes))
	for _, s := range shapes {
		kept[s] = true
	}
	var out []run
	for _, r := range queue {
		if kept[r.of] {
			out = appendRun(out, r)
		}
	}
	return out
}

// startingRoom is what a starting node of the NodePool has left for pods, its plan and its name.
type startingRoom struct {
	plan int
	free vector
	name string
}

// fleet is what a simulated fleet costs per hour and how many nodes it has.
type fleet struct {
	price float64
	nodes int
}

func (f fleet) plus(g fleet) fleet { return fleet{price: f.price + g.price, nodes: f.nodes + g.nodes} }

func (f fleet) minus(g fleet) fleet { return fleet{price: f.price - g.price, nodes: f.nodes - g.nodes} }

// ceiling is which plans a round offers: every plan cheaper than the plan at top (an index into
// the price-ordered plans) and, of the plans at its price, all of them (top is then the last) or,
// when sole, top alone. Plans of one price can differ in shape (g6-dedicated-32 and
// g6-standard-20 both cost $0.864/h, for 32 vCPUs and 64 GB or 20 and 96 GB), and core, packing
// for both, fills NodeClaims to a shape that neither holds well: it keeps adding pods while either
// plan holds them all.
type ceiling struct {
	top  int
	sole bool
}

// offers says whether the round may launch plan i.
func (c ceiling) offers(plans []plan, i int) bool {
	switch price, top := plans[i].price, plans[c.top].price; {
	case price < top:
		return true
	case price > top:
		return false
	default:
		return !c.sole || i == c.top
	}
}

// whole is the ceiling that offers every plan at c's price.
func (c ceiling) whole(plans []plan) ceiling {
	top := c.top
	for top+1 < len(plans) && plans[top+1].price == plans[top].price {
		top++
	}
	return ceiling{top: top}
}

// passedOver are the plans at c's price that c does not offer.
func (c ceiling) passedOver(plans []plan) []string {
	var names []string
	for i := range plans {
		if plans[i].price == plans[c.top].price && !c.offers(plans, i) {
			names = append(names, plans[i].name)
		}
	}
	return names
}

// lower is the ceiling of a and b at the lower price; a at the same price.
func lower(plans []plan, a, b ceiling) ceiling {
	if plans[b.top].price < plans[a.top].price {
		return b
	}
	return a
}

// bin is a NodeClaim the simulation is filling, as core's scheduler fills an in-flight one.
type bin struct {
	used  vector
	plans bitset
	// plan is the cheapest plan that holds what the bin holds: the plan Create would launch.
	plan   int
	groups map[string]int
}

// slot is a bin's place in core's order of its in-flight NodeClaims (coreorder.go): the pods the
// bin holds and which bin it is (an index into the pack's bins). Core's order is kept by moving
// slots, small and without pointers, before every pod.
type slot struct {
	pods, bin int32
}

// reach is what the plans that may take a pod of a shape hold at most, dimension by dimension:
// a bin that does not fit in it with one more pod of the shape fits in none of them. A pack
// works it out once for each shape, where it would otherwise try every plan for every bin.
type reach struct {
	// offered is over the plans the ceiling offers, dearer over those above its price, from the
	// plan at firstDearer on.
	offered, dearer vector
	firstDearer     int
}

// reachOf is the reach of the plans that may take a pod of s under the ceiling.
func reachOf(plans []plan, s *shape, c ceiling) *reach {
	r := &reach{}
	r.fill(plans, s, c, make(vector, len(s.requests)), make(vector, len(s.requests)))
	return r
}

// fill makes r the reach of the plans that may take a pod of s under the ceiling, in the zeroed
// vectors offered and dearer.
func (r *reach) fill(plans []plan, s *shape, c ceiling, offered, dearer vector) {
	*r = reach{offered: offered, dearer: dearer, firstDearer: len(plans)}
	for i := range plans {
		into := r.offered
		if plans[i].price > plans[c.top].price {
			into, r.firstDearer = r.dearer, min(r.firstDearer, i)
		} else if !c.offers(plans, i) {
			continue
		}
		if s.plans.has(i) {
			for d, amount := range plans[i].room {
				into[d] = max(into[d], amount)
			}
		}
	}
}

// holdingPlan is the cheapest plan the ceiling offers that holds the bin with one more pod of s,
// or -1; r is the reach of s's plans. When the ceiling is what turns the pod away, it lowers
// beyond (an index into plans) to the cheapest dearer plan that would hold it, if that is
// cheaper: the plan a higher ceiling would take.
func (b *bin) holdingPlan(plans []plan, s *shape, r *reach, c ceiling, beyond *int) int {
	if s.perNode > 0 && b.groups[s.group] >= s.perNode {
		return -1
	}
	// Bins only grow, so no plan cheaper than the one holding the bin now can hold it later.
	i := b.plan
	if fits(r.offered, b.used, s.requests) {
		for ; i < len(plans) && plans[i].price <= plans[c.top].price; i++ {
			if !c.offers(plans, i) || !b.plans.has(i) || !s.plans.has(i) {
				continue
			}
			if fits(plans[i].room, b.used, s.requests) {
				return i
			}
		}
	}
	if !fits(r.dearer, b.used, s.requests) {
		return -1
	}
	for i = r.firstDearer; i < *beyond; i++ {
		if b.plans.has(i) && s.plans.has(i) && fits(plans[i].room, b.used, s.requests) {
			*beyond = i
			break
		}
	}
	return -1
}

func (b *bin) add(s *shape, holding int) {
	for d := range b.used {
		b.used[d] += s.requests[d]
	}
	b.plans.and(s.plans)
	b.plan = holding
	if s.perNode > 0 {
		if b.groups == nil {
			b.groups = map[string]int{}
		}
		b.groups[s.group]++
	}
}

func fits(room, used, more vector) bool {
	for d := range room {
		if used[d]+more[d] > room[d] {
			return false
		}
	}
	return true
}

// pack fills bins with the queue's pods as Karpenter core's scheduler fills new NodeClaims when
// only the plans up to ceiling are available: pods in the queue's order (most CPU, then most
// memory first), each onto the first starting node with room for it, else into the first
// in-flight NodeClaim, in core's order, that some available plan still holds with it, or into a
// new one. Each bin costs the cheapest plan that holds it, which is the plan Create launches for
// it; the starting nodes cost nothing more.
//
// It also returns the cheapest plan above the ceiling's price that would have held a pod the
// ceiling turned away (an index into plans, len(plans) for none): every ceiling below that plan's
// price that offers every plan at its own price packs the same fleet, pod for pod.
func pack(plans []plan, queue []run, c ceiling, starting []startingRoom) (fleet, int) {
	p := packers.Get().(*packer)
	defer packers.Put(p)
	return p.pack(plans, queue, c, starting)
}

// packers are packers between packs: a decision packs dozens of times, and each call of the
// policy decides again, so a pack mostly fills memory an earlier one grew rather than its own.
var packers = sync.Pool{New: func() any { return new(packer) }}

// packer packs, keeping the memory of its last pack for the next.
type packer struct {
	bins  []bin
	order []slot
	// closedTo is, by bin, the last shape the bin could not take a pod of (a number the pack
	// gives the shape, 0 for none).
	closedTo []int32
	// vectors and bitsets are the bins' room used and plans, and the reaches' vectors.
	vectors vector
	bitsets bitset
	// numbers are the numbers the pack gives its shapes, and reaches their reaches by number
	// less one.
	numbers map[*shape]int32
	reaches []reach
	// index finds the first bin in order that may hold a pod; bound is the room it looks for.
	index binIndex
	bound vector
}

func (p *packer) pack(plans []plan, queue []run, c ceiling, starting []startingRoom) (fleet, int) {
	dims := len(plans[0].room)
	beyond := len(plans)
	used := make([]vector, len(starting))
	for i := range used {
		used[i] = make(vector, dims)
	}
	// bins are in the order they opened, and order is core's order of them; changed is the slot
	// that took the last pod, -1 when the last pod opened a new bin.
	p.bins, p.order, p.closedTo, p.vectors, p.bitsets, p.reaches = p.bins[:0], p.order[:0], p.closedTo[:0], p.vectors[:0], p.bitsets[:0], p.reaches[:0]
	changed := -1
	p.index.reset(dims)
	if cap(p.bound) < dims {
		p.bound = make(vector, dims)
	}
	p.bound = p.bound[:dims]
	if p.numbers == nil {
		p.numbers = make(map[*shape]int32, len(queue))
	}
	clear(p.numbers)
	for _, r := range queue {
		s, left := r.of, r.pods
		number, ok := p.numbers[s]
		if !ok {
			p.reaches = append(p.reaches, reach{})
			p.reaches[len(p.reaches)-1].fill(plans, s, c, p.emptyVector(dims), p.emptyVector(dims))
			number = int32(len(p.reaches))
			p.numbers[s] = number
		}
		reach := &p.reaches[number-1]
		// Pods spread over hostnames skip the starting nodes: how many of their group core placed
		// there is not counted, and so neither is whether one more may go.
		for i := 0; i < len(starting) && left > 0 && s.perNode == 0; i++ {
			if !s.plans.has(starting[i].plan) {
				continue
			}
			for left > 0 && fits(starting[i].free, used[i], s.requests) {
				for d := range used[i] {
					used[i][d] += s.requests[d]
				}
				left--
			}
		}
		// The bins before closed are closed to s: a pod goes to the first bin that takes it, so
		// the next pod need not try those again while they keep their place. Once s opened a bin,
		// every other bin is closed to it, and alone is that bin (-1 before): the next pods try it
		// alone, where it is now (at), until it is closed to s too.
		closed, alone := 0, -1
		for ; left > 0; left-- {
			moved := changed
			kept, at, sorted := coreOrder(p.order, changed)
			p.index.note(p.order, moved, at, sorted)
			closed = min(closed, kept)
			if alone < 0 {
				if changed = p.addToOpenBin(plans, s, reach, number, c, closed, &beyond); changed >= 0 {
					closed = changed
					continue
				}
			} else {
				b := &p.bins[alone]
				if holding := b.holdingPlan(plans, s, reach, c, &beyond); holding >= 0 {
					b.add(s, holding)
					p.order[at].pods++
					changed = at
					continue
				}
				p.closedTo[alone], changed = number, -1
			}
			closed = len(p.order)
			b := bin{used: p.emptyVector(dims), plans: p.bitsetOf(s.plans)}
			holding := b.holdingPlan(plans, s, reach, c, &beyond)
			if holding < 0 {
				break
			}
			b.add(s, holding)
			p.bins = append(p.bins, b)
			p.closedTo = append(p.closedTo, 0)
			p.order = append(p.order, slot{pods: 1, bin: int32(len(p.bins) - 1)})
			alone = len(p.bins) - 1
		}
	}
	var f fleet
	for _, b := range p.bins {
		f.price += plans[b.plan].price
	}
	f.nodes = len(p.bins)
	return f, beyond
}

// addToOpenBin adds a pod of s, the shape numbered number whose plans reach r, to the first bin
// in core's order from the slot at from that some plan up to the ceiling holds with it, and
// returns its slot, or -1 when no bin does. A bin that cannot take one pod of a shape takes none
// of its later pods, so it is closed to the shape.
//
// Only bins with room for the pod in some plan it may run on are tried (binIndex): the plans the
// ceiling offers, and the dearer ones that could still lower beyond. A bin no such plan holds
// with the pod neither takes it nor lowers beyond, so skipping it packs the same fleet.
func (p *packer) addToOpenBin(plans []plan, s *shape, r *reach, number int32, c ceiling, from int, beyond *int) int {
	takes := func(which int32, at int) bool {
		if p.closedTo[which] == number {
			return false
		}
		b := &p.bins[which]
		if holding := b.holdingPlan(plans, s, r, c, beyond); holding >= 0 {
			b.add(s, holding)
			p.order[at].pods++
			return true
		}
		p.closedTo[which] = number
		return false
	}
	if len(p.order)-from <= shortScan {
		for at := from; at < len(p.order); at++ {
			if takes(p.order[at].bin, at) {
				return at
			}
		}
		return -1
	}
	copy(p.bound, r.offered)
	for i := r.firstDearer; i < *beyond; i++ {
		if s.plans.has(i) {
			for d, amount := range plans[i].room {
				p.bound[d] = max(p.bound[d], amount)
			}
		}
	}
	p.index.follow(p.order, p.bins)
	return p.index.first(from, p.bound, s.requests, takes)
}

// shortScan is how many bins addToOpenBin tries one by one rather than through the index: up to
// a few dozen, trying them costs less than bringing the index in line with the order.
const shortScan = 64

// emptyVector is a zeroed vector of dims from the packer's memory.
func (p *packer) emptyVector(dims int) vector {
	if cap(p.vectors)-len(p.vectors) < dims {
		p.vectors = make(vector, 0, max(2*cap(p.vectors), 64*dims))
	}
	n := len(p.vectors)
	p.vectors = p.vectors[:n+dims]
	v := p.vectors[n : n+dims : n+dims]
	clear(v)
	return v
}

// bitsetOf is a copy of b in the packer's memory.
func (p *packer) bitsetOf(b bitset) bitset {
	words := len(b)
	if cap(p.bitsets)-len(p.bitsets) < words {
		p.bitsets = make(bitset, 0, max(2*cap(p.bitsets), 64*words))
	}
	n := len(p.bitsets)
	p.bitsets = append(p.bitsets, b...)
	return p.bitsets[n : n+words : n+words]
}

// decision is the price ceiling for this round and the fleet the simulation expects from it
// and from later rounds for the pods it defers.
type decision struct {
	// ceiling is which plans Karpenter may launch this round.
	ceiling ceiling
	// fleet is the whole expected fleet; cheapest the cheapest fleet found, for comparison, that
	// of cheapestCeiling.
	fleet, cheapest fleet
	cheapestCeiling ceiling
	// deferred counts the pods left for a later round: no plan up to the ceiling holds them.
	deferred int
	// largeOnItsOwn says that the cheapest fleet would make the NodePool large.
	largeOnItsOwn bool
	// burstCeiling is the plan of a burst's floor (demand.burstFloor): the ceiling the pods still
	// arriving would get on their own, without a ceiling owed to pods core could not place
	// before, if that is lower. A ceiling raised for one big pod, or chosen for pods that have all
	// arrived, is not the size the burst's next pods are best launched at.
	burstCeiling ceiling
	// solver is what chose, for the alternatives (decision.alternatives).
	solver *solver
	// joint is the round simulated over every NodePool that has pods in it (joint.go), nil when
	// the NodePool is alone: it prices the alternatives.
	joint *jointRound
}

// option is one way to place a set of shapes over rounds: its fleet and its first round's ceiling.
type option struct {
	fleet   fleet
	ceiling ceiling
}

// Tradeoff says when a fleet with fewer nodes is worth paying more for. Every node costs
// something the price list does not show: launching many at once makes a burst of pods wait
// longer for its capacity (Linode creates 20 Linodes per 15 seconds), and core's scheduler, the
// control plane and the controller all work in proportion to the node count. A few nodes more
// cost nothing noticeable; hundreds do.
type Tradeoff struct {
	// LargeFleetNodes is the node count above which a NodePool counts as large: while the
	// cheapest fleet for the pending pods keeps the NodePool (its nodes and those the fleet adds)
	// at or under this many nodes, it is taken.
	LargeFleetNodes int
	// Tolerance is, when the NodePool would be large, how much dearer (a fraction of the
	// cheapest fleet's price) the fleet with the fewest nodes may be.
	Tolerance float64
}

// worthFewerNodes says whether a fleet with fewer nodes than the cheapest is worth what it costs
// more: at most what the nodes it saves cost, on average, in the cheapest fleet. Saving hundreds
// of small nodes with a few big ones for a few percent more is; saving eight nodes of 108 for a
// quarter more is not, however close to the threshold the cheapest fleet lands.
func worthFewerNodes(cheapest, fewer fleet) bool {
	saved := float64(cheapest.nodes - fewer.nodes)
	return (fewer.price-cheapest.price)*float64(cheapest.nodes) <= cheapest.price*saved+1e-9
}

// choose finds the price ceiling for this round. For each ceiling it simulates the fleet core would
// launch with plans up to that price available, for the pods some such plan holds; pods that need a
// dearer plan are left to later rounds, when the pods placed now no longer count, and are simulated
// the same way. Of all the ways to place the pods over rounds it takes the cheapest or, when that
// fleet would make the NodePool, which has existing nodes, large, the cheapest that keeps it at or
// under the threshold, else the one with the fewest nodes, among those the trade-off's tolerance
// allows and whose saved nodes are worth what they cost more (worthFewerNodes). Counting the
// NodePool's nodes matters because pods arrive in rounds: a burst of a thousand pods comes as
// rounds of a few dozen, each small on its own. For the same reason a
// NodePool that was large earlier in the burst (wasLarge) keeps the fewest nodes: a burst's last
// rounds, after its first NodeClaims took the fewest nodes, may add too few nodes to count as
// large, and would get the small plans the trade-off avoided. The demand's floor, an index into
// plans or -1, is the lowest ceiling allowed: the cheapest plan that holds a pod core could not
// place before, so that deferred pods make progress. This round's pods fill the room on the
// starting nodes first; later rounds' pods are sized for new nodes alone. The ceiling the pods
// still arriving would get on their own, without that floor, is the burst's (burstCeiling).
//
// The demand's plans must be ordered by price and its queue as core's; every shape must fit
// some plan.
func (d demand) choose(tradeoff Tradeoff, existing int, wasLarge bool) decision {
	s := newSolver(d.plans, d.shapes, d.queue, d.starting)
	s.recent, s.budget = d.recent, d.budget
	chosen := pick(s.options(-1, d.floor), tradeoff, existing, wasLarge)
	chosen.deferred = deferredAt(d.plans, d.shapes, chosen.ceiling.top)
	chosen.burstCeiling = chosen.ceiling
	chosen.solver = &s
	arriving := slices.DeleteFunc(slices.Clone(d.shapes), func(sh *shape) bool { return !sh.arriving })
	if len(arriving) > 0 && (len(arriving) < len(d.shapes) || d.floor >= 0) {
		// The solver's memo is by shapes left, so it serves only the same shapes.
		burst := s
		if len(arriving) < len(d.shapes) {
			burst = newSolver(d.plans, arriving, only(d.queue, arriving), d.starting)
			burst.recent, burst.budget = d.recent, d.budget
		}
		chosen.burstCeiling = lower(d.plans, chosen.ceiling, pick(burst.options(-1, -1), tradeoff, existing, wasLarge).ceiling)
	}
	return chosen
}

// alternatives are the ceilings at the next price levels down and up from c, each with the
// cheapest fleet it would start, that the policy did not choose; nil where there is no such level
// or, down, where it holds no pending pod.
func (d decision) alternatives(c ceiling) (cheaper, dearer *alternative) {
	plans := d.solver.plans
	price := plans[c.top].price
	first, last := c.top, c.top
	for first > 0 && plans[first-1].price == price {
		first--
	}
	for last+1 < len(plans) && plans[last+1].price == price {
		last++
	}
	if first > 0 {
		cheaper = d.solver.startingAt(first-1, d.joint)
	}
	if last+1 < len(plans) {
		top := last + 1
		for top+1 < len(plans) && plans[top+1].price == plans[top].price {
			top++
		}
		dearer = d.solver.startingAt(top, d.joint)
	}
	return cheaper, dearer
}

// startingAt is the cheapest way to place the shapes whose first ceiling offers every plan up to
// the price of last, the last plan at its price, or nil when that places no pod; its first round
// simulated with the round's other NodePools when joint is not nil.
func (s *solver) startingAt(last int, joint *jointRound) *alternative {
	price := s.plans[last].price
	var now []*shape
	for _, sh := range s.shapes {
		if s.plans[sh.cheapest].price <= price {
			now = append(now, sh)
		}
	}
	if len(now) == 0 {
		return nil
	}
	var placed fleet
	if joint != nil {
		placed = joint.round(ceiling{top: last})
	} else {
		placed = s.pack(packKey{remaining: len(s.shapes), now: len(now), starting: true}, now, ceiling{top: last})
	}
	return &alternative{ceiling: planPrice{name: s.plans[last].name, price: price}, fleet: placed.plus(s.options(last, -1)[0].fleet)}
}

// pick takes, of the options (ordered by price, each with fewer nodes than the one before), the
// cheapest, or for a large NodePool the one choose describes.
func pick(options []option, tradeoff Tradeoff, existing int, wasLarge bool) decision {
	cheapest := options[0].fleet
	chosen := options[0]
	largeOnItsOwn := existing+cheapest.nodes > tradeoff.LargeFleetNodes
	if largeOnItsOwn || wasLarge {
		// Those the tolerance allows come first.
		n := 1
		for n < len(options) && options[n].fleet.price <= cheapest.price*(1+tradeoff.Tolerance)+1e-9 {
			n++
		}
		within := slices.DeleteFunc(slices.Clone(options[:n]), func(o option) bool { return !worthFewerNodes(cheapest, o.fleet) })
		chosen = within[len(within)-1]
		if largeOnItsOwn {
			if i := slices.IndexFunc(within, func(o option) bool { return existing+o.fleet.nodes <= tradeoff.LargeFleetNodes }); i >= 0 {
				chosen = within[i]
			}
		}
	}
	return decision{ceiling: chosen.ceiling, fleet: chosen.fleet, cheapest: cheapest, cheapestCeiling: options[0].ceiling, largeOnItsOwn: largeOnItsOwn}
}

// deferredAt counts the pods no plan up to the ceiling holds.
func deferredAt(plans []plan, shapes []*shape, ceiling int) int {
	n := 0
	for _, sh := range shapes {
		if plans[sh.cheapest].price > plans[ceiling].price {
			n += sh.pods
		}
	}
	return n
}

type solver struct {
	plans  []plan
	shapes []*shape
	// queue is the shapes' pods in core's queue order.
	queue    []run
	starting []startingRoom
	// memo holds the options for the shapes left after a round with a given ceiling, by the
	// index of the first shape price level above that ceiling.
	memo map[int][]option
	// packed holds the fleets packed for a round's shapes, each with the ceiling prices that
	// pack it: ceilings at the prices of plans that hold nothing more pack the same fleet.
	packed map[packKey][]packedFleet
	// recent, when not nil, holds the fleets packed for recent decisions, which the solver
	// reuses and adds to; idBuf is the memory packIDOf works in.
	recent *packMemo
	idBuf  []byte
	// budget, when not nil, is the time the decision may take: once it is spent, packs return
	// an empty fleet at once, and the decision is not used.
	budget *timeBudget
}

func newSolver(plans []plan, shapes []*shape, queue []run, starting []startingRoom) solver {
	return solver{plans: plans, shapes: shapes, queue: queue, starting: starting, memo: map[int][]option{}, packed: map[packKey][]packedFleet{}}
}

// packKey identifies the shapes a round packs, of those whose cheapest plan costs more than
// an earlier round's ceiling: how many those are, and how many of them this round's ceiling
// holds. The round fills the starting nodes first when no round came before it.
type packKey struct {
	remaining, now int
	starting       bool
}

// packedFleet is a round's fleet, packed the same for every ceiling that offers every plan at
// its price, from price up to below.
type packedFleet struct {
	from, below float64
	fleet       fleet
}

// pack packs the pods of now, the shapes key names, as pack does with the ceiling, reusing a
// fleet already packed for them with a ceiling that packs the same.
func (s *solver) pack(key packKey, now []*shape, c ceiling) fleet {
	if s.budget.over() {
		return fleet{}
	}
	price := s.plans[c.top].price
	if !c.sole {
		for _, p := range s.packed[key] {
			if p.from <= price && price < p.below {
				return p.fleet
			}
		}
	}
	var starting []startingRoom
	if key.starting {
		starting = s.starting
	}
	placed, beyond := s.packOrRecall(only(s.queue, now), c, starting)
	if !c.sole {
		below := math.Inf(1)
		if beyond < len(s.plans) {
			below = s.plans[beyond].price
		}
		s.packed[key] = append(s.packed[key], packedFleet{from: price, below: below, fleet: placed})
	}
	return placed
}

// packOrRecall packs the queue as pack does, or recalls the fleet packed for a recent decision
// from the same inputs.
func (s *solver) packOrRecall(queue []run, c ceiling, starting []startingRoom) (fleet, int) {
	if s.recent == nil {
		return pack(s.plans, queue, c, starting)
	}
	var id packID
	id, s.idBuf = packIDOf(s.idBuf, s.plans, queue, c, starting)
	if r, ok := s.recent.get(id); ok {
		return r.fleet, r.beyond
	}
	placed, beyond := pack(s.plans, queue, c, starting)
	s.recent.put(id, packedResult{fleet: placed, beyond: beyond})
	return placed, beyond
}

// options are the Pareto-best ways (cheapest, fewest nodes) to place the shapes whose cheapest
// plan costs more than the plan at index after (-1: all shapes), with a first ceiling at or
// above floor.
func (s *solver) options(after, floor int) []option {
	above := -1.0
	if after >= 0 {
		above = s.plans[after].price
	}
	var remaining []*shape
	lowest := math.Inf(1)
	for _, sh := range s.shapes {
		if p := s.plans[sh.cheapest].price; p > above {
			remaining = append(remaining, sh)
			lowest = min(lowest, p)
		}
	}
	if len(remaining) == 0 {
		return []option{{ceiling: ceiling{top: -1}}}
	}
	key := s.levelKey(above)
	if floor < 0 {
		if memo, ok := s.memo[key]; ok {
			return memo
		}
	}
	var all []option
	for c := range s.plans {
		// A ceiling at c's price offers every plan at it, or one of them alone (ceiling.sole):
		// each level is tried once, at its last plan.
		if c+1 < len(s.plans) && s.plans[c+1].price == s.plans[c].price {
			continue
		}
		price := s.plans[c].price
		if price < lowest || (floor >= 0 && price < s.plans[floor].price) {
			continue
		}
		var now []*shape
		for _, sh := range remaining {
			if s.plans[sh.cheapest].price <= price {
				now = append(now, sh)
			}
		}
		later := s.options(c, -1)
		for _, ceiling := range s.ceilingsAt(c, now) {
			placed := s.pack(packKey{remaining: len(remaining), now: len(now), starting: after < 0}, now, ceiling)
			for _, l := range later {
				all = append(all, option{fleet: placed.plus(l.fleet), ceiling: ceiling})
			}
		}
	}
	front := paretoFront(s.plans, all)
	if floor < 0 {
		s.memo[key] = front
	}
	return front
}

// ceilingsAt are the ceilings at the price of the plan at last, the last plan at its price: the
// one offering every plan at that price and, where several plans share it, each of them alone
// that still lets every shape of now run on some offered plan.
func (s *solver) ceilingsAt(last int, now []*shape) []ceiling {
	ceilings := []ceiling{{top: last}}
	price := s.plans[last].price
	if last == 0 || s.plans[last-1].price != price {
		return ceilings
	}
	empty := make(vector, len(s.plans[last].room))
	for top := last; top >= 0 && s.plans[top].price == price; top-- {
		sole := ceiling{top: top, sole: true}
		runs := func(sh *shape) bool {
			for i := range s.plans {
				if sole.offers(s.plans, i) && sh.plans.has(i) && fits(s.plans[i].room, empty, sh.requests) {
					return true
				}
			}
			return false
		}
		if !slices.ContainsFunc(now, func(sh *shape) bool { return !runs(sh) }) {
			ceilings = append(ceilings, sole)
		}
	}
	return ceilings
}

// levelKey identifies the set of shapes whose cheapest plan costs more than above.
func (s *solver) levelKey(above float64) int {
	count := 0
	for _, sh := range s.shapes {
		if s.plans[sh.cheapest].price > above {
			count++
		}
	}
	return count
}

// paretoFront keeps the options no other beats on both price and nodes, cheapest first; at equal
// price and nodes the lower ceiling, and at one price the ceiling that offers every plan at it.
func paretoFront(plans []plan, options []option) []option {
	slices.SortStableFunc(options, func(a, b option) int {
		switch {
		case a.fleet.price < b.fleet.price-1e-9:
			return -1
		case a.fleet.price > b.fleet.price+1e-9:
			return 1
		case a.fleet.nodes != b.fleet.nodes:
			return a.fleet.nodes - b.fleet.nodes
		case a.ceiling.top < 0 || b.ceiling.top < 0:
			return a.ceiling.top - b.ceiling.top
		case plans[a.ceiling.top].price != plans[b.ceiling.top].price:
			return cmp.Compare(plans[a.ceiling.top].price, plans[b.ceiling.top].price)
		case a.ceiling.sole != b.ceiling.sole:
			if a.ceiling.sole {
				return 1
			}
			return -1
		default:
			return a.ceiling.top - b.ceiling.top
		}
	})
	var front []option
	for _, o := range options {
		if len(front) == 0 || o.fleet.nodes < front[len(front)-1].fleet.nodes {
			front = append(front, o)
		}
	}
	return front
}

// bitset is a set of plan indices.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// and keeps in b only the plans also in o.
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}
