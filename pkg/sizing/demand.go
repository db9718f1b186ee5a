package sizing

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// demand is a NodePool's pending pods and plans as the simulation sees them.
type demand struct {
	plans []plan
	// dims are the resources of the vectors' dimensions, in their order.
	dims []corev1.ResourceName
	// instanceTypes are the plans' instance types, in the same order.
	instanceTypes cloudprovider.InstanceTypes
	shapes        []*shape
	// starting is the room on the NodePool's starting nodes, in the order core tries them.
	starting []startingRoom
	// queue is the shapes' pods in the order core's scheduling queue takes them.
	queue []run
	// floor is the lowest ceiling allowed (an index into plans), or -1: the cheapest plan holding
	// a pod core could not place before, raised to the plan holding every pod core would place
	// elsewhere if this round's plans did not hold it (podGroup.elsewhere).
	floor int
	// pods counts the pods of the shapes; coming those their workloads have yet to create.
	pods, coming int
	// recent, when not nil, holds the fleets packed for recent decisions (packMemo).
	recent *packMemo
	// budget, when not nil, is the time the decision may take.
	budget *timeBudget
}

// nodePoolDemand describes the NodePool's available plans, cheapest first, with the room a node
// of each has after the DaemonSets that would run on it, the room on its starting nodes, and the
// groups of pods as shapes. A group no plan holds is left out: it stays pending whatever the
// NodePool offers.
func nodePoolDemand(template *corescheduling.NodeClaimTemplate, instanceTypes []*cloudprovider.InstanceType, groups []*podGroup, queue []groupRun, daemons []*corev1.Pod, starting []startingNode) demand {
	type candidate struct {
		it    *cloudprovider.InstanceType
		price float64
	}
	var candidates []candidate
	for _, it := range instanceTypes {
		if it.Requirements.Intersects(template.Requirements) != nil {
			continue
		}
		offerings := it.Offerings.Available().Compatible(template.Requirements)
		if len(offerings) == 0 {
			continue
		}
		candidates = append(candidates, candidate{it: it, price: offerings.Cheapest().Price})
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int {
		switch {
		case a.price < b.price:
			return -1
		case a.price > b.price:
			return 1
		default:
			return strings.Compare(a.it.Name, b.it.Name)
		}
	})

	// Dimensions: the pod count, and whatever the pods and the DaemonSets ask for.
	dims := map[corev1.ResourceName]int{corev1.ResourcePods: 0}
	addDims := func(list corev1.ResourceList) {
		for name := range list {
			if _, ok := dims[name]; !ok {
				dims[name] = len(dims)
			}
		}
	}
	for _, g := range groups {
		addDims(g.shape.requests)
	}
	taints := hardTaints(template)
	overheads := make([]corev1.ResourceList, len(candidates))
	for i, c := range candidates {
		overheads[i] = daemonOverhead(template, taints, c.it, daemons)
		addDims(overheads[i])
	}
	// In the same order in every decision, so that the packs a recent decision saved serve the
	// next (packMemo), whatever order the maps were read in.
	names := slices.Sorted(maps.Keys(dims))
	names = slices.DeleteFunc(names, func(name corev1.ResourceName) bool { return name == corev1.ResourcePods })
	for i, name := range names {
		dims[name] = i + 1
	}
	toVector := func(list corev1.ResourceList) vector {
		v := make(vector, len(dims))
		for name, quantity := range list {
			if d, ok := dims[name]; ok {
				v[d] = quantity.MilliValue()
			}
		}
		return v
	}

	d := demand{floor: -1, dims: make([]corev1.ResourceName, len(dims))}
	for name, dim := range dims {
		d.dims[dim] = name
	}
	for i, c := range candidates {
		room, overhead := toVector(c.it.Allocatable()), toVector(overheads[i])
		for dim := range room {
			room[dim] -= overhead[dim]
		}
		d.plans = append(d.plans, plan{name: c.it.Name, price: c.price, room: room})
		d.instanceTypes = append(d.instanceTypes, c.it)
	}
	planIndex := make(map[string]int, len(d.plans))
	for i, p := range d.plans {
		planIndex[p.name] = i
	}
	for _, n := range starting {
		// A node on a plan the NodePool no longer offers may still take pods; leaving its room out
		// only sizes for more than core launches.
		i, ok := planIndex[n.plan]
		if !ok {
			continue
		}
		free := toVector(n.free)
		// Core counts the DaemonSets' pods that have yet to start on the node as taking room.
		for dim, amount := range toVector(resources.Subtract(overheads[i], n.daemons)) {
			free[dim] -= max(amount, 0)
		}
		d.starting = append(d.starting, startingRoom{plan: i, free: free, name: n.name})
	}
	empty := make(vector, len(dims))
	shapes := make(map[*podGroup]*shape, len(groups))
	// allowed are the plans pods may run on by their requirements, by the requirements' text:
	// pods of many sizes mostly share their requirements.
	allowed := map[string]bitset{}
	// placeNow is the dearest of the cheapest plans holding pods that core would place elsewhere
	// if this round's plans did not hold them, or -1.
	placeNow := -1
	for _, g := range groups {
		s := &shape{
			key:      g.shape.key,
			requests: toVector(g.shape.requests),
			pods:     g.pods,
			plans:    newBitset(len(d.plans)),
			perNode:  g.shape.perNode,
			group:    g.shape.group,
			cheapest: -1,
			deferred: g.deferred,
			arriving: g.coming > 0,
		}
		requirementsKey := g.shape.levels[g.shape.level].key
		plans, ok := allowed[requirementsKey]
		if !ok {
			plans = newBitset(len(d.plans))
			requirements := scheduling.NewRequirements(template.Requirements.Values()...)
			requirements.Add(g.shape.requirements.Values()...)
			for i, c := range candidates {
				if c.it.Requirements.Intersects(requirements) == nil && c.it.Offerings.Available().HasCompatible(requirements) {
					plans.set(i)
				}
			}
			allowed[requirementsKey] = plans
		}
		copy(s.plans, plans)
		for i := range d.plans {
			if s.plans.has(i) && fits(d.plans[i].room, empty, s.requests) {
				s.cheapest = i
				break
			}
		}
		if s.cheapest < 0 {
			continue
		}
		d.shapes = append(d.shapes, s)
		shapes[g] = s
		d.pods += s.pods
		d.coming += g.coming
		if s.deferred && (d.floor < 0 || s.cheapest < d.floor) {
			d.floor = s.cheapest
		}
		if g.elsewhere {
			placeNow = max(placeNow, s.cheapest)
		}
	}
	d.floor = max(d.floor, placeNow)
	for _, r := range queue {
		if s, ok := shapes[r.of]; ok {
			d.queue = appendRun(d.queue, run{of: s, pods: r.pods})
		}
	}
	return d
}

