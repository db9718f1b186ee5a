package cloudprovider_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/state/nodepoolhealth"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	linodecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

const (
	clusterName = test.ClusterName
	region      = test.Region
)

var (
	ctx context.Context
	env *environment.Environment

	emu           *test.Emulator
	lkeCluster    *lke.Cluster
	unavailable   *cache.UnavailableOfferings
	cloudProvider *linodecloudprovider.CloudProvider
	cluster       *state.Cluster
	prov          *provisioning.Provisioner
	lifecycleCtrl *lifecycle.Controller

	nodeClass *v1.LinodeNodeClass
	nodePool  *karpv1.NodePool
	// recorded are the events the cloud provider published.
	recorded *coretest.EventRecorder
)

func TestCloudProvider(t *testing.T) { RunSuite(t, "CloudProvider", &ctx) }

var _ = BeforeSuite(func() {
	// The NodeClaim lifecycle finds Nodes and NodeClaims by provider ID through these indexes.
	env = ExpectEnvironment(environment.WithCoreOptions(coretest.WithFieldIndexers(
		coretest.NodeProviderIDFieldIndexer(ctx),
		coretest.NodeClaimProviderIDFieldIndexer(ctx),
	)))
})

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	emu.Client.SetRetryCount(5)
	recorded = coretest.NewEventRecorder()
	cloud := ExpectLKE(ctx, emu, env.Client, test.WithRecorder(recorded))
	lkeCluster, unavailable, cloudProvider = cloud.Cluster, cloud.Unavailable, cloud.CloudProvider

	cluster = state.NewCluster(env.Clock, env.Client, cloudProvider)
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov = provisioning.NewProvisioner(env.Client, recorder, cloudProvider, cluster, env.Clock, deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))
	lifecycleCtrl = lifecycle.NewController(env.Clock, env.Client, cloudProvider, recorder, cluster, nodepoolhealth.NewState(), nil)

	nodeClass = test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	nodePool = test.NodePool(nodeClass, karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	ExpectApplied(ctx, env.Client, nodeClass, nodePool)
	emu.ResetCounters()
})

var _ = AfterEach(func() {
	ExpectAllCleanedUp(ctx, env.Client)
	cluster.Reset()
})

// poolPlans are the plans of the cluster's pools, by pool id.
func poolPlans() []string {
	var plans []string
	for _, pool := range emu.Pools(lkeCluster.ID) {
		plans = append(plans, pool.Type)
	}
	return plans
}
