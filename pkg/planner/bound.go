package planner

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// PlanRoom is a plan pods may run on, as the bound and the single-plan fleet see it: its price and
// the room a node of it has for the pods, its allocatable resources as our instance types report
// them less what the DaemonSets ask for on every node.
type PlanRoom struct {
	Name  string
	Price float64
	Room  corev1.ResourceList
	// Requirements are the plan's labels, which a pod's node requirements must allow.
	Requirements scheduling.Requirements
}

// PodKind is N identical pods.
type PodKind struct {
	N            int
	Requests     corev1.ResourceList
	Requirements scheduling.Requirements
	// PerNodeMost is the most of them one node may hold whatever its room, 0 for no such limit:
	// see HostnameSpreadLimit.
	PerNodeMost int64
}

// PlanRooms are the instance types with an available offering, priced at their cheapest, with
// room after the overhead.
func PlanRooms(instanceTypes []*cloudprovider.InstanceType, overhead corev1.ResourceList) []PlanRoom {
	var plans []PlanRoom
	for _, it := range instanceTypes {
		offering := it.Offerings.Available().Cheapest()
		if offering == nil {
			continue
		}
		room := corev1.ResourceList{}
		for name, quantity := range it.Allocatable() {
			q := quantity.DeepCopy()
			if o, ok := overhead[name]; ok {
				q.Sub(o)
			}
			room[name] = q
		}
		plans = append(plans, PlanRoom{Name: it.Name, Price: offering.Price, Room: room, Requirements: it.Requirements})
	}
	return plans
}

// perNode is how many pods of the kind alone fit on a node of the plan, at most the kind's
// per-node limit: 0 when the plan's labels do not allow them.
func (p PlanRoom) perNode(pods PodKind) int64 {
	if p.Requirements.Intersects(pods.Requirements) != nil {
		return 0
	}
	most := int64(math.MaxInt64)
	for name, request := range pods.Requests {
		if request.IsZero() {
			continue
		}
		room := p.Room[name]
		most = min(most, room.MilliValue()/request.MilliValue())
	}
	if pods.PerNodeMost > 0 {
		most = min(most, pods.PerNodeMost)
	}
	return max(most, 0)
}

// LowerBound is the least an hourly fleet can cost for the pods, from a linear program no real
// fleet can beat: the relaxation of bin packing that Gilmore and Gomory gave for cutting stock.
// A pattern is what one node can hold: a plan and a whole number of pods of each kind that fit
// its room together, no more of a kind than the kind's per-node limit or its count. With λ_j
// nodes of pattern j, holding a_sj pods of kind s,
//
//	minimize    Σ_j price_j λ_j
//	subject to  Σ_j a_sj λ_j ≥ n_s       every pod runs somewhere
//	            λ ≥ 0
//
// Every real fleet is a solution with whole λ, so the optimum is a lower bound. It is fractional
// only in how many nodes of each pattern there are, never in what a node holds. A program over
// resources alone (so many pods of a kind on a plan, their requests within the plan's room times
// its nodes) lets pods straddle nodes: it fills each g6-standard-6's last 165 millicores with
// parts of 250m pods, and reads a mix whose pods fit its nodes only one way as cheaper than any fleet
// of whole pods can be (the web mix: $1.393/h against ten g6-standard-6 at $1.440/h, which no
// fleet beats).
//
// There are too many patterns to list, so the program is solved by column generation
// (patternBound). Where its value is less than whole nodes, no fleet reaches it either, so the
// bound is at least what whole nodes cost for each kind alone (wholeNodesFor: fourteen 100m
// pods, nine to a g6-standard-1, need two of them or a g6-standard-2, not 14/9 of the first).
func LowerBound(plans []PlanRoom, kinds []PodKind) (float64, error) {
	kinds = mergeIdentical(kinds)
	if len(kinds) == 0 {
		return 0, nil
	}
	names := requestedResources(kinds)
	used := usablePlans(plans, kinds, names)
	for s, kind := range kinds {
		if !slices.ContainsFunc(used, func(u usablePlan) bool { return u.perNode[s] > 0 }) {
			return 0, fmt.Errorf("no plan holds a pod of %s", FormatRequests(kind.Requests))
		}
	}
	price, err := patternBound(used, kinds, names)
	if err != nil {
		return 0, err
	}
	for s := range kinds {
		price = max(price, wholeNodesFor(used, kinds, s))
	}
	return price, nil
}

