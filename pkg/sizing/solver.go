package sizing

import (
	"cmp"
	"math"
	"slices"
)

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
	if s.budget.over() {
		return fleet{}
	}
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
// from the same inputs; a pack the budget stopped is not kept.
func (s *solver) packOrRecall(queue []run, c ceiling, starting []startingRoom) (fleet, int) {
	if s.recent == nil {
		return pack(s.plans, queue, c, starting, s.budget)
	}
	var id packID
	id, s.idBuf = packIDOf(s.idBuf, s.plans, queue, c, starting)
	if r, ok := s.recent.get(id); ok {
		return r.fleet, r.beyond
	}
	placed, beyond := pack(s.plans, queue, c, starting, s.budget)
	if s.budget.over() {
		// A pack the budget stopped is not the fleet of its inputs.
		return placed, beyond
	}
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
