// Package disruption runs, end to end, what takes nodes away or keeps them from coming: drift,
// a LinodeNodeClass deleted while in use, a node deleted by hand, nodes that boot slowly and a
// controller that crashes in the middle of a launch. It has a local cluster of its own (package
// framework), so that it runs beside the other end-to-end suites rather than after them.
package disruption_test

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

func TestDisruption(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, disruption")
}

var _ = framework.RegisterSuite(framework.LKECluster("e2e"), func(c *localcluster.Cluster) { cluster, kube = c, c.Kube })

// newFixture is a spec's LinodeNodeClass, with the defaults LKE mode needs, and NodePool.
func newFixture(prefix string) *framework.Fixture {
	return framework.NewFixture(cluster, prefix, v1.LinodeNodeClassSpec{})
}
