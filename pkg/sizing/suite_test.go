package sizing_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	linodeexpectations "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

const clusterName = "sizing-test"

var (
	ctx context.Context
	env *environment.Environment

	emu           *test.Emulator
	cloud         *test.LKE
	cloudProvider *cloudprovider.CloudProvider
	cluster       *state.Cluster
	prov          *provisioning.Provisioner

	nodeClass *v1.LinodeNodeClass
	nodePool  *karpv1.NodePool
)

func TestSizing(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Sizing")
}

var _ = BeforeSuite(func() {
	var err error
	// Core's provisioner lists pending pods by node name, and launching finds NodeClaims and
	// Nodes by provider ID, through these indexes, as the controller's manager does.
	env, err = environment.New(environment.WithCoreOptions(coretest.WithFieldIndexers(
		coretest.NodeProviderIDFieldIndexer(ctx),
		coretest.NodeClaimProviderIDFieldIndexer(ctx),
	)))
	Expect(err).ToNot(HaveOccurred())
	ctx = coreoptions.ToContext(ctx, coretest.Options())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

var _ = BeforeEach(func() {
	emu = linodeexpectations.ExpectEmulator()
	emu.Client.SetRetryCount(5)
	// The controller gives core's cluster state and the policy one clock; here the policy reads
	// the emulator's, so core's starts at the same time, and tests step both.
	env.Clock.SetTime(emu.Clock.Now())
	// A NodePool counts as large from 20 nodes, so that a burst of 90 pods is large.
	cloud = linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster(clusterName, lke.TierStandard, test.Region),
		test.WithSettings(func(o *options.Options) { o.SizingLargeFleetNodes = 20 }))
	cloudProvider = cloud.CloudProvider
	// As the controller wires it: core's cluster state is built from the cloud provider, then
	// given to the sizing policy.
	cluster = state.NewCluster(env.Clock, env.Client, cloudProvider)
	cloud.Sizing.Track(cluster)
	prov = provisioning.NewProvisioner(env.Client, events.NewRecorder(&record.FakeRecorder{}), cloudProvider, cluster, env.Clock,
		deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))

	nodeClass = test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	// Standard and dedicated plans, as the benchmarks' NodePool.
	nodePool = coretest.NodePool(karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: nodeClass.Name},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard", "dedicated"}},
			},
		}}},
	})
	ExpectApplied(ctx, env.Client, nodeClass, nodePool)
})

var _ = AfterEach(func() {
	linodeexpectations.ExpectAllCleanedUp(ctx, env.Client)
	cluster.Reset()
})
