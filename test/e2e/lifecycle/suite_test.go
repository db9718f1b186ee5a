// The standard tier's lifecycle specs on a local cluster and the emulator. The enterprise tier's
// run in package enterprise, on a local cluster of its own, beside this one: the specs wait
// mostly on core's disruption timers (15 s to validate a consolidation, a disruption pass every
// 10 s), so the two tiers side by side take half the time they take one after the other.
package lifecycle_test

import (
	"testing"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

var cluster *localcluster.Cluster

func TestLifecycle(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, a node's life on the standard tier (emulator)")
}

var _ = framework.RegisterSuite(framework.LKECluster("lifecycle"), func(c *localcluster.Cluster) { cluster = c })

var _ = lifecycle.Describe(lifecycle.LocalTier("standard", func() *localcluster.Cluster { return cluster }))
