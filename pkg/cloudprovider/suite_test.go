package cloudprovider_test

import (
	"context"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/nodepoolhealth"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	linodecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/pkg/test/lkecloud"
)

const (
	clusterName = "karpenter-test"
	region      = "us-ord"
)

var (
	ctx context.Context
	env *environment.Environment

	emu           *emulator.Emulator
	linodeClient  *linodego.Client
	lkeCluster    *lke.Cluster
	unavailable   *cache.UnavailableOfferings
	cloudProvider *linodecloudprovider.CloudProvider
	cluster       *state.Cluster
	prov          *provisioning.Provisioner
	lifecycleCtrl *lifecycle.Controller

	nodeClass *v1.LinodeNodeClass
	nodePool  *karpv1.NodePool
)

func TestCloudProvider(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "CloudProvider")
}

var _ = BeforeSuite(func() {
	var err error
	// The NodeClaim lifecycle finds Nodes and NodeClaims by provider ID through these indexes.
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
	emu = emulator.New(emulator.WithClock(clocktesting.NewFakeClock(time.Now())), emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	Expect(emu.Start()).To(Succeed())
	_, err := emu.AddLKECluster(clusterName, region, string(lke.TierStandard))
	Expect(err).ToNot(HaveOccurred())
	linodeClient = emu.NewClient()
	linodeClient.SetRetryCount(5)
	cloud, err := lkecloud.New(ctx, linodeClient, clusterName, env.Client,
		lkecloud.WithNodeProviderOptions(lke.WithPollInterval(time.Millisecond), lke.WithLaunchTimeout(5*time.Second)))
	Expect(err).ToNot(HaveOccurred())
	lkeCluster, unavailable, cloudProvider = cloud.Cluster, cloud.Unavailable, cloud.CloudProvider

	cluster = state.NewCluster(env.Clock, env.Client, cloudProvider)
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov = provisioning.NewProvisioner(env.Client, recorder, cloudProvider, cluster, env.Clock, deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))
	lifecycleCtrl = lifecycle.NewController(env.Clock, env.Client, cloudProvider, recorder, cluster, nodepoolhealth.NewState(), nil)

	nodeClass = readyNodeClass("default")
	nodePool = nodePoolFor("default", nodeClass)
	ExpectApplied(ctx, env.Client, nodeClass, nodePool)
	emu.ResetCounters()
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
	Expect(env.Client.DeleteAllOf(ctx, &v1.LinodeNodeClass{})).To(Succeed())
	cluster.Reset()
	Expect(emu.Close()).To(Succeed())
})

// readyNodeClass is a LinodeNodeClass whose conditions the NodeClass controller (not running
// here) would have set to Ready.
func readyNodeClass(name string) *v1.LinodeNodeClass {
	nodeClass := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	nodeClass.StatusConditions().SetTrue(status.ConditionReady)
	for _, condition := range []string{v1.ConditionTypeFirewallReady, v1.ConditionTypeImageReady, v1.ConditionTypeSubnetReady, v1.ConditionTypePlacementGroupReady, v1.ConditionTypeValidationSucceeded} {
		nodeClass.StatusConditions().SetTrue(condition)
	}
	return nodeClass
}

func nodePoolFor(name string, nodeClass *v1.LinodeNodeClass, overrides ...karpv1.NodePool) *karpv1.NodePool {
	nodePool := coretest.NodePool(append([]karpv1.NodePool{{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: nodeClass.Name},
		}}},
	}}, overrides...)...)
	return nodePool
}

// apiCalls is how many Linode API requests were made since the last reset.
func apiCalls() int {
	total := 0
	for _, n := range emu.Counters() {
		total += n
	}
	return total
}

// poolPlans are the plans of the cluster's pools, by pool id.
func poolPlans() []string {
	var plans []string
	for _, pool := range emu.Pools(lkeCluster.ID) {
		plans = append(plans, pool.Type)
	}
	return plans
}
