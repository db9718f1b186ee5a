package planner

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// testPlan is a plan with CPU, memory and the kubelet's 110 pods as room.
func testPlan(name string, price float64, cpu, memory string) PlanRoom {
	return PlanRoom{Name: name, Price: price, Requirements: scheduling.NewRequirements(), Room: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110"),
	}}
}

// testPods are n pods of the requests, each counting one pod.
func testPods(n int, cpu, memory string) PodKind {
	return PodKind{N: n, Requirements: scheduling.NewRequirements(), Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("1"),
	}}
}

// spreadOverHostnames are the pods, at most most of them a node.
func spreadOverHostnames(pods PodKind, most int64) PodKind {
	pods.PerNodeMost = most
	return pods
}

func TestLowerBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plans []PlanRoom
		kinds []PodKind
		want  float64
	}{
		{
			// 3 pods to a small node ($0.024 a pod), 47 to a big one ($0.02757 a pod): the program
			// takes 10/3 small nodes ($0.24), a fleet four ($0.288).
			name:  "one kind: whole nodes of the cheapest plan per pod",
			plans: []PlanRoom{testPlan("small", 0.072, "3920m", "6Gi"), testPlan("big", 1.296, "47810m", "86Gi")},
			kinds: []PodKind{testPods(10, "1", "1Gi")},
			want:  4 * 0.072,
		},
		{
			// Eight pods, 3 to a $3 node or 5 to a $4 one: one of each ($7) beats two of the
			// second ($8) or three of the first ($9); the program alone says 8 × $0.80.
			name:  "one kind: whole nodes of two plans",
			plans: []PlanRoom{testPlan("three", 3, "3", "64Gi"), testPlan("five", 4, "5", "64Gi")},
			kinds: []PodKind{testPods(8, "1", "1Gi")},
			want:  7,
		},
		{
			// A CPU-heavy and a memory-heavy kind on a CPU-rich and a memory-rich plan: each kind
			// fits two to a node of one plan and none on the other, so the bound is four nodes,
			// $4. Summing allocatable over the fleet would let the plans lend each other CPU and
			// memory and give $3.13.
			name:  "no plan lends another what it has spare",
			plans: []PlanRoom{testPlan("cpu-rich", 1, "8", "4Gi"), testPlan("memory-rich", 1, "2", "32Gi")},
			kinds: []PodKind{testPods(4, "4", "1Gi"), testPods(4, "1", "8Gi")},
			want:  4,
		},
		{
			// The big pod needs one 8-CPU node; its 2 spare CPUs take two small pods. The two
			// others would cost $0.125 each eight to an 8-CPU node, but there are only four small
			// pods, so such a node holds at most four ($0.25 each): a 1-CPU node each ($0.2) is
			// cheaper. $1.40, the cheapest fleet; over resources alone, $1.25.
			name:  "small pods use the room a big pod leaves",
			plans: []PlanRoom{testPlan("eight", 1, "8", "64Gi"), testPlan("one", 0.2, "1", "8Gi")},
			kinds: []PodKind{testPods(1, "6", "1Gi"), testPods(4, "1", "1Gi")},
			want:  1.4,
		},
		{
			// A 600m pod and two 500m pods on 1-CPU nodes: no node holds the 600m pod with a
			// 500m one, so two nodes. Over resources alone the 1.6 CPUs asked for would fill 1.6
			// nodes.
			name:  "pods do not straddle nodes",
			plans: []PlanRoom{testPlan("one", 1, "1", "8Gi")},
			kinds: []PodKind{testPods(1, "600m", "1Gi"), testPods(2, "500m", "1Gi")},
			want:  2,
		},
		{
			// 57.5 CPUs of 250m, 500m and 1-CPU pods on 6-CPU nodes with 5.915 CPUs of room: a
			// node holds 5.75 CPUs of them at most, so ten nodes. Over resources alone, 9.72.
			name:  "room smaller than any pod is not counted",
			plans: []PlanRoom{testPlan("six", 0.144, "5915m", "64Gi")},
			kinds: []PodKind{testPods(90, "250m", "512Mi"), testPods(40, "500m", "1Gi"), testPods(15, "1", "2Gi")},
			want:  1.44,
		},
		{
			// Two Deployments of five identical pods, three to a node: ten pods need four whole
			// nodes. Counted apart, each Deployment's five need two, and the program 3⅓ for all.
			name:  "identical pods count as one kind",
			plans: []PlanRoom{testPlan("three", 1, "3920m", "6Gi")},
			kinds: []PodKind{testPods(5, "1", "1Gi"), testPods(5, "1", "1Gi")},
			want:  4,
		},
		{
			// Nine such pods fit the small plan: the program would take a ninth of one, a fleet a
			// whole one.
			name:  "one small pod takes a whole node",
			plans: []PlanRoom{testPlan("small", 0.018, "940m", "1400Mi"), testPlan("big", 0.5, "16", "32Gi")},
			kinds: []PodKind{testPods(1, "100m", "128Mi")},
			want:  0.018,
		},
		{
			// Six 3-CPU pods, five to a node of the only plan that holds them: the program takes
			// 1.2 nodes ($0.6), a fleet two.
			name:  "the pods of a kind take whole nodes",
			plans: []PlanRoom{testPlan("small", 0.018, "940m", "1400Mi"), testPlan("big", 0.5, "16", "32Gi")},
			kinds: []PodKind{testPods(6, "3", "1Gi")},
			want:  1,
		},
		{
			// One to a node, as core places pods spread over hostnames: four nodes of the plan
			// cheapest per node, where room alone would put them on half a big one ($1.50).
			name:  "pods spread over hostnames take a node each",
			plans: []PlanRoom{testPlan("two", 1, "2", "8Gi"), testPlan("eight", 3, "8", "32Gi")},
			kinds: []PodKind{spreadOverHostnames(testPods(4, "1", "1Gi"), 1)},
			want:  4,
		},
		{
			// The two spread pods need two nodes; the other two, identical but not spread, fill
			// the room beside them and are not counted one to a node with them.
			name:  "other pods share the spread pods' nodes",
			plans: []PlanRoom{testPlan("two", 1, "2", "8Gi")},
			kinds: []PodKind{spreadOverHostnames(testPods(2, "1", "1Gi"), 1), testPods(2, "1", "1Gi")},
			want:  2,
		},
		{
			// Two Deployments of the same pods, each spread over hostnames on its own: a node
			// holds one of each, so two nodes, not one for every pod.
			name:  "two spreads of the same pods share nodes",
			plans: []PlanRoom{testPlan("two", 1, "2", "8Gi")},
			kinds: []PodKind{spreadOverHostnames(testPods(2, "1", "1Gi"), 1), spreadOverHostnames(testPods(2, "1", "1Gi"), 1)},
			want:  2,
		},
		{
			// 330 pods, 110 to a node whatever their size.
			name:  "the pod limit binds",
			plans: []PlanRoom{testPlan("one", 0.018, "940m", "1400Mi")},
			kinds: []PodKind{testPods(330, "5m", "8Mi")},
			want:  3 * 0.018,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LowerBound(tc.plans, tc.kinds)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-6 {
				t.Fatalf("bound = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLowerBoundNeedsAPlanForEveryKind(t *testing.T) {
	if _, err := LowerBound([]PlanRoom{testPlan("small", 1, "2", "4Gi")}, []PodKind{testPods(1, "4", "1Gi")}); err == nil {
		t.Fatal("a pod no plan holds got a bound")
	}
}

func TestCheapestPlanFleet(t *testing.T) {
	// First-fit decreasing: the 3-CPU pods open two 4-CPU nodes and the 1-CPU pods fill them;
	// on the 8-CPU plan all four fit one node, which costs more than two small ones.
	plans := []PlanRoom{testPlan("four", 1, "4", "16Gi"), testPlan("eight", 2.5, "8", "32Gi")}
	fleet, err := CheapestPlanFleet(plans, []PodKind{testPods(2, "1", "1Gi"), testPods(2, "3", "1Gi")})
	if err != nil {
		t.Fatal(err)
	}
	if fleet.Plan != "four" || fleet.Nodes != 2 || math.Abs(fleet.Price-2) > 1e-9 {
		t.Fatalf("fleet = %+v, want 2× four at $2", fleet)
	}
	// Pods spread over hostnames one to a node: three 1-CPU pods open three nodes, on which the
	// two others fit; without the limit two nodes hold all five.
	spread := []PodKind{spreadOverHostnames(testPods(3, "1", "1Gi"), 1), testPods(2, "1", "1Gi")}
	if fleet, err = CheapestPlanFleet(plans, spread); err != nil || fleet.Plan != "four" || fleet.Nodes != 3 {
		t.Fatalf("fleet = %+v (%v), want 3× four", fleet, err)
	}
	if fleet, err = CheapestPlanFleet(plans, WithoutPerNodeLimits(spread)); err != nil || fleet.Plan != "four" || fleet.Nodes != 2 {
		t.Fatalf("fleet = %+v (%v), want 2× four", fleet, err)
	}
	// A plan that cannot hold every kind does not count.
	if _, err := CheapestPlanFleet(plans[:1], []PodKind{testPods(1, "6", "1Gi")}); err == nil {
		t.Fatal("a fleet of a plan too small for a pod")
	}
}
