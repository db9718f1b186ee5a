package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

// TestLowerBoundOverTheCatalogue solves the bound for random mixes over the region's real plans,
// as the cost-random scenario does (spreads aside): the program must solve (its every inequality
// is tight at zero, which a simplex without care for degenerate vertices does not survive), and
// its value must lie between what the total requests alone force and a fleet that holds the pods.
func TestLowerBoundOverTheCatalogue(t *testing.T) {
	linode, err := startLinodeCloud(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer linode.close()
	plans := planner.PlanRooms(linode.instanceTypes, nil)
	for _, mix := range randomMixes(1, 50) {
		var kinds []planner.PodKind
		for _, d := range mix.deployments {
			kinds = append(kinds, planner.PodKind{N: d.replicas, Requirements: scheduling.NewRequirements(), Requests: corev1.ResourceList{
				corev1.ResourceCPU: *d.requests.Cpu(), corev1.ResourceMemory: *d.requests.Memory(), corev1.ResourcePods: resource.MustParse("1"),
			}})
		}
		bound, err := planner.LowerBound(plans, kinds)
		if err != nil {
			t.Fatalf("%s (%s): %v", mix.name, describeKinds(kinds), err)
		}
		fleet, err := planner.CheapestPlanFleet(plans, kinds)
		if err != nil {
			t.Fatalf("%s (%s): %v", mix.name, describeKinds(kinds), err)
		}
		if floor := totalRequestsBound(plans, kinds); bound < floor*(1-1e-6) || bound > fleet.Price*(1+1e-6) {
			t.Fatalf("%s (%s): bound $%.4f, want between $%.4f (total requests) and $%.4f (%d× %s)",
				mix.name, describeKinds(kinds), bound, floor, fleet.Price, fleet.Nodes, fleet.Plan)
		}
	}
}

// totalRequestsBound is a weaker bound than the program's: for each resource, the pods' total
// request bought at the lowest price per unit any plan offers.
func totalRequestsBound(plans []planner.PlanRoom, kinds []planner.PodKind) float64 {
	best := 0.0
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		total := 0.0
		for _, kind := range kinds {
			request := kind.Requests[name]
			total += float64(kind.N) * float64(request.MilliValue())
		}
		perUnit := math.Inf(1)
		for _, p := range plans {
			if room := p.Room[name]; room.MilliValue() > 0 {
				perUnit = min(perUnit, p.Price/float64(room.MilliValue()))
			}
		}
		best = max(best, total*perUnit)
	}
	return best
}

func describeKinds(kinds []planner.PodKind) string {
	var parts []string
	for _, kind := range kinds {
		parts = append(parts, fmt.Sprintf("%d× %s", kind.N, planner.FormatRequests(kind.Requests)))
	}
	return strings.Join(parts, ", ")
}

func TestHostnameSpreadLimit(t *testing.T) {
	mix := costMix{name: "m"}
	spread := costDeployment{name: "d", spread: true}
	pod := func(spec corev1.PodSpec, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want int64
	}{
		{"spread over hostnames", pod(mix.podSpec(spread, "pool"), mix.podLabels(spread, "pool")), 1},
		{"not spread", pod(mix.podSpec(costDeployment{name: "d"}, "pool"), mix.podLabels(spread, "pool")), 0},
		{"spread over pods it does not select", pod(mix.podSpec(spread, "pool"), map[string]string{appLabel: "other"}), 0},
		// Preferences are not limits: the bound is the cheapest fleet that honours what must hold.
		{"spread ScheduleAnyway", pod(mix.podSpec(costDeployment{name: "d", spreadAnyway: true}, "pool"), mix.podLabels(spread, "pool")), 0},
		{"preferred anti-affinity", pod(mix.podSpec(costDeployment{name: "d", softAntiAffinity: 100}, "pool"), mix.podLabels(spread, "pool")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := planner.HostnameSpreadLimit(tc.pod); got != tc.want {
				t.Fatalf("limit = %d, want %d", got, tc.want)
			}
		})
	}
}

// The overlay mix's fleet is bounded, and priced, at its NodeOverlay's prices: the discount makes
// its plan a quarter of the list price and the cheapest fleet of one plan, and lowers the bound,
// while the catalogue the other mixes are measured against keeps list prices.
func TestOverlayPricesTheBound(t *testing.T) {
	linode, err := startLinodeCloud(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer linode.close()
	mix := constrainedMixes[slices.IndexFunc(constrainedMixes, func(m costMix) bool { return m.overlay != nil })]
	listed := linode.instanceTypes
	price := func(instanceTypes []*cloudprovider.InstanceType, plan string) float64 {
		return instanceTypes[slices.IndexFunc(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == plan })].Offerings.Cheapest().Price
	}
	list := price(listed, mix.overlay.plan)
	overlaid := mix.overlaid(listed)
	if got := price(overlaid, mix.overlay.plan); math.Abs(got-list/4) > 1e-9 {
		t.Fatalf("%s at $%.4f/h under the overlay %s, want a quarter of $%.4f/h", mix.overlay.plan, got, mix.overlay.change, list)
	}
	if price(listed, mix.overlay.plan) != list {
		t.Fatal("applying the overlay changed the listed catalogue")
	}
	nodePool := &karpv1.NodePool{Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{Requirements: openNodePool.requirements}}}}
	pods := mixPods(mix, "pool")
	atList, err := mixYardsticks(listed, nodePool, mix, pods, nil)
	if err != nil {
		t.Fatal(err)
	}
	atOverlay, err := mixYardsticks(overlaid, nodePool, mix, pods, nil)
	if err != nil {
		t.Fatal(err)
	}
	if atOverlay.bound >= atList.bound || atOverlay.onePlan.Plan != mix.overlay.plan {
		t.Fatalf("under the overlay: bound $%.3f/h (at list prices $%.3f/h), cheapest fleet of one plan %d× %s; want a lower bound and %s",
			atOverlay.bound, atList.bound, atOverlay.onePlan.Nodes, atOverlay.onePlan.Plan, mix.overlay.plan)
	}
}
