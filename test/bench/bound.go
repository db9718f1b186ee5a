package bench

import (
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

// boundPlan is a plan a mix may run on, as the bound and the single-plan fleet see it: its
// price and the room a node of it has for the mix's pods, its allocatable resources as our
// instance types report them less what the mix's DaemonSets ask for on every node.
type boundPlan struct {
	name  string
	price float64
	room  corev1.ResourceList
	// requirements are the plan's labels, which a pod's node requirements must allow.
	requirements scheduling.Requirements
}

// podCount is n identical pods.
type podCount struct {
	n            int
	requests     corev1.ResourceList
	requirements scheduling.Requirements
	// perNodeMost is the most of them one node may hold whatever its room, 0 for no such limit:
	// see hostnameSpreadLimit.
	perNodeMost int64
}

// boundPlans are the instance types with an available offering, priced at their cheapest, with
// room after the overhead.
func boundPlans(instanceTypes []*cloudprovider.InstanceType, overhead corev1.ResourceList) []boundPlan {
	var plans []boundPlan
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
		plans = append(plans, boundPlan{name: it.Name, price: offering.Price, room: room, requirements: it.Requirements})
	}
	return plans
}

// perNode is how many pods of the kind alone fit on a node of the plan, at most the kind's
// per-node limit: 0 when the plan's labels do not allow them.
func (p boundPlan) perNode(pods podCount) int64 {
	if p.requirements.Intersects(pods.requirements) != nil {
		return 0
	}
	most := int64(math.MaxInt64)
	for name, request := range pods.requests {
		if request.IsZero() {
			continue
		}
		room := p.room[name]
		most = min(most, room.MilliValue()/request.MilliValue())
	}
	if pods.perNodeMost > 0 {
		most = min(most, pods.perNodeMost)
	}
	return max(most, 0)
}

