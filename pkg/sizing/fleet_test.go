package sizing

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Dimensions of the hand-made cases: pods, then CPU in millicores.
func room(pods, milliCPU int64) vector { return vector{pods * 1000, milliCPU} }
func request(milliCPU int64) vector    { return vector{1000, milliCPU} }
func allPlans(n int) bitset {
	b := newBitset(n)
	for i := range n {
		b.set(i)
	}
	return b
}
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
func oneShape(pods int, milliCPU int64) *shape {
	return &shape{key: "s", requests: request(milliCPU), pods: pods}
}

// plans of the cases: a small plan cheap per pod, a big one dearer per pod.
var smallBig = []plan{
	{name: "small", price: 1, room: room(110, 3000)},
	{name: "big", price: 5, room: room(110, 12000)},
}

func withPlans(plans []plan, shapes ...*shape) []*shape {
	for _, s := range shapes {
		if s.plans == nil {
			s.plans = allPlans(len(plans))
		}
		s.cheapest = -1
		for i := range plans {
			if s.plans.has(i) && fits(plans[i].room, make(vector, len(s.requests)), s.requests) {
				s.cheapest = i
				break
			}
		}
	}
	return shapes
}

// queueOf lays the shapes' pods out in core's queue one shape after the other, in the order given.
func queueOf(shapes []*shape) []run {
	var queue []run
	for _, s := range shapes {
		queue = appendRun(queue, run{of: s, pods: s.pods})
	}
	return queue
}

// groupsInOrder lays the groups' pods out in core's queue one group after the other, in the order given.
func groupsInOrder(groups []*podGroup) []groupRun {
	queue := make([]groupRun, len(groups))
	for i, g := range groups {
		queue[i] = groupRun{of: g, pods: g.pods}
	}
	return queue
}

