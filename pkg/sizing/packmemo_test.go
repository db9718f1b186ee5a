package sizing

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRecentPacksKeepDecisions: a burst arrives pod by pod, and each decision reuses the fleets
// packed for the decisions before it. Each must be the decision packed afresh, and the later
// ones must reuse some fleets, or the memo saves nothing.
func TestRecentPacksKeepDecisions(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	template := nodeClaimTemplate("standard", "dedicated", "highmem")
	tradeoff := defaultTradeoff
	var groups []*podGroup
	for i := range 10 {
		pod := appPod(i, corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 250*(1+i%5))), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 512<<(i/3))),
		})
		if i == 4 {
			// One pod of the group a node.
			pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: pod.Labels}}}
		}
		groups = append(groups, &podGroup{shape: shapeOf(pod, false), pods: 20 + 10*i, coming: 5 * (i % 2)})
	}
	sortAsCoreQueues(groups)
	recent := newPackMemo()
	reused := 0
	for step := range 12 {
		if step > 0 {
			groups[(3*step)%len(groups)].pods++
		}
		_, fresh := decide(tradeoff, template, instanceTypes, groups, groupsInOrder(groups), nil, nil, 0, false, nil, nil)
		counted := newPackMemo()
		decide(tradeoff, template, instanceTypes, groups, groupsInOrder(groups), nil, nil, 0, false, counted, nil)
		before := len(recent.current) + len(recent.earlier)
		_, got := decide(tradeoff, template, instanceTypes, groups, groupsInOrder(groups), nil, nil, 0, false, recent, nil)
		if packed := len(recent.current) + len(recent.earlier) - before; packed < len(counted.current) {
			reused++
		}
		if got.ceiling != fresh.ceiling || got.fleet != fresh.fleet || got.cheapest != fresh.cheapest || got.cheapestCeiling != fresh.cheapestCeiling ||
			got.deferred != fresh.deferred || got.burstCeiling != fresh.burstCeiling || got.largeOnItsOwn != fresh.largeOnItsOwn {
			t.Fatalf("step %d: with recent packs %+v, packed afresh %+v", step, got, fresh)
		}
	}
	if reused < 6 {
		t.Fatalf("%d of 11 decisions after the first reused a recent pack", reused)
	}
}

// TestPackIDCoversEveryInput: a pack is reused only for the inputs it was packed from. Each case
// changes one thing pack reads and must change the ID.
func TestPackIDCoversEveryInput(t *testing.T) {
	plans := []plan{{price: 1, room: vector{110, 2000, 4}}, {price: 2, room: vector{110, 4000, 8}}}
	newShape := func() *shape {
		s := &shape{requests: vector{1, 500, 1}, plans: newBitset(2)}
		s.plans.set(0)
		s.plans.set(1)
		return s
	}
	a, b := newShape(), newShape()
	queue := []run{{of: a, pods: 3}, {of: b, pods: 2}}
	starting := []startingRoom{{plan: 1, free: vector{100, 1000, 2}}}
	id := func(plans []plan, queue []run, c ceiling, starting []startingRoom) packID {
		got, _ := packIDOf(nil, plans, queue, c, starting)
		return got
	}
	base := id(plans, queue, ceiling{top: 1}, starting)
	if id(plans, []run{{of: a, pods: 3}, {of: b, pods: 2}}, ceiling{top: 1}, starting) != base {
		t.Fatal("the same inputs give another ID")
	}
	dearer := []plan{plans[0], {price: 2.5, room: plans[1].room}}
	bigger := []plan{plans[0], {price: 2, room: vector{110, 4000, 16}}}
	spread := newShape()
	spread.perNode, spread.group = 1, "default/spread/app=a"
	otherGroup := newShape()
	otherGroup.perNode, otherGroup.group = 1, "default/spread/app=b"
	onePlan := newShape()
	onePlan.plans = newBitset(2)
	onePlan.plans.set(1)
	larger := newShape()
	larger.requests = vector{1, 600, 1}
	for name, changed := range map[string]packID{
		"a plan's price":                    id(dearer, queue, ceiling{top: 1}, starting),
		"a plan's room":                     id(bigger, queue, ceiling{top: 1}, starting),
		"the ceiling":                       id(plans, queue, ceiling{top: 0}, starting),
		"the ceiling offering a plan alone": id(plans, queue, ceiling{top: 1, sole: true}, starting),
		"no starting node":                  id(plans, queue, ceiling{top: 1}, nil),
		"a starting node's free room":       id(plans, queue, ceiling{top: 1}, []startingRoom{{plan: 1, free: vector{100, 900, 2}}}),
		"a run's pods":                      id(plans, []run{{of: a, pods: 4}, {of: b, pods: 2}}, ceiling{top: 1}, starting),
		"one shape where there were two":    id(plans, []run{{of: a, pods: 3}, {of: a, pods: 2}}, ceiling{top: 1}, starting),
		"a shape's requests":                id(plans, []run{{of: a, pods: 3}, {of: larger, pods: 2}}, ceiling{top: 1}, starting),
		"a shape's plans":                   id(plans, []run{{of: a, pods: 3}, {of: onePlan, pods: 2}}, ceiling{top: 1}, starting),
		"a shape's spread":                  id(plans, []run{{of: a, pods: 3}, {of: spread, pods: 2}}, ceiling{top: 1}, starting),
	} {
		if changed == base {
			t.Errorf("%s changed, the ID did not", name)
		}
	}
	if id(plans, []run{{of: spread, pods: 3}}, ceiling{top: 1}, nil) == id(plans, []run{{of: otherGroup, pods: 3}}, ceiling{top: 1}, nil) {
		t.Error("shapes spread over different groups have the same ID")
	}
}

// TestTheSameDecisionPacksNothingNew: asked again with nothing changed (as core asks every
// provisioning round and disruption pass), a decision finds every fleet it needs among the recent
// packs. Resources are numbered in the same order each time, whatever order Go's maps are read
// in; with another order the same pods make other vectors, other pack keys and misses.
func TestTheSameDecisionPacksNothingNew(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	template := nodeClaimTemplate("standard", "dedicated", "highmem")
	var groups []*podGroup
	for i := range 6 {
		pod := appPod(i, corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 500*(1+i))), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 1+i%3)),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
		})
		groups = append(groups, &podGroup{shape: shapeOf(pod, false), pods: 10 + 5*i})
	}
	sortAsCoreQueues(groups)
	recent := newPackMemo()
	decide(defaultTradeoff, template, instanceTypes, groups, groupsInOrder(groups), nil, nil, 0, false, recent, nil)
	for ask := range 10 {
		before := len(recent.current) + len(recent.earlier)
		decide(defaultTradeoff, template, instanceTypes, groups, groupsInOrder(groups), nil, nil, 0, false, recent, nil)
		if packed := len(recent.current) + len(recent.earlier) - before; packed > 0 {
			t.Fatalf("asked again (%d) with nothing changed, the decision packed %d fleets afresh", ask+1, packed)
		}
	}
}

// sortAsCoreQueues puts groups in core's queue order: most CPU, then most memory first.
func sortAsCoreQueues(groups []*podGroup) {
	slices.SortStableFunc(groups, func(a, b *podGroup) int {
		return cmp.Or(cmp.Compare(b.shape.cpu, a.shape.cpu), cmp.Compare(b.shape.memory, a.shape.memory))
	})
}

// appPod is a pod of app i asking for requests.
func appPod(i int, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Labels: map[string]string{"app": fmt.Sprint(i)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: requests}}}}}
}