// lowerBound is the least an hourly fleet can cost for the pods, from a linear program no real
// fleet can beat. Its variables are x_p, the number of nodes of plan p, and y_sp, the pods of
// kind s on nodes of plan p:
//
//	minimize    Σ_p price_p x_p
//	subject to  Σ_p y_sp = n_s                           every pod runs somewhere
//	            Σ_s request_sr y_sp ≤ room_pr x_p        for each resource r: cpu, memory, pods, GPUs, ...
//	            y_sp ≤ ⌊k_sp⌋ x_p                         k_sp: pods of kind s alone that fit one node of p,
//	                                                      at most the kind's per-node limit
//	            x, y ≥ 0
//
// Any real fleet, with whole nodes and whole pods, satisfies every constraint: the last holds
// because a node of p never takes more pods of kind s than ⌊k_sp⌋, whatever else it holds. It
// is still a relaxation (nodes may be fractional), so it is a lower bound. Without the last
// constraint a plan rich in CPU could lend CPU to one rich in memory, and the bound would say
// little; with it, for one kind of pod the bound is n · min_p price_p / ⌊k_p⌋.
//
// Where that is less than whole nodes, no fleet reaches it, so the bound is at least what whole
// nodes cost for each kind alone: n_s pods need ⌈n_s / max_p ⌊k_sp⌋⌉ nodes, each at least the
// cheapest plan that holds one (one 100m pod: a whole g6-standard-1, not a fraction of one).
func lowerBound(plans []boundPlan, kinds []podCount) (float64, error) {
	kinds = mergeIdentical(kinds)
	if len(kinds) == 0 {
		return 0, nil
	}
	// The resources the pods ask for; others do not constrain them.
	var names []corev1.ResourceName
	for _, kind := range kinds {
		for name, q := range kind.requests {
			if !q.IsZero() && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	// Plans some kind fits, and the kinds' node limits on them. A plan another plan dominates (no
	// cheaper, no more room in what the pods ask for, takes no kind the other does not) is left
	// out: moving its pods and nodes to the other never costs more, so the optimum is the same,
	// and the smaller program is better conditioned.
	type usable struct {
		plan    boundPlan
		perNode []int64
	}
	var candidates []usable
	for _, p := range plans {
		u := usable{plan: p, perNode: make([]int64, len(kinds))}
		any := false
		for s, kind := range kinds {
			u.perNode[s] = p.perNode(kind)
			any = any || u.perNode[s] > 0
		}
		if any {
			candidates = append(candidates, u)
		}
	}
	dominates := func(a, b usable) bool {
		if a.plan.price > b.plan.price {
			return false
		}
		for s := range kinds {
			if b.perNode[s] > 0 && a.perNode[s] == 0 {
				return false
			}
		}
		for _, name := range names {
			if a.plan.room.Name(name, resource.DecimalSI).Cmp(*b.plan.room.Name(name, resource.DecimalSI)) < 0 {
				return false
			}
		}
		return true
	}
	var used []usable
	for i, u := range candidates {
		dominated := slices.ContainsFunc(candidates[:i], func(o usable) bool { return dominates(o, u) }) ||
			slices.ContainsFunc(candidates[i+1:], func(o usable) bool { return dominates(o, u) && !dominates(u, o) })
		if !dominated {
			used = append(used, u)
		}
	}
	for s, kind := range kinds {
		if !slices.ContainsFunc(used, func(u usable) bool { return u.perNode[s] > 0 }) {
			return 0, fmt.Errorf("no plan holds a pod of %s", formatRequests(kind.requests))
		}
	}

	// Columns: x_p, then each usable y_sp as the share of kind s on plan p (y_sp / n_s, so that
	// every column is of a similar scale), then a slack per inequality.
	type yVar struct{ s, p int }
	var ys []yVar
	for p, u := range used {
		for s := range kinds {
			if u.perNode[s] > 0 {
				ys = append(ys, yVar{s, p})
			}
		}
	}
	nx, ny := len(used), len(ys)
	resourceRows := nx * len(names)
	inequalities := resourceRows + ny
	rows, cols := len(kinds)+inequalities, nx+ny+inequalities
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	c := make([]float64, cols)
	for p, u := range used {
		c[p] = u.plan.price
	}
	for s := range kinds {
		b[s] = 1
	}
	for j, y := range ys {
		a.Set(y.s, nx+j, 1)
	}
	// Each resource row is scaled by the largest room any plan has of the resource, so that
	// millicores, bytes and pod counts weigh alike.
	scale := make([]float64, len(names))
	for _, u := range used {
		for r, name := range names {
			room := u.plan.room[name]
			scale[r] = max(scale[r], float64(room.MilliValue()))
		}
	}
	resourceRow := func(p, r int) int { return len(kinds) + p*len(names) + r }
	limitRow := func(j int) int { return len(kinds) + resourceRows + j }
	for p, u := range used {
		for r, name := range names {
			room := u.plan.room[name]
			a.Set(resourceRow(p, r), p, -float64(room.MilliValue())/scale[r])
		}
	}
	for j, y := range ys {
		n := float64(kinds[y.s].n)
		for r, name := range names {
			request := kinds[y.s].requests[name]
			a.Set(resourceRow(y.p, r), nx+j, n*float64(request.MilliValue())/scale[r])
		}
		a.Set(limitRow(j), y.p, -1)
		a.Set(limitRow(j), nx+j, n/float64(used[y.p].perNode[y.s]))
	}
	for i := range inequalities {
		a.Set(len(kinds)+i, nx+ny+i, 1)
		b[len(kinds)+i] = slackPerturbation(i)
	}

	// A first feasible vertex, which spares the simplex its first phase: every pod of a kind on
	// the plan cheapest per pod for it, each used plan with the nodes its tightest row needs. The
	// basis is those shares, those node counts, and the slack of every other row.
	share := make([]int, len(kinds))
	for s := range kinds {
		best := math.Inf(1)
		for j, y := range ys {
			if y.s == s {
				if cost := used[y.p].plan.price / float64(used[y.p].perNode[s]); cost < best {
					best, share[s] = cost, j
				}
			}
		}
	}
	x := make([]float64, cols)
	for _, j := range share {
		x[nx+j] = 1
	}
	binding := map[int]int{}
	for p := range nx {
		need, tight := 0.0, -1
		for i := range inequalities {
			row := len(kinds) + i
			coefficient := -a.At(row, p)
			if coefficient <= 0 {
				continue
			}
			load := -b[row]
			for j := range ny {
				load += a.At(row, nx+j) * x[nx+j]
			}
			if load > 0 && load/coefficient > need {
				need, tight = load/coefficient, row
			}
		}
		if tight >= 0 {
			x[p], binding[tight] = need, p
		}
	}
	var basis []int
	for _, j := range share {
		basis = append(basis, nx+j)
	}
	for p := range nx {
		if x[p] > 0 {
			basis = append(basis, p)
		}
	}
	for i := range inequalities {
		if _, ok := binding[len(kinds)+i]; !ok {
			basis = append(basis, nx+ny+i)
		}
	}
	price, _, err := lp.Simplex(c, a, b, 1e-10, basis)
	if err != nil {
		return 0, fmt.Errorf("solving the bound's linear program: %w", err)
	}
	// The program counts fractions of nodes, so for a few small pods it asks for a share of one
	// node; no fleet runs on a share.
	for s, kind := range kinds {
		most, cheapest := int64(0), math.Inf(1)
		for _, u := range used {
			if u.perNode[s] > 0 {
				most, cheapest = max(most, u.perNode[s]), min(cheapest, u.plan.price)
			}
		}
		// The pods of the kind need at least this many whole nodes, each a plan that holds one.
		nodes := (int64(kind.n) + most - 1) / most
		price = max(price, float64(nodes)*cheapest)
	}
	return price, nil
}

// mergeIdentical counts identical pods as one kind, whichever Deployment they come from. The
// per-node limits are per kind: two kinds of the same pods could each take ⌊k⌋ of a node's
// pods, and the program would fill a node with more of them than fit whole. Kinds with a per-node
// limit stay apart: each Deployment spread over hostnames is limited on its own, so two of the
// same pods may each put their maxSkew on one node.
func mergeIdentical(kinds []podCount) []podCount {
	var merged []podCount
	for _, kind := range kinds {
		i := slices.IndexFunc(merged, func(m podCount) bool {
			return m.perNodeMost == 0 && kind.perNodeMost == 0 &&
				equality.Semantic.DeepEqual(m.requests, kind.requests) && m.requirements.String() == kind.requirements.String()
		})
		if i < 0 {
			merged = append(merged, kind)
			continue
		}
		merged[i].n += kind.n
	}
	return merged
}

// slackPerturbation is how far inequality i of the bound's program may be exceeded. Every
// inequality holds with equality at zero (no nodes, no pods), so the program is degenerate: at
// most vertices several bases describe one point, and gonum's simplex, which has no safeguard
// against a tiny pivot, wanders through ill-conditioned bases until a solve fails. Distinct tiny
// right-hand sides separate those vertices. They relax the constraints, so the optimum can only
// fall, by about the perturbation times the dual prices: far below a cent, and still a lower bound.
func slackPerturbation(i int) float64 { return 1e-9 * (1 + float64(i%97)/97) }

// planFleet is a fleet of nodes of one plan.
type planFleet struct {
	plan  string
	nodes int
	price float64
}

// errNoPlanHoldsPods says that no single plan holds every pod of a mix.
var errNoPlanHoldsPods = errors.New("no plan holds every kind of pod of the mix")

// cheapestPlanFleet is the cheapest fleet of nodes of one plan that holds the pods, each plan's
// nodes filled first-fit with the pods in decreasing order (most CPU, then most memory, as core
// orders them), on the room the plan's nodes have and no more of a kind on a node than its
// per-node limit.
func cheapestPlanFleet(plans []boundPlan, kinds []podCount) (planFleet, error) {
	// Each pod by the index of its kind.
	var pods []int
	for k, kind := range kinds {
		for range kind.n {
			pods = append(pods, k)
		}
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := kinds[pods[i]].requests, kinds[pods[j]].requests
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
	best := planFleet{price: math.Inf(1)}
	for _, p := range plans {
		if slices.ContainsFunc(kinds, func(k podCount) bool { return p.perNode(k) == 0 }) {
			continue
		}
		var nodes []node
		for _, k := range pods {
			kind := kinds[k]
			i := slices.IndexFunc(nodes, func(n node) bool {
				return (kind.perNodeMost == 0 || n.held[k] < kind.perNodeMost) && fitsIn(p.room, n.used, kind.requests)
			})
			if i < 0 {
				nodes = append(nodes, node{used: corev1.ResourceList{}, held: map[int]int64{}})
				i = len(nodes) - 1
			}
			addTo(nodes[i].used, kind.requests)
			nodes[i].held[k]++
		}
		if price := float64(len(nodes)) * p.price; price < best.price {
			best = planFleet{plan: p.name, nodes: len(nodes), price: price}
		}
	}
	if best.plan == "" {
		return planFleet{}, errNoPlanHoldsPods
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
