package e2e_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var _ = Describe("Scaling", func() {
	It("launches nodes for pending pods and removes them when the pods go", func(ctx SpecContext) {
		f := newFixture("scale")
		f.Create(ctx)
		inflate := f.Deployment("inflate", 0, "1")
		Expect(kube.Create(ctx, inflate)).To(Succeed())

		framework.Scale(ctx, kube, inflate, 5)
		f.ExpectRunning(ctx, "inflate", 5)
		nodes := f.Nodes(ctx)
		Expect(nodes).NotTo(BeEmpty())
		Expect(cpuOf(nodes)).To(BeNumerically(">=", 5), "5 one-CPU pods run on %v", plans(nodes))
		for _, node := range nodes {
			Expect(node.Spec.ProviderID).To(HavePrefix("linode://"))
			Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelTopologyZone, node.Labels[corev1.LabelTopologyRegion]),
				"a node's zone is its region: Linode has no zones")
		}
		Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed())
		expectSizingDecisions(ctx, f)

		framework.Scale(ctx, kube, inflate, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.NodeClaims(ctx)).To(BeEmpty())
			g.Expect(f.Nodes(ctx)).To(BeEmpty())
			g.Expect(cluster.CheckNoLinodeResources()).To(Succeed())
		}).WithContext(ctx).Should(Succeed(), "empty nodes are consolidated away")
	})

	It("replaces an under-used node with a cheaper one", func(ctx SpecContext) {
		f := newFixture("underused")
		f.Create(ctx)
		inflate := f.Deployment("inflate", 5, "1")
		Expect(kube.Create(ctx, inflate)).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 5)
		before := f.Nodes(ctx)

		framework.Scale(ctx, kube, inflate, 1)
		Eventually(func(g Gomega) {
			nodes := f.Nodes(ctx)
			g.Expect(nodes).To(HaveLen(1))
			g.Expect(nodes[0].Status.Capacity.Cpu().Value()).To(BeNumerically("<=", 2),
				"one one-CPU pod is left; its node should be the smallest plan that fits (was %v, now %v)", plans(before), plans(nodes))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)
	})

	It("respects the NodePool's CPU limit", func(ctx SpecContext) {
		f := newFixture("limits")
		f.NodePool.Spec.Limits = karpv1.Limits{corev1.ResourceCPU: resource.MustParse("4")}
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("inflate", 8, "1"))).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(f.Nodes(ctx)).NotTo(BeEmpty())
			g.Expect(f.Pods(ctx, "inflate")).To(ContainElement(HaveField("Status.Phase", corev1.PodRunning)))
		}).WithContext(ctx).Should(Succeed())
		framework.Consistently(ctx, func(g Gomega) {
			g.Expect(cpuOf(f.Nodes(ctx))).To(BeNumerically("<=", 4), "nodes %v exceed the NodePool's 4 CPUs", plans(f.Nodes(ctx)))
		}).Should(Succeed())
		pending := 0
		for _, pod := range f.Pods(ctx, "inflate") {
			if pod.Status.Phase == corev1.PodPending {
				pending++
			}
		}
		Expect(pending).To(BeNumerically(">=", 4), "at most 4 CPUs of nodes, so at least 4 of 8 one-CPU pods wait")
	})
})
