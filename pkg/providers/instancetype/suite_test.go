package instancetype_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// The suite schedules pods with Karpenter core's provisioner over the instance types this package
// lists from the emulator's catalogue. Core's fake CloudProvider stands in for the Linode cloud
// provider (built separately in pkg/cloudprovider) so that what is tested here is the catalogue:
// it launches nothing and picks, as the real one does, the cheapest compatible available plan.

var (
	ctx           context.Context
	env           *environment.Environment
	cloudProvider *fake.CloudProvider
	cluster       *state.Cluster
	prov          *provisioning.Provisioner
	nodeClass     *v1.LinodeNodeClass
)

func TestProvisioning(t *testing.T) { RunSuite(t, "Providers/InstanceType", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment()
	cloudProvider = fake.NewCloudProvider()
	cluster = state.NewCluster(env.Clock, env.Client, cloudProvider)
	prov = provisioning.NewProvisioner(env.Client, events.NewRecorder(&record.FakeRecorder{}), cloudProvider, cluster, env.Clock,
		deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))
})

var _ = BeforeEach(func() {
	cloudProvider.Reset()
	nodeClass = test.LinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	// The API server validates the NodeClass; List gets it as the cloud provider would read it.
	ExpectApplied(ctx, env.Client, nodeClass)
})

var _ = AfterEach(func() {
	ExpectAllCleanedUp(ctx, env.Client)
	cluster.Reset()
})

// linode is a provider for the region with its catalogue read from a fresh emulator.
type linode struct {
	emulator    *test.Emulator
	unavailable *cache.UnavailableOfferings
	provider    *instancetype.DefaultProvider
}

func newLinode(region string, unavailableTTL time.Duration, setup ...func(*emulator.Emulator)) *linode {
	e := ExpectEmulator()
	for _, f := range setup {
		f(e.Emulator)
	}
	unavailable := cache.NewUnavailableOfferings(unavailableTTL)
	provider := instancetype.NewDefaultProvider(e.Client, region, mode.LKE, unavailable)
	Expect(provider.UpdateCatalogue(ctx)).To(Succeed())
	return &linode{emulator: e, unavailable: unavailable, provider: provider}
}

// withGPUCapacity makes the region's GPU plans, which the catalogue lists as sold out, launchable.
func withGPUCapacity(region string) func(*emulator.Emulator) {
	return func(e *emulator.Emulator) {
		for _, plan := range []string{"g1-gpu-rtx6000-1", "g1-gpu-rtx6000-2", "g1-gpu-rtx6000-3", "g1-gpu-rtx6000-4"} {
			e.SetCapacity(region, plan, 10)
		}
	}
}

// provision hands the provider's current instance types to the cloud provider, as
// GetInstanceTypes would, and provisions the pod; it returns the plan of the node it landed on.
func (l *linode) provision(nodePool *karpv1.NodePool, pod *corev1.Pod) *cloudprovider.InstanceType {
	GinkgoHelper()
	instanceTypes, err := l.provider.List(ctx, nodeClass)
	Expect(err).ToNot(HaveOccurred())
	cloudProvider.InstanceTypes = instanceTypes
	ExpectApplied(ctx, env.Client, nodePool)
	ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
	node := ExpectScheduled(ctx, env.Client, pod)
	it, ok := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool {
		return it.Name == node.Labels[corev1.LabelInstanceTypeStable]
	})
	Expect(ok).To(BeTrue(), "node %s has plan %q, which List did not return", node.Name, node.Labels[corev1.LabelInstanceTypeStable])
	return it
}

func pod(requests corev1.ResourceList) *corev1.Pod {
	return coretest.UnschedulablePod(coretest.PodOptions{ResourceRequirements: corev1.ResourceRequirements{Requests: requests, Limits: lo.PickByKeys(requests, []corev1.ResourceName{instancetype.ResourceNVIDIAGPU})}})
}

func nodePool(requirements ...karpv1.NodeSelectorRequirementWithMinValues) *karpv1.NodePool {
	return coretest.NodePool(karpv1.NodePool{Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
		Requirements: requirements,
	}}}})
}

func requirement(key string, operator corev1.NodeSelectorOperator, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
	return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: operator, Values: values}
}

func price(it *cloudprovider.InstanceType, region string) float64 {
	p, ok := it.OfferingPrice(region, karpv1.CapacityTypeOnDemand)
	Expect(ok).To(BeTrue())
	return p
}

