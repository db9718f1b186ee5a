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

// delayScale makes a Linode boot in about 3 s (160 s on Linode): slow enough that launches overlap
// and pods wait, fast enough for the suite to finish in minutes.
const delayScale = 0.02

// controllerEnv has shorter batching windows than core's defaults (1 s idle, 10 s max), which
// keeps each spec short, and maintenance settings scaled like the emulator's delays: the 2-hour
// lead time by delayScale, the 1-minute poll interval to the shortest allowed, 5 s.
var controllerEnv = []string{
	"BATCH_IDLE_DURATION=500ms", "BATCH_MAX_DURATION=3s",
	"MAINTENANCE_LEAD_TIME=" + scaled(2*time.Hour).String(), "MAINTENANCE_POLL_INTERVAL=5s",
}

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	// Every wait here is given the spec's context; without this, such a wait has no timeout of
	// its own and a missing behaviour hangs the suite instead of failing the spec.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "End-to-end")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	cluster = framework.StartCluster(ctx, localcluster.Options{
		ClusterName:   "e2e",
		DelayScale:    delayScale,
		ControllerEnv: controllerEnv,
		// Linode sells GPU plans in limited numbers; the GPU spec needs a couple.
		PlanCapacity: map[string]int{"g1-gpu-rtx6000-1": 2, "g1-gpu-rtx6000-2": 2},
	})
	kube = cluster.Kube
}, NodeTimeout(5*time.Minute))

var _ = ReportAfterEach(framework.RecordFailure)

var _ = AfterEach(func(ctx context.Context) {
	Expect(cluster.CheckHealthy()).To(Succeed(), "a component or the controller died")
})
