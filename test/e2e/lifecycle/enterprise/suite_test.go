// Package enterprise runs the lifecycle specs (package lifecycle) on the enterprise tier, on a
// local cluster whose seeded LKE cluster is an enterprise one, the controller using API v4beta.
package enterprise_test

import (
	"testing"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

var cluster *localcluster.Cluster

func TestLifecycleEnterprise(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, a node's life on the enterprise tier (emulator)")
}

var _ = framework.RegisterSuite(enterpriseCluster(), func(c *localcluster.Cluster) { cluster = c })

var _ = lifecycle.Describe(lifecycle.LocalTier("enterprise", func() *localcluster.Cluster { return cluster }))

func enterpriseCluster() localcluster.Options {
	opts := framework.LKECluster("lifecycle-enterprise")
	opts.Tier = "enterprise"
	return opts
}
