package sizing

import (
	"slices"
	"sync"
)

// bin is a NodeClaim the simulation is filling, as core's scheduler fills an in-flight one.
type bin struct {
	used  vector
	plans bitset
	// plan is the cheapest plan that holds what the bin holds: the plan Create would launch.
	plan   int
	groups map[string]int
}

// slot is a bin's place in core's order of its in-flight NodeClaims (coremodel.go): the pods the
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
	if i := b.offeredPlan(plans, s, r, c); i >= 0 {
		return i
	}
	b.lowerBeyond(plans, s, r, beyond)
	return -1
}

// offeredPlan is the cheapest plan the ceiling offers that holds the bin with one more pod of s,
// or -1.
func (b *bin) offeredPlan(plans []plan, s *shape, r *reach, c ceiling) int {
	if b.full(s) || !fits(r.offered, b.used, s.requests) {
		return -1
	}
	// Bins only grow, so no plan cheaper than the one holding the bin now can hold it later.
	for i := b.plan; i < len(plans) && plans[i].price <= plans[c.top].price; i++ {
		if !c.offers(plans, i) || !b.plans.has(i) || !s.plans.has(i) {
			continue
		}
		if fits(plans[i].room, b.used, s.requests) {
			return i
		}
	}
	return -1
}

// lowerBeyond lowers beyond to the cheapest plan above the ceiling's price that would hold the
// bin with one more pod of s, if that is cheaper.
func (b *bin) lowerBeyond(plans []plan, s *shape, r *reach, beyond *int) {
	if b.full(s) || !fits(r.dearer, b.used, s.requests) {
		return
	}
	for i := r.firstDearer; i < *beyond; i++ {
		if b.plans.has(i) && s.plans.has(i) && fits(plans[i].room, b.used, s.requests) {
			*beyond = i
			return
		}
	}
}

// full says that the bin holds as many pods of s's spread group as one node may.
func (b *bin) full(s *shape) bool { return s.perNode > 0 && b.groups[s.group] >= s.perNode }

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
// Past the budget it stops and returns an empty fleet, which the decision does not use.
//
// It also returns the cheapest plan above the ceiling's price that would have held a pod the
// ceiling turned away (an index into plans, len(plans) for none): every ceiling below that plan's
// price that offers every plan at its own price packs the same fleet, pod for pod.
func pack(plans []plan, queue []run, c ceiling, starting []startingRoom, budget *timeBudget) (fleet, int) {
	p := packers.Get().(*packer)
	defer packers.Put(p)
	return p.pack(plans, queue, c, starting, budget)
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
	// index finds the first bin in order that may hold a pod; rooms are the rooms it looks for
	// (roomsOffered), bound the room of the dearer plans that may lower beyond.
	index binIndex
	rooms []vector
	bound vector
	// tried counts the bins tried for the pod being placed.
	tried int
}

