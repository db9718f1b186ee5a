package sizing

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Core's scheduler places a round's pods for every NodePool in one pass: it keeps one list of
// in-flight NodeClaims, whatever NodePool opened them, and a pod goes to the first of them that
// takes it before any NodePool opens a new one. A pod the policy counts for one NodePool then
// joins a NodeClaim another NodePool opened for bigger pods only that NodePool takes (the
// fallback's premium plan, a dedicated plan of the default beside a NodePool of small plans), and
// can make that NodeClaim launch a bigger plan. Each NodePool's ceiling is still chosen for its own
// pods, but the fleet it expects is that of one simulation of the round over every NodePool the
// policy sizes, each at its ceiling, as core's scheduler runs it.

// roundPool is one NodePool's part of a provisioning round: its pending pods as core gives them to
// it, and what its own decision is chosen from.
type roundPool struct {
	name     string
	template *corescheduling.NodeClaimTemplate
	taints   scheduling.Taints
	// instanceTypes are those the cloud provider returns for it, priced those as core prices them.
	instanceTypes, priced []*cloudprovider.InstanceType
	groups                []*podGroup
	queue                 []groupRun
	starting              []startingNode
	existing              int
	wasLarge              bool
	// inputs identifies what its own decision is chosen from (inputsHash), the same whichever
	// NodePool asks, so that the policy's cache serves the round's other NodePools.
	inputs uint64
	// offersAll says that its AnnotationSizingPolicy has the policy offer it every plan.
	offersAll bool
	// sized is its own decision, once chosen or found in the policy's cache.
	sized *sizedPool
	// packs, when not nil, holds the fleets packed for recent decisions (packMemo).
	packs *packMemo
	// budget is the round's time budget, shared by its NodePools' decisions.
	budget *timeBudget
}

// sizedPool is a NodePool's demand and the decision chosen for it on its own, before the round's
// other NodePools are simulated beside it.
type sizedPool struct {
	inputs   uint64
	demand   demand
	decision decision
}

// sizedAlone chooses the NodePool's ceiling for its own pods.
func (r *roundPool) sizedAlone(tradeoff Tradeoff, daemons []*corev1.Pod) *sizedPool {
	if r.sized != nil {
		return r.sized
	}
	if r.offersAll {
		d := nodePoolDemand(r.template, r.priced, r.groups, r.queue, daemons, r.starting)
		chosen := decision{ceiling: ceiling{top: len(d.plans) - 1}}
		if len(d.shapes) > 0 {
			chosen.fleet, _ = pack(d.plans, d.queue, chosen.ceiling, d.starting, r.budget)
		}
		r.sized = &sizedPool{inputs: r.inputs, demand: d, decision: chosen}
		return r.sized
	}
	d, chosen := decide(tradeoff, r.template, r.priced, r.groups, r.queue, daemons, r.starting, r.existing, r.wasLarge, r.packs, r.budget)
	r.sized = &sizedPool{inputs: r.inputs, demand: d, decision: chosen}
	return r.sized
}

// otherRoundPools are the NodePools other than the asking one (the self'th of pools) that core
// gives some of the pending pods to or that have nodes still starting, with what their decisions are chosen from, and their
// decisions where the policy's cache holds them for the same inputs; a NodePool whose
// AnnotationSizingPolicy disables sizing offers every plan. The caller holds p.mu.
func (p *Policy) otherRoundPools(ctx context.Context, pools *rankedNodePools, self int, pending pendingDemand, placements Placements,
	instanceTypes []*cloudprovider.InstanceType, sharedKey string) ([]*roundPool, error) {
	var out []*roundPool
	for i, np := range pools.pools {
		if i == self {
			continue
		}
		groups, queue := groupPending(pools, i, pending.pods, pending.coming)
		starting := startingNodes(placements, np.name, pending.placed)
		if len(groups) == 0 && len(starting) == 0 {
			continue
		}
		existing, err := p.nodeClaims(ctx, np.name)
		if err != nil {
			return nil, err
		}
		r := &roundPool{
			name: np.name, template: np.template, taints: np.taints, instanceTypes: instanceTypes,
			priced: p.AsCoreSees(ctx, np.name, instanceTypes), groups: groups, queue: queue,
			starting: starting, existing: existing, wasLarge: p.wasLarge(np.name),
			offersAll: np.nodePool.Annotations[v1.AnnotationSizingPolicy] == v1.SizingPolicyDisabled, packs: p.packs,
		}
		r.inputs = inputsHash(np.nodePool, r.priced, sharedKey, r.existing, r.wasLarge, r.starting, r.queue)
		if cached, ok := p.sized[r.name]; ok && cached.inputs == r.inputs {
			r.sized = cached
		}
		out = append(out, r)
	}
	return out, nil
}

