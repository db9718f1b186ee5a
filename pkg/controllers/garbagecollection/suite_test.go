package garbagecollection_test

import (
	"context"
	"testing"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var (
	ctx        context.Context
	env        *environment.Environment
	emu        *test.Emulator
	lkeCluster *lke.Cluster
	nodes      *lke.Provider
	clk        *clocktesting.FakeClock
	recorder   *coretest.EventRecorder
	gc         *garbagecollection.Controller
	// gcClient is the controller's Kubernetes client, as its own user, so that a spec can take a
	// permission away from it.
	gcClient client.Client
)

// gcRole is what the controller may read: NodeClaims, Nodes and pods.
var gcRole = &rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "garbage-collection-test"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodeclaims"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch"}},
	},
}

func TestGarbageCollection(t *testing.T) { RunSuite(t, "Garbage collection", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment()
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "karpenter-gc"}, nil)
	Expect(err).ToNot(HaveOccurred())
	gcClient, err = client.New(user.Config(), client.Options{Scheme: env.Client.Scheme()})
	Expect(err).ToNot(HaveOccurred())
	ExpectApplied(ctx, env.Client, gcRole, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: gcRole.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: gcRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "karpenter-gc"}},
	})
	Eventually(func() error { return gcClient.List(ctx, &karpv1.NodeClaimList{}) }).Should(Succeed())
})

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	// The provider's listings age on the controller's clock: a run reads the pools anew once
	// the clock moved on by an interval, as it would an interval after the previous run.
	clk = clocktesting.NewFakeClock(time.Now())
	cloud := ExpectLKE(ctx, emu, env.Client, test.WithNodeProviderOptions(lke.WithClock(clk)))
	lkeCluster, nodes = cloud.Cluster, cloud.Pools()
	recorder = coretest.NewEventRecorder()
	gc = garbagecollection.NewController(gcClient, recorder, nodes, nodes.OwnershipTag(), garbagecollection.WithClock(clk))
})

var _ = AfterEach(func() {
	ExpectApplied(ctx, env.Client, gcRole)
	ExpectCleanedUp(ctx, env.Client)
})

// pool creates a single-node pool with the tags, as a launch would, and returns its id.
func pool(tags ...string) int {
	GinkgoHelper()
	created, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: tags})
	Expect(err).ToNot(HaveOccurred())
	return created.ID
}

// launchedPool is a pool launched for the NodeClaim name in the NodePool "default".
func launchedPool(nodeClaimName string) int {
	GinkgoHelper()
	return pool(nodeprovider.LKEClusterTag(lkeCluster.ID), nodeprovider.NodeClaimTag(nodeClaimName), nodeprovider.NodePoolTag("default"))
}

func poolIDs() []int {
	var ids []int
	for _, p := range emu.Pools(lkeCluster.ID) {
		ids = append(ids, p.ID)
	}
	return ids
}

// instanceOf is the provider ID of the pool's Linode.
func instanceOf(poolID int) string {
	GinkgoHelper()
	for _, instance := range emu.Instances() {
		if instance.LKEPoolID == poolID {
			return nodeprovider.ProviderID(instance.ID)
		}
	}
	Fail("the pool has no Linode")
	return ""
}

func nodeClaim(name, providerID string) *karpv1.NodeClaim {
	return coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: karpv1.NodeClaimStatus{ProviderID: providerID}})
}
