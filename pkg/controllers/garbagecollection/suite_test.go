package garbagecollection_test

import (
	"context"
	"testing"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

const clusterName = "karpenter-test"

var (
	ctx          context.Context
	env          *environment.Environment
	emu          *emulator.Emulator
	linodeClient *linodego.Client
	lkeCluster   *lke.Cluster
	clk          *clocktesting.FakeClock
	gc           *garbagecollection.Controller
)

func TestGarbageCollection(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Garbage collection")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
	ctx = coreoptions.ToContext(ctx, coretest.Options())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

var _ = BeforeEach(func() {
	emu = emulator.New(emulator.WithClock(clocktesting.NewFakeClock(time.Now())), emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	Expect(emu.Start()).To(Succeed())
	_, err := emu.AddLKECluster(clusterName, "us-ord", string(lke.TierStandard))
	Expect(err).ToNot(HaveOccurred())
	linodeClient = emu.NewClient()
	lkeCluster, err = lke.Discover(ctx, linodeClient, clusterName, "")
	Expect(err).ToNot(HaveOccurred())
	clk = clocktesting.NewFakeClock(time.Now())
	// Every run reads the pools anew, as it would two minutes after the previous one.
	nodes := lke.NewProvider(linodeClient, lkeCluster, clusterName, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL), lke.WithListingTTL(0))
	gc = garbagecollection.NewController(env.Client, nodes, clusterName, garbagecollection.WithClock(clk))
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
	Expect(emu.Close()).To(Succeed())
})

// pool creates a single-node pool with the tags, as a launch would, and returns its id.
func pool(tags ...string) int {
	GinkgoHelper()
	created, err := linodeClient.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: tags})
	Expect(err).ToNot(HaveOccurred())
	return created.ID
}

// launchedPool is a pool launched for the NodeClaim name in the NodePool "default".
func launchedPool(nodeClaimName string) int {
	GinkgoHelper()
	return pool(nodeprovider.ClusterTag(clusterName), nodeprovider.NodeClaimTag(nodeClaimName), nodeprovider.NodePoolTag("default"))
}

func poolIDs() []int {
	var ids []int
	for _, p := range emu.Pools(lkeCluster.ID) {
		ids = append(ids, p.ID)
	}
	return ids
}

// instanceOf is the provider ID of the pool's Linode.
func instanceOf(poolID int) string {
	GinkgoHelper()
	for _, instance := range emu.Instances() {
		if instance.LKEPoolID == poolID {
			return nodeprovider.ProviderID(instance.ID)
		}
	}
	Fail("the pool has no Linode")
	return ""
}

func nodeClaim(name, providerID string) *karpv1.NodeClaim {
	return coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: karpv1.NodeClaimStatus{ProviderID: providerID}})
}
