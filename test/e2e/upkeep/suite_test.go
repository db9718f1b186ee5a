// Package upkeep runs, end to end, what Linode and LKE do to running nodes and the controller
// must carry through core's drain: LKE upgrades and recycles, scheduled maintenance and failed
// hosts. It has a local cluster of its own (package framework), so that it runs beside the other
// end-to-end suites rather than after them.
package upkeep_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestUpkeep(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, upkeep")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	cluster = framework.StartLKECluster(ctx, "e2e")
	kube = cluster.Kube
}, NodeTimeout(5*time.Minute))

var _ = ReportAfterEach(framework.RecordFailure)

var _ = AfterEach(func(ctx context.Context) {
	Expect(cluster.CheckHealthy()).To(Succeed(), "a component or the controller died")
})

// newFixture is a spec's LinodeNodeClass, with the defaults LKE mode needs, and NodePool.
func newFixture(prefix string) *framework.Fixture {
	return framework.NewFixture(cluster, prefix, v1.LinodeNodeClassSpec{})
}
