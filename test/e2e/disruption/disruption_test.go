package disruption_test

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var _ = Describe("Disruption", func() {
	It("drains a node deleted by hand, deletes its Linode and reschedules its pods", func(ctx SpecContext) {
		f := newFixture("manual")
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("inflate", 2, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 2)
		f.ExpectNodeDeletedByHandDrains(ctx, "inflate", 2)
	})

	It("replaces nodes whose LinodeNodeClass changed (drift)", func(ctx SpecContext) {
		f := newFixture("drift")
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("inflate", 1, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)
		original := f.NodeClaims(ctx)
		Expect(original).To(HaveLen(1))

		patch := client.MergeFrom(f.NodeClass.DeepCopy())
		f.NodeClass.Spec.Tags = append(f.NodeClass.Spec.Tags, "e2e:drifted")
		Expect(kube.Patch(ctx, f.NodeClass, patch)).To(Succeed())

		Eventually(func(g Gomega) {
			claims := f.NodeClaims(ctx)
			g.Expect(claims).To(HaveLen(1))
			g.Expect(claims[0].Name).NotTo(Equal(original[0].Name), "the drifted NodeClaim is replaced")
			g.Expect(claims[0].StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)
		Eventually(func(g Gomega) {
			pools := cluster.Emulator.Pools(0)
			g.Expect(pools).To(HaveLen(1))
			g.Expect(pools[0].Tags).To(ContainElement("e2e:drifted"), "the replacement carries the new tag")
		}).WithContext(ctx).Should(Succeed())
	})

	It("keeps a LinodeNodeClass deleted while in use until its nodes are gone", func(ctx SpecContext) {
		f := newFixture("nodeclass-deleted")
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("inflate", 1, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)

		Expect(kube.Delete(ctx, f.NodeClass)).To(Succeed())
		current := &v1.LinodeNodeClass{}
		Expect(kube.Get(ctx, client.ObjectKeyFromObject(f.NodeClass), current)).To(Succeed())
		Expect(current.Finalizers).To(ContainElement(v1.TerminationFinalizer))
		Expect(current.DeletionTimestamp.IsZero()).To(BeFalse())

		By("launching nothing more for it")
		Expect(kube.Create(ctx, f.Deployment("more", 2, "1"))).To(Succeed())
		claimsBefore := len(f.NodeClaims(ctx))
		framework.Consistently(ctx, func() int {
			return len(slices.DeleteFunc(f.NodeClaims(ctx), func(c karpv1.NodeClaim) bool { return !c.DeletionTimestamp.IsZero() }))
		}).Should(BeNumerically("<=", claimsBefore))

		By("letting it go once its NodePool and nodes are gone")
		Expect(kube.Delete(ctx, f.NodePool)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(kube.Get(ctx, client.ObjectKeyFromObject(f.NodeClass), &v1.LinodeNodeClass{}))
		}).WithContext(ctx).Should(BeTrue())
		Expect(cluster.CheckNoLinodeResources()).To(Succeed())
	})
})
