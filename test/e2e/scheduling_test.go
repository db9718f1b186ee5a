package e2e_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

var _ = Describe("Scheduling", func() {
	It("honours the NodePool's taints, pods' tolerations and selectors on Linode labels", func(ctx SpecContext) {
		f := newFixture("taints")
		f.NodePool.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "e2e/dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		f.Create(ctx)

		intolerant := f.Deployment("intolerant", 1, "500m")
		Expect(kube.Create(ctx, intolerant)).To(Succeed())
		tolerant := f.Deployment("tolerant", 1, "500m")
		tolerant.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "e2e/dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		tolerant.Spec.Template.Spec.NodeSelector[v1.LabelInstanceClass] = "dedicated"
		tolerant.Spec.Template.Spec.NodeSelector[v1.LabelInstanceCPU] = "4"
		Expect(kube.Create(ctx, tolerant)).To(Succeed())

		f.ExpectRunning(ctx, "tolerant", 1)
		nodes := f.Nodes(ctx)
		Expect(nodes).To(HaveLen(1))
		Expect(nodes[0].Labels).To(HaveKeyWithValue(v1.LabelInstanceClass, "dedicated"))
		Expect(nodes[0].Labels).To(HaveKeyWithValue(v1.LabelInstanceCPU, "4"))
		Expect(nodes[0].Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-dedicated-4"))
		Expect(framework.HasTaint(nodes[0], "e2e/dedicated", corev1.TaintEffectNoSchedule)).To(BeTrue(), "taints %v", nodes[0].Spec.Taints)
		framework.Consistently(ctx, func() []corev1.Pod { return f.Pods(ctx, "intolerant") }).
			Should(HaveEach(HaveField("Status.Phase", corev1.PodPending)), "a pod that does not tolerate the NodePool's taint never runs")
	})

	It("launches a GPU plan for a pod that asks for a GPU", func(ctx SpecContext) {
		// The suite gives the region capacity for GPU plans (localcluster.Options.PlanCapacity).
		f := newFixture("gpu")
		f.NodePool.Spec.Template.Spec.Requirements[0].Values = []string{"standard", "dedicated", "gpu"}
		f.Create(ctx)
		training := f.Deployment("training", 1, "1")
		training.Spec.Template.Spec.Containers[0].Resources.Requests[nodesim.ResourceGPU] = resource.MustParse("1")
		training.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{nodesim.ResourceGPU: resource.MustParse("1")}
		Expect(kube.Create(ctx, training)).To(Succeed())

		f.ExpectRunning(ctx, "training", 1)
		nodes := f.Nodes(ctx)
		Expect(nodes).To(HaveLen(1))
		Expect(nodes[0].Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g1-gpu-rtx6000-1"), "the cheapest GPU plan")
		Expect(nodes[0].Labels).To(HaveKeyWithValue(v1.LabelInstanceGPUCount, "1"))
	})

	It("moves on to the next plan when the cheapest one is out of capacity", func(ctx SpecContext) {
		f := newFixture("capacity")
		f.NodePool.Spec.Template.Spec.Requirements[0].Values = []string{"standard"}
		f.Create(ctx)
		By("finding the plan chosen when capacity is plentiful")
		probe := f.Deployment("probe", 1, "1")
		Expect(kube.Create(ctx, probe)).To(Succeed())
		f.ExpectRunning(ctx, "probe", 1)
		cheapest := plans(f.Nodes(ctx))[0]
		Expect(kube.Delete(ctx, probe)).To(Succeed())
		Eventually(func() []karpv1.NodeClaim { return f.NodeClaims(ctx) }).WithContext(ctx).Should(BeEmpty())

		By("exhausting " + cheapest)
		cluster.Emulator.SetCapacity(cluster.Region(), cheapest, 0)
		DeferCleanup(cluster.Emulator.SetCapacity, cluster.Region(), cheapest, -1)
		Expect(kube.Create(ctx, f.Deployment("inflate", 1, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)
		got := plans(f.Nodes(ctx))
		Expect(got).To(HaveLen(1))
		Expect(got[0]).NotTo(Equal(cheapest))
		Expect(strings.HasPrefix(got[0], "g6-standard-")).To(BeTrue(), "the NodePool allows standard plans only, got %s", got[0])
	})
})