// roundInputs identifies the asking NodePool's inputs and the other NodePools' of the round.
func roundInputs(inputs uint64, others []*roundPool) uint64 {
	if len(others) == 0 {
		return inputs
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", inputs)
	for _, r := range others {
		fmt.Fprintf(h, "|%s/%d/%t", r.name, r.inputs, r.offersAll)
	}
	return h.Sum64()
}

// jointRound is a provisioning round over several NodePools, as core's scheduler runs it: the
// pods of every NodePool in core's queue order go onto the starting nodes, then the round's
// in-flight NodeClaims, of any NodePool that takes them before a new NodeClaim of their own. The
// first NodePool is the asking one, whose ceiling varies; the others keep the ceiling chosen for
// them.
type jointRound struct {
	pools   []*roundPool
	demands []demand
	members map[*podGroup]*jointMember
	queue   []groupRun
	// dims counts the round's dimensions, every NodePool's; shared is, by NodePool, the round's
	// dimension of each of its demand's. Each demand numbers its dimensions its own way, and the
	// index of the round's NodeClaims (binIndex) compares them in the round's.
	dims   int
	shared [][]int
}

// jointMember is a group of one of the round's NodePools.
type jointMember struct {
	pool int
	// shapes are the group's shape in each NodePool's demand over the round's groups, nil where a
	// NodeClaim of that NodePool cannot take it.
	shapes []*shape
}

// newJointRound lays out the round of the pools, each sized.
func newJointRound(pools []*roundPool, daemons []*corev1.Pod) *jointRound {
	j := &jointRound{pools: pools, demands: make([]demand, len(pools)), members: map[*podGroup]*jointMember{}}
	var groups []*podGroup
	var queued []queuedPod
	for i, r := range pools {
		for _, g := range r.groups {
			groups = append(groups, g)
			j.members[g] = &jointMember{pool: i, shapes: make([]*shape, len(pools))}
			for _, p := range g.members {
				queued = append(queued, queuedPod{group: g, pod: p})
			}
		}
	}
	for q, r := range pools {
		joinable := slices.DeleteFunc(slices.Clone(groups), func(g *podGroup) bool {
			return j.members[g].pool != q && (r.taints.Tolerates(g.shape.tolerations) != nil ||
				!r.template.Requirements.IsCompatible(g.shape.requirements, scheduling.AllowUndefinedWellKnownLabels))
		})
		j.demands[q] = nodePoolDemand(r.template, r.priced, joinable, nil, daemons, r.starting)
		byKey := make(map[string]*shape, len(j.demands[q].shapes))
		for _, s := range j.demands[q].shapes {
			byKey[s.key] = s
		}
		for _, g := range joinable {
			j.members[g].shapes[q] = byKey[g.shape.key]
		}
	}
	j.queue = inQueueOrder(queued, groups)
	byName := map[corev1.ResourceName]int{}
	j.shared = make([][]int, len(pools))
	for q, d := range j.demands {
		for _, name := range d.dims {
			if _, ok := byName[name]; !ok {
				byName[name] = len(byName)
			}
			j.shared[q] = append(j.shared[q], byName[name])
		}
	}
	j.dims = len(byName)
	return j
}

// inRound is the NodePool's vector in the round's dimensions.
func (j *jointRound) inRound(pool int, v vector) vector {
	out := make(vector, j.dims)
	for d, amount := range v {
		out[j.shared[pool][d]] = amount
	}
	return out
}

// poolRoom is a room a NodePool's ceiling offers, in the round's dimensions.
type poolRoom struct {
	pool int
	room vector
}

// roomsAt are the rooms of the plans each NodePool's ceiling offers that no other of its offered
// plans holds (roomsOffered), in the round's dimensions: a NodeClaim of the round takes a pod
// only if one of its NodePool's holds it with the pod.
func (j *jointRound) roomsAt(ceilings []ceiling) []poolRoom {
	var rooms []poolRoom
	for q, d := range j.demands {
		if len(d.plans) == 0 {
			continue
		}
		for _, room := range roomsOffered(d.plans, ceilings[q], nil) {
			rooms = append(rooms, poolRoom{pool: q, room: j.inRound(q, room)})
		}
	}
	return rooms
}

// fleet is what the asking NodePool is expected to launch with ceiling c, given the fleet its own
// decision expects of c (alone): its new nodes of the round simulated jointly, and those alone
// expects of the later rounds, for the pods c defers.
func (j *jointRound) fleet(c ceiling, alone fleet) fleet {
	d := j.pools[0].sized.demand
	placed, _ := pack(d.plans, only(d.queue, placedAt(d, c)), c, d.starting, j.pools[0].budget)
	return j.round(c).plus(alone.minus(placed))
}

// round is the asking NodePool's new nodes of the round, at ceiling c; past the budget, an empty
// fleet the decision does not use.
func (j *jointRound) round(c ceiling) fleet {
	ceilings := make([]ceiling, len(j.pools))
	for q, r := range j.pools {
		ceilings[q] = r.sized.decision.ceiling
	}
	ceilings[0] = c
	// Core tries the nodes still starting, of every NodePool, by name.
	type startingSlot struct {
		startingRoom
		pool int
		used vector
	}
	var slots []*startingSlot
	for q := range j.pools {
		for _, room := range j.demands[q].starting {
			slots = append(slots, &startingSlot{startingRoom: room, pool: q, used: make(vector, len(room.free))})
		}
	}
	slices.SortStableFunc(slots, func(a, b *startingSlot) int { return strings.Compare(a.name, b.name) })
	// bins are in the order they opened, with their NodePool and the last shape each could not
	// take a pod of; order is core's order of them (coremodel.go). A pod goes to the first bin in
	// order that takes it, found through an index of the order (binIndex) once for each room the
	// NodePools' ceilings offer, as packer.addToOpenBin finds it: trying every bin for every pod
	// made the round quadratic in the pods. inRound holds each bin's room used in the round's
	// dimensions, for the index.
	var bins []*bin
	var poolOf []int
	var closedTo []*shape
	var order []slot
	var inRound []bin
	var index binIndex
	index.reset(j.dims)
	rooms := j.roomsAt(ceilings)
	reaches := make([]map[*shape]*reach, len(j.pools))
	reachIn := func(q int, s *shape) *reach {
		if reaches[q] == nil {
			reaches[q] = map[*shape]*reach{}
		}
		r, ok := reaches[q][s]
		if !ok {
			r = reachOf(j.demands[q].plans, s, ceilings[q])
			reaches[q][s] = r
		}
		return r
	}
	// holding is the plan of q that holds b with one more pod of s, or -1.
	holding := func(q int, b *bin, s *shape) int {
		plans := j.demands[q].plans
		beyond := len(plans)
		return b.holdingPlan(plans, s, reachIn(q, s), ceilings[q], &beyond)
	}
	// m is the group of the pod being placed, more its requests in the round's dimensions, room
	// the room looked for, of one NodePool's NodeClaims, and tried counts the bins tried for the
	// pod.
	var m *jointMember
	var more vector
	var room poolRoom
	tried := 0
	takes := func(which int32, _ int) bool {
		q := poolOf[which]
		joining := m.shapes[q]
		if q != room.pool || joining == nil || closedTo[which] == joining || !fits(room.room, inRound[which].used, more) {
			return false
		}
		tried++
		if holding(q, bins[which], joining) >= 0 {
			return true
		}
		// Bins only grow: one that cannot take a pod of the group takes none of its later pods.
		closedTo[which] = joining
		return false
	}
	budget := j.pools[0].budget
	changed := -1
	for _, r := range j.queue {
		m = j.members[r.of]
		h := m.pool
		s, d := m.shapes[h], j.demands[h]
		// A pod its NodePool's ceiling defers no other NodePool takes either: the floor holds it
		// otherwise (podGroup.elsewhere).
		if s == nil || d.plans[s.cheapest].price > d.plans[ceilings[h].top].price {
			continue
		}
		more = j.inRound(h, s.requests)
		left := r.pods
		// Pods spread over hostnames skip the starting nodes, as pack says.
		for _, slot := range slots {
			joining := m.shapes[slot.pool]
			if left == 0 || s.perNode > 0 {
				break
			}
			if joining == nil || !joining.plans.has(slot.plan) {
				continue
			}
			for left > 0 && fits(slot.free, slot.used, joining.requests) {
				for dim := range slot.used {
					slot.used[dim] += joining.requests[dim]
				}
				left--
			}
		}
		for ; left > 0; left-- {
			if budget.spend(1 + tried) {
				return fleet{}
			}
			tried = 0
			moved := changed
			_, at, sorted := coreOrder(order, changed)
			index.note(order, moved, at, sorted)
			changed = -1
			index.follow(order, inRound)
			found := -1
			for _, room = range rooms {
				to := len(order)
				if found >= 0 {
					to = found
				}
				if m.shapes[room.pool] == nil {
					continue
				}
				if at := index.first(0, to, room.room, more, takes); at >= 0 {
					found = at
				}
			}
			if found >= 0 {
				which := order[found].bin
				q, b := poolOf[which], bins[which]
				b.add(m.shapes[q], holding(q, b, m.shapes[q]))
				for dim, amount := range more {
					inRound[which].used[dim] += amount
				}
				order[found].pods++
				changed = found
				continue
			}
			b := &bin{used: make(vector, len(d.plans[0].room)), plans: slices.Clone(s.plans)}
			plan := holding(h, b, s)
			if plan < 0 {
				break
			}
			b.add(s, plan)
			bins, poolOf, closedTo = append(bins, b), append(poolOf, h), append(closedTo, nil)
			inRound = append(inRound, bin{used: slices.Clone(more)})
			order = append(order, slot{pods: 1, bin: int32(len(bins) - 1)})
		}
	}
	var f fleet
	for i, b := range bins {
		if poolOf[i] == 0 {
			f.price += j.demands[0].plans[b.plan].price
			f.nodes++
		}
	}
	return f
}

// placedAt are the demand's shapes that some plan up to c holds: those placed this round.
func placedAt(d demand, c ceiling) []*shape {
	var now []*shape
	for _, s := range d.shapes {
		if d.plans[s.cheapest].price <= d.plans[c.top].price {
			now = append(now, s)
		}
	}
	return now
}
