package sizing

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
