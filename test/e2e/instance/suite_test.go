// Package instance_test runs instance mode end to end, beside the LKE suite (package e2e) and
// on a local cluster of its own: the controller binary launches plain Linodes in the emulator,
// and each one boots as it would on Linode, reading its user data from the Metadata service and
// joining the real kube-apiserver through TLS bootstrap with its NodeClaim's bootstrap token;
// kube-controller-manager approves and signs its certificate. Each spec brings its own
// LinodeNodeClass and NodePool (package framework) and ends by checking the emulator: no Linode
// without a NodeClaim, no NodeClaim without exactly one Node, nothing left after teardown.
package instance_test

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// garbageCollectionGracePeriod is how long a leaked Linode lives: long enough for the controller's
// cache to show a NodeClaim it just created, short enough for a spec.
const garbageCollectionGracePeriod = 15 * time.Second

// garbageCollectionEnv is the controller's short garbage-collection grace period.
var garbageCollectionEnv = []string{"GARBAGE_COLLECTION_GRACE_PERIOD=" + garbageCollectionGracePeriod.String()}

// controllerEnv also has shorter batching windows than core's defaults (1 s idle, 10 s max), which
// keep each spec short.
var controllerEnv = append([]string{"BATCH_IDLE_DURATION=500ms", "BATCH_MAX_DURATION=3s"}, garbageCollectionEnv...)

var (
	cluster *localcluster.Cluster
	kube    client.Client
)

func TestInstanceMode(t *testing.T) {
	framework.RunSpecs(t, "End-to-end, instance mode")
}

var _ = framework.RegisterSuite(localcluster.Options{
	Mode:          localcluster.ModeInstance,
	ClusterName:   "e2e-instance",
	DelayScale:    framework.DelayScale,
	ControllerEnv: controllerEnv,
}, func(c *localcluster.Cluster) { cluster, kube = c, c.Kube })
