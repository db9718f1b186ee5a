// Package e2e runs the whole system, as a user would: the controller binary against a local
// cluster of real Kubernetes components with kwok kubelets and the Linode API emulator (package
// localcluster). Each spec brings its own LinodeNodeClass and NodePool, pins its pods to that
// NodePool, and ends by checking the emulator: no Linode or LKE pool without a NodeClaim, no
// NodeClaim without exactly one Node, and after teardown no Linode resources at all.
package e2e_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestE2E(t *testing.T) {
	framework.RunSpecs(t, "End-to-end")
}

var _ = framework.RegisterSuite(framework.LKECluster("e2e"), func(c *localcluster.Cluster) { cluster, kube = c, c.Kube })