// wholeNodesFor is the least whole nodes cost that hold the pods of kind s alone: the cheapest
// way to reach n_s with nodes of ⌊k_sp⌋ pods each, any mix of plans, found by dynamic
// programming over the pod count. The other kinds only add to it.
func wholeNodesFor(plans []usablePlan, kinds []PodKind, s int) float64 {
	n := kinds[s].N
	// cheapest[m] is the least whole nodes cost that hold m of the pods.
	cheapest := make([]float64, n+1)
	for m := 1; m <= n; m++ {
		cheapest[m] = math.Inf(1)
		for _, u := range plans {
			if k := int(u.perNode[s]); k > 0 {
				cheapest[m] = min(cheapest[m], u.plan.Price+cheapest[max(0, m-k)])
			}
		}
	}
	return cheapest[n]
}

// requestedResources are the resources the pods ask for; others do not constrain them.
func requestedResources(kinds []PodKind) []corev1.ResourceName {
	var names []corev1.ResourceName
	for _, kind := range kinds {
		for name, q := range kind.Requests {
			if !q.IsZero() && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// usablePlan is a plan some kind of pod fits, with the most pods of each kind alone that fit one
// of its nodes (⌊k_sp⌋, within the kind's per-node limit).
type usablePlan struct {
	plan    PlanRoom
	perNode []int64
}

// usablePlans are the plans some kind fits, less those another plan dominates (no dearer, no
// less room in what the pods ask for, takes every kind the other does): whatever a node of the
// dominated plan holds, a node of the other holds for no more, so the bound is the same without
// it and the program smaller.
func usablePlans(plans []PlanRoom, kinds []PodKind, names []corev1.ResourceName) []usablePlan {
	var candidates []usablePlan
	for _, p := range plans {
		u := usablePlan{plan: p, perNode: make([]int64, len(kinds))}
		for s, kind := range kinds {
			u.perNode[s] = p.perNode(kind)
		}
		if slices.ContainsFunc(u.perNode, func(n int64) bool { return n > 0 }) {
			candidates = append(candidates, u)
		}
	}
	dominates := func(a, b usablePlan) bool {
		if a.plan.Price > b.plan.Price {
			return false
		}
		for s := range kinds {
			if b.perNode[s] > 0 && a.perNode[s] == 0 {
				return false
			}
		}
		for _, name := range names {
			if a.plan.Room.Name(name, resource.DecimalSI).Cmp(*b.plan.Room.Name(name, resource.DecimalSI)) < 0 {
				return false
			}
		}
		return true
	}
	var used []usablePlan
	for i, u := range candidates {
		dominated := slices.ContainsFunc(candidates[:i], func(o usablePlan) bool { return dominates(o, u) }) ||
			slices.ContainsFunc(candidates[i+1:], func(o usablePlan) bool { return dominates(o, u) && !dominates(u, o) })
		if !dominated {
			used = append(used, u)
		}
	}
	return used
}

// nodePattern is what one node can hold: a plan (an index into the usable plans) and how many
// pods of each kind.
type nodePattern struct {
	plan int
	pods []int64
}

// patternRounds bounds the column generation; the bound is valid after any round.
const patternRounds = 200

// patternBound solves LowerBound's program by column generation. It starts from one pattern per
// kind and plan (as many pods of the kind as fit) and solves the program's dual over the patterns
// it has, which prices each kind's pods (π_s, dollars a pod). A pattern worth more at those prices
// than its plan costs would make the program cheaper: each plan's most valuable pattern is a
// small knapsack (bestPattern), and every plan's that is worth more than its price joins the
// program for the next round. π scaled down by the most any pattern is worth over its price is
// feasible for the dual of the whole program, so Σ n_s π_s over that ratio is a lower bound
// after every round, and the program's optimum once no pattern is worth more.
func patternBound(plans []usablePlan, kinds []PodKind, names []corev1.ResourceName) (float64, error) {
	requests := make([][]int64, len(kinds))
	for s, kind := range kinds {
		requests[s] = make([]int64, len(names))
		for r, name := range names {
			q := kind.Requests[name]
			requests[s][r] = q.MilliValue()
		}
	}
	rooms := make([][]int64, len(plans))
	limits := make([][]int64, len(plans))
	var patterns []nodePattern
	for p, u := range plans {
		rooms[p] = make([]int64, len(names))
		for r, name := range names {
			q := u.plan.Room[name]
			rooms[p][r] = q.MilliValue()
		}
		limits[p] = make([]int64, len(kinds))
		for s, kind := range kinds {
			limits[p][s] = min(u.perNode[s], int64(kind.N))
			if limits[p][s] > 0 {
				pods := make([]int64, len(kinds))
				pods[s] = limits[p][s]
				patterns = append(patterns, nodePattern{plan: p, pods: pods})
			}
		}
	}
	bound := 0.0
	for range patternRounds {
		prices, err := podPrices(plans, kinds, patterns)
		if err != nil {
			return 0, err
		}
		value := 0.0
		for s, kind := range kinds {
			value += float64(kind.N) * prices[s]
		}
		// worth is the most any pattern is worth over its plan's price, at least 1.
		worth := 1.0
		added := false
		for p, u := range plans {
			best := bestPattern(rooms[p], requests, limits[p], prices)
			worth = max(worth, best.most/u.plan.Price)
			if best.value > u.plan.Price*(1+1e-9) {
				patterns = append(patterns, nodePattern{plan: p, pods: best.pods})
				added = true
			}
		}
		bound = max(bound, value/worth)
		if !added {
			break
		}
	}
	return bound, nil
}

// podPrices solves the dual of LowerBound's program over the patterns: the prices π_s ≥ 0 of a
// pod of each kind that maximise Σ n_s π_s while no pattern's pods are worth more than its plan
// costs (Σ_s a_sj π_s ≤ price_j). In the standard form gonum's simplex takes, each pattern's
// inequality has a slack, and the slacks are the first basis (π = 0).
func podPrices(plans []usablePlan, kinds []PodKind, patterns []nodePattern) ([]float64, error) {
	rows, cols := len(patterns), len(kinds)+len(patterns)
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	c := make([]float64, cols)
	for s, kind := range kinds {
		c[s] = -float64(kind.N)
	}
	basis := make([]int, rows)
	for j, pattern := range patterns {
		for s, n := range pattern.pods {
			a.Set(j, s, float64(n))
		}
		a.Set(j, len(kinds)+j, 1)
		b[j] = plans[pattern.plan].plan.Price - pricePerturbation(j)
		basis[j] = len(kinds) + j
	}
	_, x, err := lp.Simplex(c, a, b, 1e-10, basis)
	if err != nil {
		return nil, fmt.Errorf("solving the bound's linear program: %w", err)
	}
	return x[:len(kinds)], nil
}

// knapsackVisits bounds bestPattern's search; past it, the pattern found is used and the
// search's upper bound stands for the most a pattern is worth.
const knapsackVisits = 200_000

// pattern is bestPattern's answer: the most valuable pattern found (its pods and value) and the
// most any pattern of the plan is worth, its value when the search was exhaustive.
type pattern struct {
	pods  []int64
	value float64
	most  float64
}

// bestPattern finds the pods worth most at the prices that fit a node with the room, no more of a
// kind than its limit: a knapsack in as many dimensions as the pods ask for, searched depth first,
// kinds worth most first, each branch cut where the room left cannot hold more than the best
// found (knapsack.upper).
func bestPattern(room []int64, requests [][]int64, limits []int64, prices []float64) pattern {
	k := &knapsack{requests: requests, limits: limits, prices: prices, pods: make([]int64, len(limits)), best: make([]int64, len(limits))}
	for s := range limits {
		if limits[s] > 0 && prices[s] > 0 {
			k.order = append(k.order, s)
		}
	}
	slices.SortFunc(k.order, func(x, y int) int { return cmp.Compare(prices[y], prices[x]) })
	free := slices.Clone(room)
	most := k.upper(0, free)
	k.search(0, free, 0)
	if k.visits < knapsackVisits {
		most = k.bestValue
	}
	return pattern{pods: k.best, value: k.bestValue, most: max(most, k.bestValue)}
}

// knapsack is bestPattern's search: the kinds' requests, limits and prices, the kinds worth
// trying in the order tried, the pods of the branch being searched, and the best pattern so far.
type knapsack struct {
	requests  [][]int64
	limits    []int64
	prices    []float64
	order     []int
	pods      []int64
	best      []int64
	bestValue float64
	visits    int
}

// search tries every count of the i-th kind in order, most first, with the room left free and
// the value of the pods taken so far, and the later kinds for each.
func (k *knapsack) search(i int, free []int64, value float64) {
	if value > k.bestValue {
		k.bestValue = value
		copy(k.best, k.pods)
	}
	if i == len(k.order) || k.visits >= knapsackVisits || value+k.upper(i, free) <= k.bestValue*(1+1e-12) {
		return
	}
	k.visits++
	s := k.order[i]
	request := k.requests[s]
	for n := k.fitting(s, free); n >= 0; n-- {
		for r := range free {
			free[r] -= n * request[r]
		}
		k.pods[s] = n
		k.search(i+1, free, value+float64(n)*k.prices[s])
		for r := range free {
			free[r] += n * request[r]
		}
	}
	k.pods[s] = 0
}

// fitting is how many pods of kind s the free room holds, within the kind's limit.
func (k *knapsack) fitting(s int, free []int64) int64 {
	n := k.limits[s]
	for r, request := range k.requests[s] {
		if request > 0 {
			n = min(n, free[r]/request)
		}
	}
	return n
}

// upper is the most the kinds from the i-th in order on can be worth in the free room: for each
// resource, the kinds that need none of it at their fill, and the others as a fractional
// knapsack of that resource alone, best value for the resource first; the least over resources.
func (k *knapsack) upper(i int, free []int64) float64 {
	kinds := k.order[i:]
	// fill is, by kind, how many pods of it the free room holds on their own.
	fill := make([]int64, len(k.limits))
	total := 0.0
	for _, s := range kinds {
		fill[s] = k.fitting(s, free)
		total += float64(fill[s]) * k.prices[s]
	}
	least := total
	byDensity := slices.Clone(kinds)
	for r := range free {
		sum, left := 0.0, float64(free[r])
		slices.SortFunc(byDensity, func(x, y int) int {
			return cmp.Compare(k.prices[y]*float64(k.requests[x][r]), k.prices[x]*float64(k.requests[y][r]))
		})
		for _, s := range byDensity {
			request := float64(k.requests[s][r])
			if request == 0 {
				sum += float64(fill[s]) * k.prices[s]
				continue
			}
			take := min(float64(fill[s]), left/request)
			sum += take * k.prices[s]
			left -= take * request
		}
		least = min(least, sum)
	}
	return least
}

// mergeIdentical counts identical pods as one kind, whichever Deployment they come from, so that
// the whole-node floor counts them together. Kinds with a per-node limit stay apart: each
// Deployment spread over hostnames is limited on its own, so two of the same pods may each put
// their maxSkew on one node.
func mergeIdentical(kinds []PodKind) []PodKind {
	var merged []PodKind
	for _, kind := range kinds {
		i := slices.IndexFunc(merged, func(m PodKind) bool {
			return m.PerNodeMost == 0 && kind.PerNodeMost == 0 &&
				equality.Semantic.DeepEqual(m.Requests, kind.Requests) && m.Requirements.String() == kind.Requirements.String()
		})
		if i < 0 {
			merged = append(merged, kind)
			continue
		}
		merged[i].N += kind.N
	}
	return merged
}

// pricePerturbation is how much the j-th pattern's price is lowered in podPrices. Patterns of one
// plan share its price, so the dual program is degenerate: at many vertices several bases
// describe one point, and gonum's simplex, which has no safeguard against a tiny pivot, can
// wander through ill-conditioned bases until a solve fails. Distinct tiny amounts separate those
// vertices. Prices the program finds under lowered plan prices are feasible for the true ones,
// so the bound stays a lower bound, lower by far less than a cent.
func pricePerturbation(j int) float64 { return 1e-9 * (1 + float64(j%97)/97) }

// PlanFleet is a fleet of nodes of one plan.
type PlanFleet struct {
	Plan  string
	Nodes int
	Price float64
}

// ErrNoPlanHoldsPods says that no single plan holds every pod.
var ErrNoPlanHoldsPods = errors.New("no plan holds every kind of pod")

// CheapestPlanFleet is the cheapest fleet of nodes of one plan that holds the pods, each plan's
// nodes filled first-fit with the pods in decreasing order (most CPU, then most memory, as core
// orders them), on the room the plan's nodes have and no more of a kind on a node than its
// per-node limit.
func CheapestPlanFleet(plans []PlanRoom, kinds []PodKind) (PlanFleet, error) {
	// Each pod by the index of its kind.
	var pods []int
	for k, kind := range kinds {
		for range kind.N {
			pods = append(pods, k)
		}
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := kinds[pods[i]].Requests, kinds[pods[j]].Requests
		if c := a.Cpu().Cmp(*b.Cpu()); c != 0 {
			return c > 0
		}
		return a.Memory().Cmp(*b.Memory()) > 0
	})
	type node struct {
		used corev1.ResourceList
		// held counts the node's pods of each kind.
		held map[int]int64
	}
	best := PlanFleet{Price: math.Inf(1)}
	for _, p := range plans {
		if slices.ContainsFunc(kinds, func(k PodKind) bool { return p.perNode(k) == 0 }) {
			continue
		}
		var nodes []node
		for _, k := range pods {
			kind := kinds[k]
			i := slices.IndexFunc(nodes, func(n node) bool {
				return (kind.PerNodeMost == 0 || n.held[k] < kind.PerNodeMost) && fitsIn(p.Room, n.used, kind.Requests)
			})
			if i < 0 {
				nodes = append(nodes, node{used: corev1.ResourceList{}, held: map[int]int64{}})
				i = len(nodes) - 1
			}
			addTo(nodes[i].used, kind.Requests)
			nodes[i].held[k]++
		}
		if price := float64(len(nodes)) * p.Price; price < best.Price {
			best = PlanFleet{Plan: p.Name, Nodes: len(nodes), Price: price}
		}
	}
	if best.Plan == "" {
		return PlanFleet{}, ErrNoPlanHoldsPods
	}
	return best, nil
}

func fitsIn(room, used, more corev1.ResourceList) bool {
	for name, q := range more {
		total := used[name].DeepCopy()
		total.Add(q)
		if total.Cmp(room[name]) > 0 {
			return false
		}
	}
	return true
}

func addTo(used, more corev1.ResourceList) {
	for name, q := range more {
		total := used[name].DeepCopy()
		total.Add(q)
		used[name] = total
	}
}
