package lifecycle_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// The emulator's environment: a local cluster of its own, seeded with the standard-tier LKE
// cluster; the enterprise tier's cluster is added to the same emulator account, and the same
// controller is pointed at it for its specs, as the upkeep suite's enterprise upgrade does. One
// kube-apiserver for both tiers keeps the suite's cost in `make test` to its specs.
var cluster *localcluster.Cluster

// runTag stands for the real run's unique tag (package reallinode).
const runTag = "karpenter-e2e-run-emulator"

func TestLifecycle(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, a node's life (emulator)")
}

var _ = framework.RegisterSuite(framework.LKECluster("lifecycle"), func(c *localcluster.Cluster) { cluster = c })

var _ = lifecycle.Describe(
	lifecycle.Tier{Name: "standard", SetUp: func(context.Context) *lifecycle.Environment {
		DeferCleanup(func(ctx context.Context) {
			Eventually(cluster.CheckNoLinodeResources).WithContext(ctx).Should(Succeed())
		})
		return emulatorEnvironment(cluster.LKEClusterID, "v4")
	}},
	lifecycle.Tier{Name: "enterprise", SetUp: func(ctx context.Context) *lifecycle.Environment {
		id, err := cluster.Emulator.AddLKECluster("lifecycle-enterprise", cluster.Region(), "enterprise")
		Expect(err).NotTo(HaveOccurred())
		Expect(cluster.RestartController(ctx, restartFor("CLUSTER_NAME=lifecycle-enterprise", "LINODE_API_VERSION=v4beta"))).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.RestartController(ctx, restartFor())).To(Succeed())
			Expect(cluster.Emulator.NewClient().DeleteLKECluster(ctx, id)).To(Succeed())
		})
		return emulatorEnvironment(id, "v4beta")
	}},
)

// emulatorEnvironment is the specs' environment on the emulator: the same plan as on Linode (2
// vCPUs), and
// waits sized to the emulator's scaled delays (a Linode boots in about 3 s).
func emulatorEnvironment(clusterID int, apiVersion string) *lifecycle.Environment {
	linode := cluster.Emulator.NewClient()
	linode.SetAPIVersion(apiVersion)
	return &lifecycle.Environment{
		Kube:         cluster.Kube,
		Linode:       linode,
		LKEClusterID: clusterID,
		RunTag:       runTag,
		Plan:         "g6-standard-2",
		PodCPU:       lifecycle.PodCPU(2),
		NodeTimeout:  time.Minute,
		Poll:         250 * time.Millisecond,
	}
}

// restartFor restarts the controller with the suite's settings and overrides.
func restartFor(overrides ...string) localcluster.RestartOptions {
	return localcluster.RestartOptions{Env: framework.LKEControllerEnv(overrides...)}
}
