package upkeep_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

var _ = Describe("LKE upgrades", func() {
	// expectUpgradeReplacesNodes upgrades the LKE cluster the controller manages to the next minor
	// version and waits until the fixture's two nodes run it, checking on the way that the
	// NodePool's budget of one disruption at a time held and that every pod went by eviction.
	// The budget is sampled every poll, so a breach shorter than a poll can go unseen; core's
	// own tests cover its budget arithmetic.
	expectUpgradeReplacesNodes := func(ctx context.Context, prefix string, clusterID int, tier string) {
		GinkgoHelper()
		f := newFixture(prefix)
		f.NodePool.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration("Never")
		f.NodePool.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: "1"}}
		f.Create(ctx)
		runOnTwoNodes(ctx, f)
		old := linodesOf(f.Nodes(ctx))
		losses := watchPodLosses(ctx, f.Name)

		linode := cluster.Emulator.NewClient()
		lkeCluster, err := linode.GetLKECluster(ctx, clusterID)
		Expect(err).NotTo(HaveOccurred())
		next := nextMinor(lkeCluster.K8sVersion, tier)
		By("upgrading the cluster from " + lkeCluster.K8sVersion + " to " + next)
		cluster.Emulator.ReleaseLKEVersion(tier, next)
		_, err = linode.UpdateLKECluster(ctx, clusterID, linodego.LKEClusterUpdateOptions{K8sVersion: next})
		Expect(err).NotTo(HaveOccurred())

		want := "v" + minorOf(next) + "."
		mostDisrupted := 0
		Eventually(func(g Gomega) {
			nodes := f.Nodes(ctx)
			// As core counts against the budget: nodes being disrupted (tainted, then drained) until
			// their Linode's deletion has started.
			disrupted := 0
			for _, claim := range f.NodeClaims(ctx) {
				i := slices.IndexFunc(nodes, func(node corev1.Node) bool { return node.Name == claim.Status.NodeName })
				if i >= 0 && framework.HasTaint(nodes[i], karpv1.DisruptedTaintKey, corev1.TaintEffectNoSchedule) &&
					!claim.StatusConditions().IsTrue(karpv1.ConditionTypeInstanceTerminating) {
					disrupted++
				}
			}
			mostDisrupted = max(mostDisrupted, disrupted)
			g.Expect(nodes).To(HaveLen(2))
			for _, node := range nodes {
				g.Expect(node.Status.NodeInfo.KubeletVersion).To(HavePrefix(want), "node %s", node.Name)
			}
			instances := cluster.Emulator.Instances()
			for _, o := range old {
				g.Expect(instances).NotTo(ContainElement(HaveField("ID", o.ID)), "Linode %d still runs the old version", o.ID)
			}
			g.Expect(cluster.CheckConsistency(ctx)).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
		f.ExpectRunning(ctx, "web", 2)
		Expect(mostDisrupted).To(BeNumerically("<=", 1), "more nodes disrupted at once than the NodePool's budget allows")
		Expect(losses.undrained()).To(BeEmpty(), "pods that went without an eviction")
		Expect(losses.evicted()).NotTo(BeZero(), "no pod was drained: the upgrade proved nothing")
		for _, claim := range f.NodeClaims(ctx) {
			Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeDrifted)).To(BeFalse(), "NodeClaim %s is still drifted", claim.Name)
		}
	}

	It("replaces every node of a standard cluster, one at a time, after its control plane is upgraded", func(ctx SpecContext) {
		expectUpgradeReplacesNodes(ctx, "upgrade", cluster.LKEClusterID, "standard")
	})

	It("replaces every node of an enterprise cluster, one at a time, after its control plane is upgraded", func(ctx SpecContext) {
		enterpriseID, err := cluster.Emulator.AddLKECluster("e2e-enterprise", cluster.Region(), "enterprise")
		Expect(err).NotTo(HaveOccurred())
		By("pointing the controller at the enterprise cluster")
		Expect(cluster.RestartController(ctx, localclusterRestart("CLUSTER_NAME=e2e-enterprise", "LINODE_API_VERSION=v4beta"))).To(Succeed())
		// Registered first, so it runs last: the fixture's teardown needs this controller.
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.RestartController(ctx, localclusterRestart())).To(Succeed())
			Expect(cluster.Emulator.NewClient().DeleteLKECluster(ctx, enterpriseID)).To(Succeed())
		})
		expectUpgradeReplacesNodes(ctx, "enterprise-upgrade", enterpriseID, "enterprise")
	})
})

// nextMinor is the version after version on the tier, in the tier's spelling: "1.34" after
// "1.33", "v1.34.0+lke1" after "v1.33.4+lke2".
func nextMinor(version, tier string) string {
	GinkgoHelper()
	parts := strings.SplitN(minorOf(version), ".", 2)
	minor, err := strconv.Atoi(parts[1])
	Expect(err).NotTo(HaveOccurred())
	if tier == "enterprise" {
		return fmt.Sprintf("v%s.%d.0+lke1", parts[0], minor+1)
	}
	return fmt.Sprintf("%s.%d", parts[0], minor+1)
}

// minorOf is "<major>.<minor>" of any of the API's version spellings.
func minorOf(version string) string {
	return strings.Join(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)[:2], ".")
}

// localclusterRestart restarts the controller with the suite's settings and the overrides, which
// come last and win.
func localclusterRestart(overrides ...string) localcluster.RestartOptions {
	return localcluster.RestartOptions{Env: framework.LKEControllerEnv(overrides...)}
}
