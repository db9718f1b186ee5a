package sizing

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// BenchmarkDecide is what a change in a NodePool's pending pods costs: the demand described
// over us-ord's plans and the ceiling chosen, for 1,000 pods of a web tier's three sizes and a
// pod that needs a 48-vCPU plan (so that a later round is simulated too).
func BenchmarkDecide(b *testing.B) {
	instanceTypes := usOrdPlans(b)
	template := nodeClaimTemplate("standard", "dedicated", "highmem")
	// In core's queue order: most CPU first.
	var groups []*podGroup
	for _, g := range []struct {
		pods        int
		cpu, memory string
	}{{1, "40", "64Gi"}, {99, "1", "2Gi"}, {300, "500m", "1Gi"}, {600, "250m", "512Mi"}} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(g.cpu), corev1.ResourceMemory: resource.MustParse(g.memory),
		}}}}}}
		groups = append(groups, &podGroup{shape: shapeOf(pod, false), pods: g.pods})
	}
	tradeoff := defaultTradeoff
	b.ReportAllocs()
	for b.Loop() {
		d := nodePoolDemand(template, instanceTypes, groups, groupsInOrder(groups), nil, nil)
		decision := d.choose(tradeoff, 0, false)
		if decision.fleet.nodes == 0 {
			b.Fatalf("no fleet: %+v", decision)
		}
	}
}

// usOrdPlans are the instance types of us-ord's plans, as the emulator serves them.
func usOrdPlans(tb testing.TB) []*cloudprovider.InstanceType {
	tb.Helper()
	e := emulator.New(emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	if err := e.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	provider := instancetype.NewDefaultProvider(e.NewClient(), "us-ord", mode.LKE, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL))
	ctx := context.Background()
	if err := provider.UpdateCatalogue(ctx); err != nil {
		tb.Fatal(err)
	}
	instanceTypes, err := provider.List(ctx, &v1.LinodeNodeClass{})
	if err != nil {
		tb.Fatal(err)
	}
	return instanceTypes
}

// defaultTradeoff is the policy's trade-off at the chart's default settings.
var defaultTradeoff = Tradeoff{LargeFleetNodes: options.DefaultSizingLargeFleetNodes, Tolerance: float64(options.DefaultSizingTolerancePercent) / 100}

// nodeClaimTemplate is a NodePool's template allowing the plan classes.
func nodeClaimTemplate(classes ...string) *corescheduling.NodeClaimTemplate {
	return corescheduling.NewNodeClaimTemplate(&karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.linode", Kind: "LinodeNodeClass", Name: "default"},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: classes},
			},
		}}},
	})
}

// BenchmarkJointFleet is what the round's simulation over several NodePools adds to a change in
// the pending pods, once each NodePool's ceiling is chosen: 1,000 pods over a NodePool of small
// standard plans, the default one and a premium fallback, as in the differential mixes, where
// the small NodePool's pods join the default's NodeClaims.
func BenchmarkJointFleet(b *testing.B) {
	instanceTypes := usOrdPlans(b)
	tradeoff := defaultTradeoff
	group := func(pods int, cpu, memory string, classes ...string) *podGroup {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}}}}}
		if len(classes) > 0 {
			pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: classes}}}},
			}}}
		}
		return &podGroup{shape: shapeOf(pod, false), pods: pods}
	}
	pools := []*roundPool{
		{name: "default", template: nodeClaimTemplate("standard", "dedicated", "highmem"), groups: []*podGroup{group(1, "40", "64Gi"), group(99, "6", "12Gi")}},
		{name: "small", template: nodeClaimTemplate("standard"), groups: []*podGroup{group(600, "250m", "512Mi")}},
		{name: "fallback", template: nodeClaimTemplate("premium", "dedicated"), groups: []*podGroup{group(300, "500m", "1Gi", "premium")}},
	}
	for _, r := range pools {
		r.priced, r.queue = instanceTypes, groupsInOrder(r.groups)
		r.sizedAlone(tradeoff, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		if f := newJointRound(pools, nil).fleet(pools[0].sized.decision.ceiling, pools[0].sized.decision.fleet); f.nodes == 0 {
			b.Fatalf("no fleet: %+v", f)
		}
	}
}

// BenchmarkDistinctShapes is what a change in the pending pods costs when no two pods share a
// shape, at 1k, 2k, 4k, 6k and 8k pods: the pods grouped by shape and placed on the NodePool as core
// would (groupPending), the demand described and the ceiling chosen. Pods that anyone may create
// set the shapes, so the time must grow no faster than n log n in them.
func BenchmarkDistinctShapes(b *testing.B) {
	instanceTypes := usOrdPlans(b)
	template := nodeClaimTemplate("standard", "dedicated", "highmem")
	tradeoff := defaultTradeoff
	for _, n := range []int{1000, 2000, 4000, 6000, 8000} {
		b.Run(fmt.Sprintf("shapes=%d", n), func(b *testing.B) {
			pending := distinctPendingPods(n)
			b.ReportAllocs()
			for b.Loop() {
				pools := &rankedNodePools{
					pools:         []rankedNodePool{{name: "default", template: template, taints: hardTaints(template)}},
					instanceTypes: instanceTypes, rooms: map[[2]int]corev1.ResourceList{}, placements: map[string]placement{},
				}
				groups, queue := groupPending(pools, 0, pending, nil)
				_, decision := decide(tradeoff, template, instanceTypes, groups, queue, nil, nil, 0, false, nil, nil)
				if decision.fleet.nodes == 0 {
					b.Fatalf("no fleet: %+v", decision)
				}
			}
		})
	}
}

// distinctPendingPods are n pending pods, each of a shape of its own: CPU from 50m to 4 vCPUs and
// memory from 64 MiB to 8 GiB, in the order a cluster's pods arrive.
func distinctPendingPods(n int) []pendingPod {
	pods := make([]pendingPod, n)
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range pods {
		cpu := 50 + (i*7919)%3950
		memory := 64 + (i*104729)%8128
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", cpu)),
			corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", memory+i%7)),
		}}}}}}
		pods[i] = pendingPod{
			key: types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("pod-%05d", i)}, shape: shapeOf(pod, false),
			created: metav1.NewTime(created.Add(time.Duration(i) * time.Millisecond)), uid: types.UID(fmt.Sprintf("uid-%05d", i)),
		}
	}
	return pods
}
