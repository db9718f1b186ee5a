package upkeep_test

import (
	"fmt"
	"maps"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

var _ = Describe("Planner", func() {
	It("launches the fleet karpenter-linode plan predicted, plan for plan", func(ctx SpecContext) {
		f := newFixture("plan")
		deployments := []*appsv1.Deployment{f.Deployment("web", 6, "500m"), f.Deployment("api", 3, "1500m")}

		catalogue, err := planner.BuiltInCatalogue()
		Expect(err).NotTo(HaveOccurred())
		report, err := planner.Plan(ctx, planner.Settings{Region: test.Region, Mode: mode.LKE, Catalogue: catalogue}, planner.Workloads{
			Pods:        podsOf(deployments...),
			NodePools:   []*karpv1.NodePool{f.NodePool.DeepCopy()},
			NodeClasses: []*v1.LinodeNodeClass{f.NodeClass.DeepCopy()},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(report.Unplaceable).To(BeEmpty())
		Expect(report.NodePools).To(HaveLen(1))
		planned := map[string]int{}
		for _, plan := range report.NodePools[0].Plans {
			planned[plan.Plan] = plan.Nodes
		}

		f.Create(ctx)
		for _, deployment := range deployments {
			Expect(kube.Create(ctx, deployment)).To(Succeed())
		}
		f.ExpectRunning(ctx, "web", 6)
		f.ExpectRunning(ctx, "api", 3)
		// The plan predicts core's provisioning round for the pending pods: the NodeClaims made
		// before the first of their nodes registered. Once nodes register, kube-scheduler may bind
		// the pods otherwise than core nominated them (under load it binds a pod to the first node
		// up), and core launches for a pod left without room: that NodeClaim is kube-scheduler's
		// doing, not the round the plan predicted.
		firstNode := f.Nodes(ctx)[0].CreationTimestamp
		for _, node := range f.Nodes(ctx) {
			if node.CreationTimestamp.Before(&firstNode) {
				firstNode = node.CreationTimestamp
			}
		}
		launched := map[string]int{}
		for _, claim := range f.NodeClaims(ctx) {
			// Timestamps are to the second: the same second as the first node counts as before.
			if !firstNode.Before(&claim.CreationTimestamp) {
				launched[claim.Labels[corev1.LabelInstanceTypeStable]]++
			}
		}
		Expect(launched).To(Equal(planned), "the plan said %v ($%.3f/h), the controller launched %v", planned, report.Fleet.Hourly, slices.Sorted(maps.Keys(launched)))
	})
})

// podsOf are the pods the deployments' ReplicaSets create, as the planner reads a manifest.
func podsOf(deployments ...*appsv1.Deployment) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, d := range deployments {
		for i := range int(*d.Spec.Replicas) {
			pods = append(pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", d.Name, i), Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
				Spec:       *d.Spec.Template.Spec.DeepCopy(),
			})
		}
	}
	return pods
}
