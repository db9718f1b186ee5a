package sizing_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
)

var _ = Describe("NodeOverlays", func() {
	// A price overlay that makes the 32-CPU plan cheaper than a 4-CPU node: thirty one-CPU pods
	// then cost least on one g6-standard-32, where by list prices ten g6-standard-4 nodes would.
	var (
		store     *nodeoverlay.InstanceTypeStore
		withGate  = coretest.Options(coretest.OptionsFields{FeatureGates: coretest.FeatureGates{NodeOverlay: ptr.To(true)}})
		discount  *v1alpha1.NodeOverlay
		launching *provisioning.Provisioner
	)
	BeforeEach(func() {
		ctx = coreoptions.ToContext(ctx, withGate)
		DeferCleanup(func() { ctx = coreoptions.ToContext(ctx, coretest.Options()) })
		discount = &v1alpha1.NodeOverlay{
			ObjectMeta: metav1.ObjectMeta{Name: "committed-g6-standard-32"},
			Spec: v1alpha1.NodeOverlaySpec{
				Requirements: []v1alpha1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-standard-32"}}},
				Price:        ptr.To("0.1"),
			},
		}
		ExpectApplied(ctx, env.Client, discount)
		DeferCleanup(func() { ExpectDeleted(ctx, env.Client, discount) })
		store = nodeoverlay.NewInstanceTypeStore()
		_, err := nodeoverlay.NewController(env.Clock, env.Client, cloudProvider, store, cluster).Reconcile(ctx, reconcile.Request{})
		Expect(err).ToNot(HaveOccurred())
		// Core schedules with the overlays applied to what the cloud provider returns.
		launching = provisioning.NewProvisioner(env.Client, events.NewRecorder(&record.FakeRecorder{}), overlay.Decorate(cloudProvider, env.Client, store), cluster, env.Clock,
			deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))
	})

	It("launches the plan an overlay makes cheapest", func() {
		cloud.Sizing.ModelOverlays(store)
		pods := pendingPods("web", 30, "1", "1Gi")
		apply(pods)
		bindings := ExpectProvisioned(ctx, env.Client, cluster, overlay.Decorate(cloudProvider, env.Client, store), launching, pods...).Bindings
		Expect(nodeClaimPlans(bindings)).To(HaveLen(1))
		Expect(launchedPlans(bindings)).To(HaveEach("g6-standard-32"))
	})

	It("launches, of a NodeClaim's plans, the one cheapest at the overlay's prices", func() {
		cloud.Sizing.ModelOverlays(store)
		// g6-dedicated-16 lists at a third of g6-standard-32's price, but costs four times the
		// overlay's.
		nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name}},
			Spec: karpv1.NodeClaimSpec{
				NodeClassRef: nodePool.Spec.Template.Spec.NodeClassRef,
				Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
					{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-dedicated-16", "g6-standard-32"}},
				},
			},
		})
		launched, err := cloudProvider.Create(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(launched.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-standard-32"))
	})

	It("needs the policy to model it: priced by list prices, that plan is hidden from core", func() {
		pods := pendingPods("web", 30, "1", "1Gi")
		apply(pods)
		bindings := ExpectProvisioned(ctx, env.Client, cluster, overlay.Decorate(cloudProvider, env.Client, store), launching, pods...).Bindings
		Expect(launchedPlans(bindings)).ToNot(ContainElement("g6-standard-32"))
	})
})
