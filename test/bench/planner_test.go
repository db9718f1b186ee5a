package bench

import (
	"context"
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// TestPlannerPlansTheCostMixes: for each of the cost mixes on the README's NodePools, the
// planner of `karpenter-linode plan`, with the catalogue the emulator serves (the mix's GPU plans
// in stock), plans the fleet that the controller's cloud provider launches against the emulator
// (provisionInProcess), plan for plan.
func TestPlannerPlansTheCostMixes(t *testing.T) {
	ctx, err := planner.ControllerContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	readme, err := loadReadmeNodePools()
	if err != nil {
		t.Fatal(err)
	}
	for _, mix := range costMixes {
		t.Run(mix.name, func(t *testing.T) {
			pool := readme.forMix(mix)
			launched, err := provisionInProcess(ctx, mix, pool)
			if err != nil {
				t.Fatal(err)
			}
			e := test.StartEmulatorForTest(t)
			for _, plan := range gpuPlans {
				e.SetCapacity(benchRegion, plan, mix.pods())
			}
			catalogue, err := planner.ReadCatalogue(ctx, e.Client)
			if err != nil {
				t.Fatal(err)
			}
			report, err := planner.Plan(ctx, planner.Settings{Region: benchRegion, Mode: mode.LKE, Catalogue: catalogue}, mixWorkloads(mix, pool))
			if err != nil {
				t.Fatal(err)
			}
			planned := map[string]int{}
			for _, p := range report.NodePools {
				for _, plan := range p.Plans {
					planned[plan.Plan] += plan.Nodes
				}
			}
			if len(report.Unplaceable) > 0 || !maps.Equal(planned, launched.plans) {
				t.Fatalf("%s: planned %s ($%.3f/h; unplaceable %v), launched %s ($%.3f/h)", mix.describe(),
					planner.FormatPlans(planned), report.Fleet.Hourly, report.Unplaceable, planner.FormatPlans(launched.plans), launched.price)
			}
		})
	}
}

// mixWorkloads are the mix's pods and DaemonSets, as the manifests of its Deployments and
// DaemonSets make them, with the NodePool and its NodeClass.
func mixWorkloads(mix costMix, pool costNodePool) planner.Workloads {
	nodePool := benchNodePool(test.NodeClassRef(nodeClassName))
	nodePool.Spec.Template.Spec.Requirements, nodePool.Spec.Template.Spec.Taints = pool.requirements, pool.taints
	w := planner.Workloads{NodePools: []*karpv1.NodePool{nodePool}, NodeClasses: []*v1.LinodeNodeClass{{ObjectMeta: metav1.ObjectMeta{Name: nodeClassName}}}}
	for _, d := range mix.deployments {
		for i := range d.replicas {
			w.Pods = append(w.Pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", d.name, i), Namespace: harness.Namespace, Labels: mix.podLabels(d, nodePoolName)},
				Spec:       mix.podSpec(d, nodePoolName),
			})
		}
	}
	for _, d := range mix.daemonSets {
		w.DaemonSets = append(w.DaemonSets, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: harness.Namespace},
			Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: mix.daemonSetSpec(d, nodePoolName)}},
		})
	}
	return w
}
