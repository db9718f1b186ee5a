package capacity_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype/capacity"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var (
	ctx        context.Context
	env        *environment.Environment
	api        *test.Emulator
	provider   *instancetype.DefaultProvider
	controller *capacity.Controller
)

func TestCapacity(t *testing.T) { RunSuite(t, "Controllers/Providers/InstanceType/Capacity", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment()
	api = ExpectEmulator()
})

var _ = BeforeEach(func() {
	provider = instancetype.NewDefaultProvider(api.Client, test.Region, mode.LKE, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL))
	Expect(provider.UpdateCatalogue(ctx)).To(Succeed())
	controller = capacity.NewController(provider)
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
})

// registeredNode is a Node as the kubelet of a Linode registers it.
func registeredNode(name, providerID, plan, memory string) *corev1.Node {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelInstanceTypeStable: plan}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	ExpectApplied(ctx, env.Client, node)
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourceCPU: resource.MustParse("2")}
	ExpectApplied(ctx, env.Client, node)
	return node
}

// memoryPromised is the memory capacity, in bytes, the provider promises a new node of the plan.
func memoryPromised(plan string) int64 {
	nodeClass := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	instanceTypes, err := provider.List(ctx, nodeClass)
	Expect(err).ToNot(HaveOccurred())
	it, ok := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == plan })
	Expect(ok).To(BeTrue())
	return it.Capacity.Memory().Value()
}

var _ = Describe("Capacity", func() {
	It("promises later launches the memory a registered node of the plan reported", func() {
		estimate := memoryPromised("g6-standard-2")
		node := registeredNode("lke1-2-abc", "linode://101", "g6-standard-2", "4015852Ki")
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		Expect(memoryPromised("g6-standard-2")).To(Equal(int64(4015852 * 1024)))
		Expect(memoryPromised("g6-standard-2")).ToNot(Equal(estimate))
		// Other plans keep their estimate.
		Expect(memoryPromised("g6-standard-4")).To(Equal(int64(8192*1024*1024*975/1000) / 1024 * 1024))
	})
	It("ignores Nodes that are not Linodes", func() {
		estimate := memoryPromised("g6-standard-2")
		node := registeredNode("other", "aws:///us-east-1a/i-0123", "g6-standard-2", "3900000Ki")
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		Expect(memoryPromised("g6-standard-2")).To(Equal(estimate))
	})
	It("ignores Nodes whose memory cannot be the plan's", func() {
		estimate := memoryPromised("g6-standard-2")
		node := registeredNode("lke1-3-def", "linode://102", "g6-standard-2", "16Gi")
		ExpectObjectReconciled(ctx, env.Client, controller, node)
		Expect(memoryPromised("g6-standard-2")).To(Equal(estimate))
	})
})
