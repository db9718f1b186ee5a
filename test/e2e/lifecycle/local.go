package lifecycle

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// LocalTier runs the specs on a local cluster (package localcluster) whose seeded LKE cluster is
// of the tier, in the Linode API emulator's account: the plan a real run uses (2 vCPUs), and
// waits sized to the emulator's scaled delays, in which a Linode boots in seconds. cluster is
// called when the specs start, once the suite has started it. The tier's set-up checks, when its
// specs are done, that nothing is left in the account.
func LocalTier(tier string, cluster func() *localcluster.Cluster) Tier {
	return Tier{Name: tier, SetUp: func(context.Context) *Environment {
		c := cluster()
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Eventually(c.CheckNoLinodeResources).WithContext(ctx).Should(gomega.Succeed())
		})
		linode := c.Emulator.NewClient()
		if tier == "enterprise" {
			linode.SetAPIVersion("v4beta")
		}
		return &Environment{
			Kube:         c.Kube,
			Linode:       linode,
			LKEClusterID: c.LKEClusterID,
			RunTag:       "karpenter-e2e-run-emulator",
			Plan:         "g6-standard-2",
			PodCPU:       PodCPU(2),
			NodeTimeout:  time.Minute,
			Poll:         250 * time.Millisecond,
		}
	}}
}