func TestPack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		plans    []plan
		shapes   []*shape
		ceiling  int
		starting []startingRoom
		want     fleet
	}{
		{
			name:  "ten one-CPU pods on small plans: three a node, the last node cheapest for its one pod",
			plans: smallBig, shapes: []*shape{oneShape(10, 1000)}, ceiling: 0,
			want: fleet{price: 4, nodes: 4},
		},
		{
			name:  "with the big plan allowed, core keeps filling one NodeClaim: one big node",
			plans: smallBig, shapes: []*shape{oneShape(10, 1000)}, ceiling: 1,
			want: fleet{price: 5, nodes: 1},
		},
		{
			name:  "thirteen pods: a full big node and a small one for the last pod",
			plans: smallBig, shapes: []*shape{oneShape(13, 1000)}, ceiling: 1,
			want: fleet{price: 6, nodes: 2},
		},
		{
			// Two-CPU pods first, each new NodeClaim taking the next while it has the fewest pods:
			// the first takes both (4 of 6 CPU on a 6-CPU plan), then the one-CPU pods go to it
			// until it is full, the rest to a new one.
			name:  "bigger pods first, smaller ones fill the NodeClaim with the fewest pods",
			plans: []plan{{name: "six", price: 2, room: room(110, 6000)}},
			shapes: []*shape{
				{key: "two", requests: request(2000), pods: 2},
				{key: "one", requests: request(1000), pods: 4},
			},
			want: fleet{price: 4, nodes: 2},
		},
		{
			name:  "a hostname spread puts one pod of the group on each node, other pods fill them",
			plans: []plan{{name: "four", price: 1, room: room(110, 4000)}},
			shapes: []*shape{
				{key: "spread", requests: request(2000), pods: 3, perNode: 1, group: "g"},
				{key: "filler", requests: request(1000), pods: 6},
			},
			want: fleet{price: 3, nodes: 3},
		},
		{
			// Pods of the same requests come in the order their workloads created them: here the
			// spread pods after the others, which filled two NodeClaims, so that two of the three
			// spread pods need a NodeClaim of their own.
			name:  "pods of the same requests spread over hostnames after the others need more nodes",
			plans: []plan{{name: "four", price: 1, room: room(110, 4000)}},
			shapes: []*shape{
				{key: "filler", requests: request(2000), pods: 3},
				{key: "spread", requests: request(2000), pods: 3, perNode: 1, group: "g"},
			},
			want: fleet{price: 4, nodes: 4},
		},
		{
			name:  "the same pods, the spread ones first, share three nodes with the others",
			plans: []plan{{name: "four", price: 1, room: room(110, 4000)}},
			shapes: []*shape{
				{key: "spread", requests: request(2000), pods: 3, perNode: 1, group: "g"},
				{key: "filler", requests: request(2000), pods: 3},
			},
			want: fleet{price: 3, nodes: 3},
		},
		{
			name:  "pods fill the room on a starting node first, which costs nothing more",
			plans: smallBig, shapes: []*shape{oneShape(10, 1000)}, ceiling: 0,
			starting: []startingRoom{{plan: 1, free: room(110, 4000)}},
			want:     fleet{price: 2, nodes: 2},
		},
		{
			name:  "the starting nodes take pods in order, each as many as fit",
			plans: smallBig, shapes: []*shape{oneShape(10, 1000)}, ceiling: 0,
			starting: []startingRoom{{plan: 1, free: room(110, 2500)}, {plan: 0, free: room(110, 3000)}},
			want:     fleet{price: 2, nodes: 2},
		},
		{
			name:  "a starting node on a plan the pods may not run on takes none",
			plans: smallBig, shapes: []*shape{{key: "small-only", requests: request(1000), pods: 10, plans: bitset{1}}}, ceiling: 0,
			starting: []startingRoom{{plan: 1, free: room(110, 4000)}},
			want:     fleet{price: 4, nodes: 4},
		},
		{
			name:     "pods spread over hostnames go to new nodes only",
			plans:    []plan{{name: "four", price: 1, room: room(110, 4000)}},
			shapes:   []*shape{{key: "spread", requests: request(1000), pods: 2, perNode: 1, group: "g"}},
			starting: []startingRoom{{plan: 0, free: room(110, 4000)}},
			want:     fleet{price: 2, nodes: 2},
		},
		{
			name:   "the pod limit binds before CPU",
			plans:  []plan{{name: "ten-pods", price: 1, room: room(10, 4000)}},
			shapes: []*shape{oneShape(25, 10)},
			want:   fleet{price: 3, nodes: 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shapes := withPlans(tc.plans, tc.shapes...)
			if got, _ := pack(tc.plans, queueOf(shapes), ceiling{top: tc.ceiling}, tc.starting, nil); !near(got.price, tc.want.price) || got.nodes != tc.want.nodes {
				t.Fatalf("pack = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// fineGrained are plans whose sizes leave the cheapest fleet depending on the last node.
var fineGrained = []plan{
	{name: "tiny", price: 0.5, room: room(110, 1250)},
	{name: "small", price: 1, room: room(110, 2750)},
	{name: "medium", price: 2, room: room(110, 5750)},
}

func TestChoose(t *testing.T) {
	// Two small pods' plans and one for the big pod: 6 one-CPU pods and a 10-CPU one.
	plans := []plan{
		{name: "small", price: 1, room: room(110, 3000)},
		{name: "medium", price: 3, room: room(110, 6000)},
		{name: "big", price: 10, room: room(110, 12000)},
	}
	big := func() *shape { return &shape{key: "big", requests: request(10000), pods: 1} }
	for _, tc := range []struct {
		name      string
		plans     []plan
		shapes    []*shape
		tolerance float64
		existing  int
		wasLarge  bool
		floor     int
		starting  []startingRoom
		ceiling   string
		fleet     fleet
		deferred  int
	}{
		{
			name: "cheapest: small plans", plans: smallBig, shapes: []*shape{oneShape(10, 1000)},
			ceiling: "small", fleet: fleet{price: 4, nodes: 4},
		},
		{
			// One big node costs 5, 25% more than four small ones.
			name: "a tolerance of 30% takes the fleet with fewer nodes", plans: smallBig, shapes: []*shape{oneShape(10, 1000)},
			tolerance: 0.3, ceiling: "big", fleet: fleet{price: 5, nodes: 1},
		},
		{
			name: "a tolerance of 20% does not", plans: smallBig, shapes: []*shape{oneShape(10, 1000)},
			tolerance: 0.2, ceiling: "small", fleet: fleet{price: 4, nodes: 4},
		},
		{
			// The cases above need four small nodes, above the threshold of three.
			name: "a NodePool up to the large-fleet threshold gets the cheapest fleet whatever the tolerance", plans: smallBig, shapes: []*shape{oneShape(9, 1000)},
			tolerance: 0.9, ceiling: "small", fleet: fleet{price: 3, nodes: 3},
		},
		{
			// The same pods when the NodePool already has a node: four nodes make it large.
			name: "the NodePool's nodes count towards a large fleet", plans: smallBig, shapes: []*shape{oneShape(9, 1000)},
			tolerance: 0.9, existing: 1, ceiling: "big", fleet: fleet{price: 5, nodes: 1},
		},
		{
			// Ten one-CPU pods: four small nodes ($4) make the NodePool large; two medium ones
			// ($4.4) keep it at the threshold for less than the big one ($5).
			name: "a large NodePool gets the cheapest fleet that keeps it at the threshold", plans: []plan{smallBig[0], {name: "medium", price: 2.2, room: room(110, 6000)}, smallBig[1]},
			shapes: []*shape{oneShape(10, 1000)}, tolerance: 0.3, ceiling: "medium", fleet: fleet{price: 4.4, nodes: 2},
		},
		{
			// Ten one-CPU pods: four small nodes ($4) make the NodePool large; two plans of four
			// pods and a small one keep it at the threshold for 35% more, within the tolerance,
			// but save only one node in four.
			name: "a fleet with fewer nodes costs at most what the nodes it saves would", plans: []plan{smallBig[0], {name: "four", price: 2.2, room: room(110, 4000)}},
			shapes: []*shape{oneShape(10, 1000)}, tolerance: 0.4, ceiling: "small", fleet: fleet{price: 4, nodes: 4},
		},
		{
			// The same pods with two nodes in the NodePool: only the big plan keeps it at three.
			name: "the threshold counts the NodePool's nodes", plans: []plan{smallBig[0], {name: "medium", price: 2.2, room: room(110, 6000)}, smallBig[1]},
			shapes: []*shape{oneShape(10, 1000)}, tolerance: 0.3, existing: 2, ceiling: "big", fleet: fleet{price: 5, nodes: 1},
		},
		{
			// A burst's last pods: three small nodes would not make the NodePool large, but it was
			// large earlier in the burst.
			name: "a NodePool large earlier in the burst stays large", plans: smallBig, shapes: []*shape{oneShape(9, 1000)},
			tolerance: 0.9, wasLarge: true, ceiling: "big", fleet: fleet{price: 5, nodes: 1},
		},
		{
			// All at once, the small pods fill the big pod's node (2 CPU left) and a second big
			// NodeClaim for 4 CPU, launched as a medium plan: 13. Deferred, the small pods take two
			// small nodes now and the big pod a big one next round: 12.
			name: "the big pod waits a round when that is cheaper", plans: plans, shapes: []*shape{big(), oneShape(6, 1000)},
			ceiling: "small", fleet: fleet{price: 12, nodes: 3}, deferred: 1,
		},
		{
			// Core could not place the big pod before: this round's ceiling must let it in.
			name: "a pod core could not place sets the floor", plans: plans,
			shapes: []*shape{func() *shape { s := big(); s.deferred = true; return s }(), oneShape(6, 1000)},
			floor:  2, ceiling: "big", fleet: fleet{price: 13, nodes: 2},
		},
		{
			// A burst's last 81 quarter-CPU pods: on mid-sized plans the fourth node would be
			// mostly empty, so seven small plans and a tiny one are cheaper.
			name: "sized for new nodes alone, a round takes the plans that leave least room", plans: fineGrained, shapes: []*shape{oneShape(81, 250)},
			ceiling: "small", fleet: fleet{price: 7.5, nodes: 8},
		},
		{
			// 3 CPU of them fit on a node still starting: the rest fill three mid-sized plans exactly.
			name: "room on a starting node counts", plans: fineGrained, shapes: []*shape{oneShape(81, 250)},
			starting: []startingRoom{{plan: 2, free: room(110, 3000)}},
			ceiling:  "medium", fleet: fleet{price: 6, nodes: 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shapes := withPlans(tc.plans, tc.shapes...)
			floor := tc.floor
			if floor == 0 {
				floor = -1
			}
			d := demand{plans: tc.plans, shapes: shapes, queue: queueOf(shapes), floor: floor, starting: tc.starting}.choose(Tradeoff{LargeFleetNodes: 3, Tolerance: tc.tolerance}, tc.existing, tc.wasLarge)
			if tc.plans[d.ceiling.top].name != tc.ceiling || !near(d.fleet.price, tc.fleet.price) || d.fleet.nodes != tc.fleet.nodes || d.deferred != tc.deferred {
				t.Fatalf("choose = ceiling %s, fleet %+v, %d deferred; want ceiling %s, fleet %+v, %d deferred",
					tc.plans[d.ceiling.top].name, d.fleet, d.deferred, tc.ceiling, tc.fleet, tc.deferred)
			}
		})
	}
}

// TestChooseOnePlanAtAPrice: two plans of one price, one with more CPU and one with more memory,
// as g6-dedicated-32 and g6-standard-20 are. Offered both, core fills each NodeClaim with three of
// the memory-heavy pods, which only the memory plan holds, and no CPU-heavy pod fits beside them;
// offered the CPU plan alone, it puts two beside four CPU-heavy pods on every node.
func TestChooseOnePlanAtAPrice(t *testing.T) {
	// Dimensions: pods, CPU in millicores, memory in GiB.
	plans := []plan{
		{name: "cpu", price: 1, room: vector{110_000, 31_000, 60}},
		{name: "memory", price: 1, room: vector{110_000, 19_000, 90}},
	}
	memoryHeavy := &shape{key: "memory-heavy", requests: vector{1000, 6000, 24}, pods: 16}
	cpuHeavy := &shape{key: "cpu-heavy", requests: vector{1000, 4000, 2}, pods: 28}
	shapes := withPlans(plans, memoryHeavy, cpuHeavy)

	both, _ := pack(plans, queueOf(shapes), ceiling{top: 1}, nil, nil)
	d := demand{plans: plans, shapes: shapes, queue: queueOf(shapes), floor: -1}.choose(Tradeoff{LargeFleetNodes: 100}, 0, false)
	if want := (ceiling{top: 0, sole: true}); d.ceiling != want || !near(d.fleet.price, 8) || d.fleet.nodes != 8 {
		t.Fatalf("choose = ceiling %+v, fleet %+v; want %+v (the CPU plan alone), 8 nodes for 8", d.ceiling, d.fleet, want)
	}
	if both.price <= d.fleet.price {
		t.Fatalf("offered both plans, core's fleet costs %v, no more than the CPU plan's alone (%v): the case shows nothing", both.price, d.fleet.price)
	}
	if got := d.ceiling.passedOver(plans); !slices.Equal(got, []string{"memory"}) {
		t.Fatalf("passed over %v, want the memory plan", got)
	}
}

// TestPackReusedAcrossCeilings: a solver reuses the fleet it packed for a ceiling at dearer
// ceilings whose plans would take no pod the ceiling turned away; every ceiling must still get
// the fleet packing with it afresh gives, over random plans with prices in common, pods some
// plans cannot run, hostname spreads and a starting node.
func TestPackReusedAcrossCeilings(t *testing.T) {
	//nolint:gosec // Reproducible cases, not security.
	r := rand.New(rand.NewSource(1))
	reused := 0
	for range 500 {
		// Dimensions: pods, CPU in millicores, memory in GiB.
		plans := make([]plan, 2+r.Intn(10))
		price := 0.0
		for i := range plans {
			if i == 0 || r.Intn(3) > 0 {
				price += float64(1 + r.Intn(4))
			}
			plans[i] = plan{name: fmt.Sprint(i), price: price, room: vector{110_000, int64(1+r.Intn(16)) * 1000, int64(1 + r.Intn(64))}}
		}
		var shapes []*shape
		for i := range 1 + r.Intn(5) {
			s := &shape{key: fmt.Sprint(i), requests: vector{1000, int64(100 * (1 + r.Intn(20))), int64(1 + r.Intn(8))}, pods: 1 + r.Intn(200), plans: newBitset(len(plans))}
			for p := range plans {
				if r.Intn(4) > 0 {
					s.plans.set(p)
				}
			}
			if r.Intn(4) == 0 {
				s.perNode, s.group = 1+r.Intn(3), "spread"
			}
			shapes = append(shapes, s)
		}
		shapes = withPlans(plans, shapes...)
		var starting []startingRoom
		if r.Intn(2) == 0 {
			starting = []startingRoom{{plan: r.Intn(len(plans)), free: vector{110_000, int64(r.Intn(8000)), int64(r.Intn(32))}}}
		}
		s := newSolver(plans, shapes, queueOf(shapes), starting)
		key := packKey{remaining: len(shapes), now: len(shapes), starting: true}
		ceilings := 0
		for c := range plans {
			if c+1 < len(plans) && plans[c+1].price == plans[c].price {
				continue
			}
			ceilings++
			got := s.pack(key, shapes, ceiling{top: c})
			if want, _ := pack(plans, queueOf(shapes), ceiling{top: c}, starting, nil); !near(got.price, want.price) || got.nodes != want.nodes {
				t.Fatalf("ceiling %d of %+v: the solver packs %+v, packing afresh %+v", c, plans, got, want)
			}
		}
		if len(s.packed[key]) < ceilings {
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("no solver reused a fleet: the cases show nothing")
	}
}

// TestDefaultTradeoff: with the default settings, a NodePool gets the cheapest fleet for its
// pending pods unless that fleet would give it more than a hundred nodes; then it gets the fleet
// with the fewest nodes at most 25% dearer. One-CPU pods are cheapest three to a g6-standard-4.
func TestDefaultTradeoff(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	template := nodeClaimTemplate("standard", "dedicated")
	tradeoff := defaultTradeoff
	oneCPU := shapeOf(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
	}}}}}}, false)
	for _, tc := range []struct {
		pods, existing int
		ceiling        string
		nodes          int
	}{
		{pods: 60, ceiling: "g6-standard-4", nodes: 20},
		// With the NodePool's 81 nodes, 20 more make a large fleet: two nodes at $0.864/h (the
		// price of g6-standard-20 and g6-dedicated-32) hold the pods for 20% more.
		{pods: 60, existing: 81, ceiling: "g6-standard-20", nodes: 2},
		// 84 nodes at $6.01/h rather than six g6-dedicated-48 for 15% more.
		{pods: 250, ceiling: "g6-standard-4", nodes: 84},
		// 334 nodes at $24.01/h, or 22 for 15% more.
		{pods: 1000, ceiling: "g6-dedicated-48", nodes: 22},
	} {
		t.Run(fmt.Sprintf("%d pods, %d nodes", tc.pods, tc.existing), func(t *testing.T) {
			groups := []*podGroup{{shape: oneCPU, pods: tc.pods}}
			demand := nodePoolDemand(template, instanceTypes, groups, groupsInOrder(groups), nil, nil)
			d := demand.choose(tradeoff, tc.existing, false)
			if got := demand.plans[d.ceiling.top].name; got != tc.ceiling || d.fleet.nodes != tc.nodes {
				t.Fatalf("ceiling %s, fleet %+v (cheapest %+v); want ceiling %s, %d nodes", got, d.fleet, d.cheapest, tc.ceiling, tc.nodes)
			}
		})
	}
}