// satisfyMinValues raises the ceiling (an index into plans) until the plans up to it meet the
// NodePool's minValues, if it sets any: core launches nothing for a NodePool whose offered plans
// cannot meet them.
func (d demand) satisfyMinValues(ceiling int, requirements scheduling.Requirements) int {
	for ceiling < len(d.plans)-1 {
		if _, _, err := d.instanceTypes[:ceiling+1].SatisfiesMinValues(requirements); err == nil {
			break
		}
		ceiling++
		// A ceiling allows every plan at its price.
		for ceiling < len(d.plans)-1 && d.plans[ceiling+1].price == d.plans[ceiling].price {
			ceiling++
		}
	}
	return ceiling
}

// burstFloor is the price below which no plan is offered while a burst is still arriving: that
// of ceiling, the ceiling of the burst's own pods (decision.burstCeiling), so that every
// NodeClaim of this round launches a plan at least that large. Core launches the cheapest plan
// that holds a NodeClaim, and the last NodeClaim of a round is rarely full; at the ceiling's size
// it keeps room for the pods of the next round, which core places on in-flight NodeClaims first,
// where a smaller plan would leave those pods to start new nodes. Without pods to come, with
// minValues to meet (they need several plans), or when a pod this round places cannot run on a
// plan at the ceiling's price, there is no floor (0).
func (d demand) burstFloor(c ceiling, requirements scheduling.Requirements) float64 {
	if d.coming == 0 || requirements.HasMinValues() {
		return 0
	}
	price := d.plans[c.top].price
	empty := make(vector, len(d.plans[c.top].room))
	for _, s := range d.shapes {
		if d.plans[s.cheapest].price > price {
			continue
		}
		runs := false
		for i := range d.plans {
			if d.plans[i].price == price && c.offers(d.plans, i) && s.plans.has(i) && fits(d.plans[i].room, empty, s.requests) {
				runs = true
				break
			}
		}
		if !runs {
			return 0
		}
	}
	return price
}
