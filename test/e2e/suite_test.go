// Package e2e runs the whole system, as a user would: the controller binary against a local
// cluster of real Kubernetes components with kwok kubelets and the Linode API emulator (package
// localcluster). Each spec brings its own LinodeNodeClass and NodePool, pins its pods to that
// NodePool, and ends by checking the emulator: no Linode or LKE pool without a NodeClaim, no
// NodeClaim without exactly one Node, and after teardown no Linode resources at all.
package e2e_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestE2E(t *testing.T) {
	framework.RunSpecs(t, "End-to-end")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	cluster = framework.StartLKECluster(ctx, "e2e")
	kube = cluster.Kube
}, NodeTimeout(5*time.Minute))

var _ = ReportAfterEach(framework.RecordFailure)

var _ = AfterEach(func(ctx context.Context) {
	Expect(cluster.CheckHealthy()).To(Succeed(), "a component or the controller died")
})
