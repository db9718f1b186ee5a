// Package upkeep runs, end to end, what Linode and LKE do to running nodes and the controller
// must carry through core's drain (LKE upgrades and recycles, scheduled maintenance and failed
// hosts), what the webhooks must serve through (a Linode API outage, a revoked token), and that
// the cluster launches what karpenter-linode plan predicted. It has
// a local cluster of its own (package framework), so that it runs beside the other end-to-end
// suites rather than after them.
package upkeep_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestUpkeep(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, upkeep")
}

var _ = framework.RegisterSuite(framework.LKECluster("e2e"), func(c *localcluster.Cluster) { cluster, kube = c, c.Kube })

// newFixture is a spec's LinodeNodeClass, with the defaults LKE mode needs, and NodePool.
func newFixture(prefix string) *framework.Fixture {
	return framework.NewFixture(cluster, prefix, v1.LinodeNodeClassSpec{})
}
