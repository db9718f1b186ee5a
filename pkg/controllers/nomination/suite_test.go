package nomination_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/nomination"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var (
	ctx        context.Context
	env        *environment.Environment
	clk        *clocktesting.FakeClock
	cluster    *state.Cluster
	controller *nomination.Controller
)

func TestNomination(t *testing.T) { RunSuite(t, "Nomination", &ctx) }

var _ = BeforeSuite(func() {
	// kube-scheduler binds the pods, as it does in a cluster: the specs check where.
	env = ExpectEnvironment(environment.WithScheduler(), environment.WithCoreOptions(coretest.WithFieldIndexers(
		coretest.NodeClaimProviderIDFieldIndexer(ctx),
	)))
})

var _ = BeforeEach(func() {
	clk = clocktesting.NewFakeClock(time.Now())
	// Core's cluster state, without the cloud provider: the specs record its scheduling decisions
	// as core's provisioner does, and read nothing that needs instance types.
	cluster = state.NewCluster(clk, env.Client, nil)
	controller = nomination.NewController(env.Client, cluster, clk)
	// The rest of the burst: a small node of the specs' pool, still launching. A pod whose node
	// is alone among those it could go to has nothing to be protected from, and is not nominated.
	launchingNodeClaim("500m", ownPool)
})

var _ = AfterEach(func() {
	ExpectAllCleanedUp(ctx, env.Client)
})