func (p *packer) pack(plans []plan, queue []run, c ceiling, starting []startingRoom, budget *timeBudget) (fleet, int) {
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
	p.rooms = roomsOffered(plans, c, p.rooms)
	p.tried = 0
	if p.numbers == nil {
		p.numbers = make(map[*shape]int32, len(queue))
	}
	clear(p.numbers)
	// numbered is the shape numbered last: a reach depends on the shape's plans alone, which
	// shapes of distinct requests mostly share.
	var numbered *shape
	for _, r := range queue {
		s, left := r.of, r.pods
		number, ok := p.numbers[s]
		if !ok {
			if numbered != nil && slices.Equal(numbered.plans, s.plans) {
				p.reaches = append(p.reaches, p.reaches[len(p.reaches)-1])
			} else {
				p.reaches = append(p.reaches, reach{})
				p.reaches[len(p.reaches)-1].fill(plans, s, c, p.emptyVector(dims), p.emptyVector(dims))
			}
			numbered = s
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
			if budget.spend(1 + p.tried) {
				return fleet{}, len(plans)
			}
			p.tried = 0
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
	if budget.spend(p.tried) {
		return fleet{}, len(plans)
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
// Past the first few bins, and a few dozen in all, it finds that bin through the index (binIndex),
// once for each of the largest rooms the ceiling offers (rooms): one bound over every plan, the
// largest of each dimension, lets through every bin full in one plan's dimension and empty in
// another's, and among 6,000 pods of distinct shapes each pod tried about thirty of those. The
// bins before it that a dearer plan would hold with the pod lower beyond, as they would had each
// been tried in turn: beyond is the least of their plans, whatever order they are tried in.
func (p *packer) addToOpenBin(plans []plan, s *shape, r *reach, number int32, c ceiling, from int, beyond *int) int {
	takes := func(which int32, at int) bool {
		if p.closedTo[which] == number {
			return false
		}
		p.tried++
		b := &p.bins[which]
		if holding := b.holdingPlan(plans, s, r, c, beyond); holding >= 0 {
			b.add(s, holding)
			p.order[at].pods++
			return true
		}
		p.closedTo[which] = number
		return false
	}
	// The first bins in order mostly take the pod: trying them needs no index, which follows the
	// order only when asked.
	for end := min(from+firstTried, len(p.order)); from < end; from++ {
		if takes(p.order[from].bin, from) {
			return from
		}
	}
	if len(p.order)-from <= shortScan {
		for at := from; at < len(p.order); at++ {
			if takes(p.order[at].bin, at) {
				return at
			}
		}
		return -1
	}
	p.index.follow(p.order, p.bins)
	found := -1
	var room vector
	accepts := func(which int32, _ int) bool {
		b := &p.bins[which]
		if p.closedTo[which] == number || !fits(room, b.used, s.requests) {
			return false
		}
		p.tried++
		if b.offeredPlan(plans, s, r, c) >= 0 {
			return true
		}
		p.closedTo[which] = number
		return false
	}
	for _, room = range p.rooms {
		to := len(p.order)
		if found >= 0 {
			to = found
		}
		if at := p.index.first(from, to, room, s.requests, accepts); at >= 0 {
			found = at
		}
	}
	dearer := false
	clear(p.bound)
	for i := r.firstDearer; i < *beyond; i++ {
		if s.plans.has(i) {
			dearer = true
			for d, amount := range plans[i].room {
				p.bound[d] = max(p.bound[d], amount)
			}
		}
	}
	if dearer {
		to := len(p.order)
		if found >= 0 {
			to = found
		}
		// Bins closed to s by its earlier pods lowered beyond then, when they held less.
		p.index.first(from, to, p.bound, s.requests, func(which int32, _ int) bool {
			p.tried++
			p.bins[which].lowerBeyond(plans, s, r, beyond)
			return false
		})
	}
	if found < 0 {
		return -1
	}
	b := &p.bins[p.order[found].bin]
	b.add(s, b.offeredPlan(plans, s, r, c))
	p.order[found].pods++
	return found
}

// roomsOffered are the rooms of the plans the ceiling offers that no other offered plan's room
// holds: a bin holds a pod in some offered plan only if it does in one of these rooms.
func roomsOffered(plans []plan, c ceiling, into []vector) []vector {
	into = into[:0]
	for i := range plans {
		if plans[i].price > plans[c.top].price || !c.offers(plans, i) {
			continue
		}
		held := false
		for j := range plans {
			if j != i && plans[j].price <= plans[c.top].price && c.offers(plans, j) && holds(plans[j].room, plans[i].room) &&
				(!holds(plans[i].room, plans[j].room) || j < i) {
				held = true
				break
			}
		}
		if !held {
			into = append(into, plans[i].room)
		}
	}
	return into
}

// holds says whether room a is at least room b in every dimension.
func holds(a, b vector) bool {
	for d := range a {
		if a[d] < b[d] {
			return false
		}
	}
	return true
}

// shortScan is how many bins addToOpenBin tries one by one rather than through the index: up to
// a few dozen, trying them costs less than bringing the index in line with the order.
const shortScan = 64

// firstTried is how many bins addToOpenBin tries one by one before it asks the index.
const firstTried = 8

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
