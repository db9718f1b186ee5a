package sizing

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// shapesConsidered is the most groups of pods a NodePool's simulation tells apart. A pack tries
// the bins for each shape's first pod and the reaches of each shape's plans, and a decision packs
// about a hundred times, so its time grows with the shapes; anyone who may create pods sets how
// many there are. Past this many, groupPending merges groups of similar sizes (mergeSimilar).
// The usual mixes have a few dozen shapes and are never merged.
const shapesConsidered = 256

// mergeSimilar merges groups whose pods may run on the same plans and NodePools (the same
// podShape.constraints, placed the same way) and whose requests are close, until at most
// shapesConsidered groups are left or only groups of different constraints are: requests are
// rounded up to a grid of ratios that widens until few enough groups remain, and a merged group
// asks, in each resource, for the most any of its pods asks for. The simulation then sizes for a
// little more than the pods ask, never less. The queue keeps its order, run for run.
func mergeSimilar(groups []*podGroup, queue []groupRun) ([]*podGroup, []groupRun) {
	if len(groups) <= shapesConsidered {
		return groups, queue
	}
	// A step of 1/8 octave merges requests within 9% of each other; each try doubles it.
	var buckets map[string][]*podGroup
	var order []string
	for step := 1.0 / 8; ; step *= 2 {
		buckets, order = bucketsOf(groups, step)
		if len(order) <= shapesConsidered || step >= 8 {
			break
		}
	}
	merged := make(map[*podGroup]*podGroup, len(groups))
	out := make([]*podGroup, 0, len(order))
	for _, key := range order {
		members := buckets[key]
		g := mergeGroups(members)
		out = append(out, g)
		for _, m := range members {
			merged[m] = g
		}
	}
	runs := make([]groupRun, 0, len(queue))
	for _, r := range queue {
		runs = appendRun(runs, groupRun{of: merged[r.of], pods: r.pods})
	}
	return out, runs
}

// bucketsOf puts the groups into buckets of the same constraints and placement whose requests
// round up to the same multiples of step octaves; order lists the buckets as their first groups
// come.
func bucketsOf(groups []*podGroup, step float64) (map[string][]*podGroup, []string) {
	buckets := map[string][]*podGroup{}
	var order []string
	var key strings.Builder
	for _, g := range groups {
		key.Reset()
		fmt.Fprintf(&key, "%s#%t#", g.shape.constraints, g.elsewhere)
		for _, name := range slices.Sorted(maps.Keys(g.shape.requests)) {
			quantity := g.shape.requests[name]
			fmt.Fprintf(&key, "%s=%d,", name, roundedUp(quantity.MilliValue(), step))
		}
		k := key.String()
		if _, ok := buckets[k]; !ok {
			order = append(order, k)
		}
		buckets[k] = append(buckets[k], g)
	}
	return buckets, order
}

// roundedUp is the multiple of step octaves that amount (in millis) rounds up to.
func roundedUp(amount int64, step float64) int64 {
	if amount <= 0 {
		return math.MinInt64
	}
	return int64(math.Ceil(math.Log2(float64(amount)) / step))
}

// mergeGroups is one group of the groups' pods, asking for the most any of them asks for.
func mergeGroups(members []*podGroup) *podGroup {
	if len(members) == 1 {
		return members[0]
	}
	requests := corev1.ResourceList{}
	g := &podGroup{elsewhere: members[0].elsewhere}
	for _, m := range members {
		for name, quantity := range m.shape.requests {
			if most, ok := requests[name]; !ok || quantity.Cmp(most) > 0 {
				requests[name] = quantity
			}
		}
		g.pods += m.pods
		g.coming += m.coming
		g.deferred = g.deferred || m.deferred
		g.members = append(g.members, m.members...)
	}
	g.shape = members[0].shape.asking(requests)
	return g
}

// asking is the shape with other requests.
func (s *podShape) asking(requests corev1.ResourceList) *podShape {
	out := *s
	out.requests = requests
	out.cpu, out.memory = requests.Cpu().MilliValue(), requests.Memory().MilliValue()
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		quantity := requests[name]
		fmt.Fprintf(&key, "%s=%s,", name, quantity.String())
	}
	key.WriteString(s.constraints)
	out.key = key.String()
	return &out
}
