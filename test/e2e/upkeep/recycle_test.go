package upkeep_test

import (
	"context"
	"fmt"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// Routes by which Karpenter could delete a node behind core's drain.
var deleteRoutes = []string{"DELETE /lke/clusters/{clusterId}/pools/{poolId}", "DELETE /lke/clusters/{clusterId}/nodes/{nodeId}"}

var _ = Describe("LKE recycles", func() {
	// recycled sets up two nodes running a deployment whose PodDisruptionBudget allows one pod
	// down at a time, with consolidation off so that any node Karpenter deletes is a mistake.
	recycled := func(ctx context.Context, prefix string) (*framework.Fixture, *podLosses) {
		GinkgoHelper()
		f := newFixture(prefix)
		f.NodePool.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration("Never")
		f.Create(ctx)
		runOnTwoNodes(ctx, f)
		losses := watchPodLosses(ctx, f.Name)
		cluster.Emulator.ResetCounters()
		return f, losses
	}

	// expectConverged waits until the pods run again, every Linode and pool has exactly one
	// NodeClaim, and none of the nodes was deleted by Karpenter or lost a pod undrained.
	expectConverged := func(ctx context.Context, f *framework.Fixture, losses *podLosses, replaced []emulator.InstanceInfo) {
		GinkgoHelper()
		f.ExpectRunning(ctx, "web", 2)
		Eventually(func(g Gomega) {
			g.Expect(cluster.CheckConsistency(ctx)).To(Succeed())
			claims := f.NodeClaims(ctx)
			for _, claim := range claims {
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue(), "NodeClaim %s is not initialized", claim.Name)
			}
			g.Expect(claims).To(HaveLen(len(cluster.Emulator.Pools(cluster.LKEClusterID))), "one NodeClaim per pool")
			instances := cluster.Emulator.Instances()
			for _, old := range replaced {
				g.Expect(instances).NotTo(ContainElement(HaveField("ID", old.ID)), "Linode %d was recycled", old.ID)
			}
		}).WithContext(ctx).Should(Succeed())
		for _, route := range deleteRoutes {
			Expect(cluster.Emulator.Counters()[route]).To(BeZero(), "Karpenter deleted a node (%s) while nothing asked it to", route)
		}
		Expect(losses.undrained()).To(BeEmpty(), "pods that went without an eviction")
		Expect(losses.evicted()).NotTo(BeZero(), "no pod was drained: the recycle proved nothing")
	}

	It("drains a node recycled alone and a pool recycled whole, and adopts their replacements", func(ctx SpecContext) {
		f, losses := recycled(ctx, "recycle")
		instances := linodesOf(f.Nodes(ctx))
		Expect(instances).To(HaveLen(2))
		linode := cluster.Emulator.NewClient()

		By("recycling one node, then the other's pool")
		Expect(linode.RecycleLKENodePoolNode(ctx, cluster.LKEClusterID, instances[0].NodeID)).To(Succeed())
		Expect(linode.RecycleLKENodePool(ctx, cluster.LKEClusterID, instances[1].LKEPoolID)).To(Succeed())
		expectConverged(ctx, f, losses, instances)
	})

	It("drains every node of a cluster recycle, one at a time, and adopts their replacements", func(ctx SpecContext) {
		f, losses := recycled(ctx, "cluster-recycle")
		instances := linodesOf(f.Nodes(ctx))
		Expect(cluster.Emulator.NewClient().RecycleLKEClusterNodes(ctx, cluster.LKEClusterID)).To(Succeed())
		expectConverged(ctx, f, losses, instances)
	})
})

// runOnTwoNodes runs the deployment "web" of the fixture: two pods that must be on different
// nodes, under a PodDisruptionBudget that allows one of them down at a time.
func runOnTwoNodes(ctx context.Context, f *framework.Fixture) {
	GinkgoHelper()
	app := f.Deployment("web", 2, "1")
	app.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: app.Spec.Selector.MatchLabels},
		}},
	}}
	budget := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: f.Name, Namespace: framework.Namespace},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       app.Spec.Selector,
		},
	}
	Expect(kube.Create(ctx, budget)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(kube.Delete(ctx, budget)).To(Succeed()) })
	Expect(kube.Create(ctx, app)).To(Succeed())
	f.ExpectRunning(ctx, "web", 2)
}

// linodesOf are the emulator's Linodes behind the nodes, in the nodes' order.
func linodesOf(nodes []corev1.Node) []emulator.InstanceInfo {
	GinkgoHelper()
	var out []emulator.InstanceInfo
	for _, node := range nodes {
		id, err := nodeprovider.ParseProviderID(node.Spec.ProviderID)
		Expect(err).NotTo(HaveOccurred())
		instance, found := instanceByID(cluster.Emulator.Instances(), id)
		Expect(found).To(BeTrue(), "node %s has no Linode", node.Name)
		out = append(out, instance)
	}
	return out
}

func instanceByID(instances []emulator.InstanceInfo, id int) (emulator.InstanceInfo, bool) {
	i := slices.IndexFunc(instances, func(in emulator.InstanceInfo) bool { return in.ID == id })
	if i < 0 {
		return emulator.InstanceInfo{}, false
	}
	return instances[i], true
}

// podLosses records how the spec's pods went: by eviction (a drain, which PodDisruptionBudgets
// govern) or otherwise (a node deleted under them).
type podLosses struct {
	mu         sync.Mutex
	byEviction int
	withoutOne []string
}

func (l *podLosses) evicted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byEviction
}

func (l *podLosses) undrained() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.withoutOne)
}

// watchPodLosses watches the pods of the fixture until the spec ends (before its teardown deletes
// them on purpose).
func watchPodLosses(ctx context.Context, fixtureName string) *podLosses {
	GinkgoHelper()
	config, err := clientcmd.BuildConfigFromFlags("", cluster.KubeconfigPath)
	Expect(err).NotTo(HaveOccurred())
	clientset, err := kubernetes.NewForConfig(config)
	Expect(err).NotTo(HaveOccurred())
	losses := &podLosses{}
	watchCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	informer := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(clientset.CoreV1().RESTClient(), "pods", framework.Namespace,
		func(options *metav1.ListOptions) { options.LabelSelector = "e2e=" + fixtureName }), &corev1.Pod{}, 0, cache.Indexers{})
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			if tombstone, isTombstone := obj.(cache.DeletedFinalStateUnknown); isTombstone {
				pod, ok = tombstone.Obj.(*corev1.Pod)
			}
		}
		if !ok {
			return
		}
		losses.mu.Lock()
		defer losses.mu.Unlock()
		if slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.DisruptionTarget && c.Reason == "EvictionByEvictionAPI"
		}) {
			losses.byEviction++
			return
		}
		losses.withoutOne = append(losses.withoutOne, fmt.Sprintf("%s on %s (%v)", pod.Name, pod.Spec.NodeName, pod.Status.Conditions))
	}})
	Expect(err).NotTo(HaveOccurred())
	go informer.Run(watchCtx.Done())
	Eventually(informer.HasSynced).Should(BeTrue())
	// Registered after the fixture's teardown, so it runs first: the teardown deletes pods itself.
	DeferCleanup(stop)
	return losses
}