var _ = Describe("Provisioning", func() {
	It("gives a pod needing 6 CPU the cheapest plan that fits after the kubelet's reservations", func() {
		l := newLinode("us-ord", cache.UnavailableOfferingsTTL)
		it := l.provision(nodePool(), pod(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}))
		// g6-standard-6 has 6 vCPU at $0.144 but keeps 85m for the kubelet; the cheapest 8 vCPU
		// plan is Dedicated 16GB at $0.216.
		Expect(it.Name).To(Equal("g6-dedicated-8"))
		Expect(price(it, "us-ord")).To(Equal(0.216))
	})
	It("gives a pod asking for 2 GPUs a plan with 2 GPUs", func() {
		l := newLinode("us-ord", cache.UnavailableOfferingsTTL, withGPUCapacity("us-ord"))
		it := l.provision(nodePool(), pod(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), instancetype.ResourceNVIDIAGPU: resource.MustParse("2")}))
		Expect(it.Name).To(Equal("g1-gpu-rtx6000-2"))
		Expect(it.Requirements.Get(v1.LabelInstanceGPUCount).Any()).To(Equal("2"))
		Expect(it.Requirements.Get(v1.LabelInstanceGPUName).Any()).To(Equal("rtx6000"))
	})
	It("launches no GPU pod where the region's GPU plans are sold out", func() {
		l := newLinode("us-ord", cache.UnavailableOfferingsTTL)
		instanceTypes, err := l.provider.List(ctx, nodeClass)
		Expect(err).ToNot(HaveOccurred())
		cloudProvider.InstanceTypes = instanceTypes
		p := pod(corev1.ResourceList{instancetype.ResourceNVIDIAGPU: resource.MustParse("1")})
		ExpectApplied(ctx, env.Client, nodePool())
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, p)
		ExpectNotScheduled(ctx, env.Client, p)
	})
	It("keeps a NodePool requiring the dedicated class to dedicated plans", func() {
		l := newLinode("us-ord", cache.UnavailableOfferingsTTL)
		it := l.provision(nodePool(requirement(v1.LabelInstanceClass, corev1.NodeSelectorOpIn, "dedicated")),
			pod(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}))
		Expect(it.Name).To(Equal("g6-dedicated-2"))
		nodeClaims := ExpectNodeClaims(ctx, env.Client)
		Expect(nodeClaims).To(HaveLen(1))
		planRequirement, ok := lo.Find(nodeClaims[0].Spec.Requirements, func(r karpv1.NodeSelectorRequirementWithMinValues) bool {
			return r.Key == corev1.LabelInstanceTypeStable
		})
		Expect(ok).To(BeTrue())
		Expect(planRequirement.Values).ToNot(BeEmpty())
		instanceTypes, err := l.provider.List(ctx, nodeClass)
		Expect(err).ToNot(HaveOccurred())
		for _, name := range planRequirement.Values {
			candidate, _ := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == name })
			Expect(candidate.Requirements.Get(v1.LabelInstanceClass).Any()).To(Equal("dedicated"), "NodeClaim may launch %s", name)
		}
	})
	It("lets a NodePool say \"dedicated CPU, 8+ vCPU, no GPU\"", func() {
		l := newLinode("us-ord", cache.UnavailableOfferingsTTL, withGPUCapacity("us-ord"))
		it := l.provision(nodePool(
			requirement(v1.LabelInstanceClass, corev1.NodeSelectorOpIn, "dedicated", "gpu"),
			requirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "7"),
			requirement(v1.LabelInstanceGPUCount, corev1.NodeSelectorOpLt, "1"),
		), pod(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}))
		Expect(it.Name).To(Equal("g6-dedicated-8"))
	})
	DescribeTable("follows region_prices in the choice and the offering price",
		func(region, wantPlan string, wantPrice float64) {
			l := newLinode(region, cache.UnavailableOfferingsTTL, withGPUCapacity(region))
			// At list prices Dedicated 96GB ($1.296) is cheaper than the GPU plan ($1.50); in
			// id-cgk it costs $1.555 while the GPU plan has no surcharge.
			it := l.provision(nodePool(requirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "g6-dedicated-48", "g1-gpu-rtx6000-1")),
				pod(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}))
			Expect(it.Name).To(Equal(wantPlan))
			Expect(price(it, region)).To(Equal(wantPrice))
			Expect(ExpectNodeClaims(ctx, env.Client)[0].Labels).To(HaveKeyWithValue(corev1.LabelTopologyZone, region))
		},
		Entry("list prices in us-ord", "us-ord", "g6-dedicated-48", 1.296),
		Entry("surcharged prices in id-cgk", "id-cgk", "g1-gpu-rtx6000-1", 1.5),
	)
	It("skips a plan whose capacity ran out, and uses it again after the TTL", func() {
		const ttl = 2 * time.Second
		l := newLinode("us-ord", ttl)
		sixCPU := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}
		Expect(l.provision(nodePool(), pod(sixCPU)).Name).To(Equal("g6-dedicated-8"))

		// What the LKE provider does when Linode answers "insufficient capacity".
		l.unavailable.MarkUnavailable(ctx, "There is insufficient capacity to create g6-dedicated-8 Linodes in us-ord", "g6-dedicated-8", "us-ord")
		Expect(l.provision(nodePool(), pod(sixCPU)).Name).To(Equal("g7-premium-8"))

		Eventually(func() bool {
			instanceTypes, err := l.provider.List(ctx, nodeClass)
			Expect(err).ToNot(HaveOccurred())
			it, _ := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == "g6-dedicated-8" })
			return it.Offerings[0].Available
		}).WithTimeout(3 * ttl).WithPolling(100 * time.Millisecond).Should(BeTrue())
		Expect(l.provision(nodePool(), pod(sixCPU)).Name).To(Equal("g6-dedicated-8"))
	})
})
