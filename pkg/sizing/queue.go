package sizing

import (
	"cmp"
	"slices"
	"strings"
)

// podGroup is the NodePool's pending pods of one shape.
type podGroup struct {
	shape *podShape
	// pods counts the pending pods and those coming; coming only the latter.
	pods, coming int
	// deferred says that core tried to place some of the pods and could not.
	deferred bool
	// elsewhere says that, should this NodePool's plans offered not hold the pods, core would
	// place them another way this round (rankedNodePools.place), so they cannot be left to a
	// later round.
	elsewhere bool
	// members are the group's pending pods, without those coming.
	members []*pendingPod
}

// groupRun is a run of pods of one group in core's scheduling queue.
type groupRun = runOf[*podGroup]

// groupPending groups the pending pods core gives the NodePool (the pool'th of pools) by shape,
// placed the way core places them, in the order first seen, with the pods coming like them, and
// lays the groups' pods out in the order core's scheduling queue takes them (inQueueOrder).
func groupPending(pools *rankedNodePools, pool int, pending []pendingPod, coming []comingPods) ([]*podGroup, []groupRun) {
	byKey := map[string]*podGroup{}
	refused := map[string]bool{}
	// byShape are the groups by the pods' shapes, nil for those refused: pods of one shape mostly
	// share it (Policy.internShape), and finding it is cheaper than hashing its key.
	byShape := map[*podShape]*podGroup{}
	var groups []*podGroup
	queued := make([]queuedPod, 0, len(pending))
	for i := range pending {
		p := &pending[i]
		s := p.shape
		g, seen := byShape[s]
		if !seen {
			if !refused[s.key] {
				if g = byKey[s.key]; g == nil {
					if where := pools.place(s); where.pool == pool {
						g = &podGroup{shape: s.at(where.level), elsewhere: where.elsewhere}
						byKey[s.key] = g
						groups = append(groups, g)
					} else {
						refused[s.key] = true
					}
				}
			}
			byShape[s] = g
		}
		if g == nil {
			continue
		}
		g.pods++
		g.members = append(g.members, p)
		queued = append(queued, queuedPod{group: g, pod: p})
		if p.failed {
			g.deferred = true
		}
	}
	for _, c := range coming {
		if g, ok := byKey[c.shape.key]; ok {
			g.pods += c.pods
			g.coming += c.pods
		}
	}
	return groups, inQueueOrder(queued, groups)
}

// queuedPod is a pending pod of a group.
type queuedPod struct {
	group *podGroup
	pod   *pendingPod
}

// requestClass is what core's scheduling queue orders pods by first: their CPU, then memory.
type requestClass struct{ cpu, memory int64 }

func classOf(g *podGroup) requestClass { return requestClass{cpu: g.shape.cpu, memory: g.shape.memory} }

// inQueueOrder lays the groups' pods out as core's scheduling queue sorts pods: most CPU first,
// then most memory, then the oldest, then by UID. Where pods of several groups ask for the same
// CPU and memory, that order interleaves them as their workloads created them, and it decides
// which NodeClaims core fills with which: pods spread over hostnames that come first open a
// NodeClaim each, and the others then fill those. The pods still coming are created after every
// pod pending, so they end their requests' run, in the groups' order. Only such ties need the
// pods sorted; core asks often, and most groups have requests of their own.
func inQueueOrder(queued []queuedPod, groups []*podGroup) []groupRun {
	byClass := map[requestClass][]*podGroup{}
	var classes []requestClass
	ties := false
	for _, g := range groups {
		c := classOf(g)
		if byClass[c] == nil {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], g)
		ties = ties || len(byClass[c]) > 1
	}
	slices.SortFunc(classes, func(a, b requestClass) int {
		if c := cmp.Compare(b.cpu, a.cpu); c != 0 {
			return c
		}
		return cmp.Compare(b.memory, a.memory)
	})
	// Without ties, no pod need be looked at.
	tiedPods := map[requestClass][]queuedPod{}
	for i := 0; ties && i < len(queued); i++ {
		if c := classOf(queued[i].group); len(byClass[c]) > 1 {
			tiedPods[c] = append(tiedPods[c], queued[i])
		}
	}
	var runs []groupRun
	for _, c := range classes {
		tied := byClass[c]
		if len(tied) == 1 {
			runs = append(runs, groupRun{of: tied[0], pods: tied[0].pods})
			continue
		}
		pods := tiedPods[c]
		slices.SortStableFunc(pods, func(a, b queuedPod) int {
			if c := a.pod.created.Compare(b.pod.created.Time); c != 0 {
				return c
			}
			return strings.Compare(string(a.pod.uid), string(b.pod.uid))
		})
		for _, q := range pods {
			runs = appendRun(runs, groupRun{of: q.group, pods: 1})
		}
		for _, g := range tied {
			if g.coming > 0 {
				runs = appendRun(runs, groupRun{of: g, pods: g.coming})
			}
		}
	}
	return runs
}