// coreOrder must leave bins in the order core's sort.Slice leaves its NodeClaims in, both where
// it sorts them all and where it moves the bin that took a pod itself: over many
// counts with many ties, a bin bumped at every position, or a bin appended.
func TestBinsSortLikeCore(t *testing.T) {
	//nolint:gosec // Reproducible cases, not security.
	r := rand.New(rand.NewSource(1))
	for range 5000 {
		bins := make([]slot, 1+r.Intn(300))
		for i := range bins {
			bins[i] = slot{pods: int32(1 + r.Intn(1+r.Intn(8))), bin: int32(i)}
		}
		slices.SortFunc(bins, fewerPods)
		changed := -1
		if r.Intn(4) == 0 {
			bins = append(bins, slot{pods: 1, bin: int32(len(bins))})
		} else {
			changed = r.Intn(len(bins))
			bins[changed].pods++
		}
		cores := slices.Clone(bins)
		sort.Slice(cores, func(a, b int) bool { return cores[a].pods < cores[b].pods })
		moved := slot{pods: 1, bin: int32(len(bins) - 1)}
		if changed >= 0 {
			moved = bins[changed]
		}
		if _, at, _ := coreOrder(bins, changed); bins[at] != moved {
			t.Fatalf("%d bins, bin %d changed: it is at %d, not where coreOrder says", len(bins), changed, at)
		}
		for i := range bins {
			if bins[i] != cores[i] {
				t.Fatalf("%d bins, bin %d changed: position %d differs from core's order", len(bins), changed, i)
			}
		}
	}
}
