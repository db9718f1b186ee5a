package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

const namespace = "default"

var specCounter atomic.Int32

// fixture is one spec's LinodeNodeClass and NodePool. Its pods select the NodePool, so specs
// never use each other's nodes.
type fixture struct {
	name      string
	nodeClass *v1.LinodeNodeClass
	nodePool  *karpv1.NodePool
}

// newFixture returns a NodeClass and a NodePool allowing the standard and dedicated plans, with
// disruption tuned for a test: consolidate empty or under-used nodes after 1 s, all at once.
// Create them with create.
func newFixture(prefix string) *fixture {
	name := fmt.Sprintf("%s-%d", prefix, specCounter.Add(1))
	return &fixture{
		name:      name,
		nodeClass: test.LinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}),
		nodePool: &karpv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: karpv1.NodePoolSpec{
				Template: karpv1.NodeClaimTemplate{
					Spec: karpv1.NodeClaimTemplateSpec{
						NodeClassRef: test.NodeClassRef(name),
						Requirements: []karpv1.NodeSelectorRequirementWithMinValues{{
							Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard", "dedicated"},
						}},
					},
				},
				Disruption: karpv1.Disruption{
					ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
					ConsolidateAfter:    karpv1.MustParseNillableDuration("1s"),
					Budgets:             []karpv1.Budget{{Nodes: "100%"}},
				},
			},
		},
	}
}

// create creates the NodeClass and NodePool, waits until both are Ready, and registers the
// spec's teardown and end-of-spec checks.
func (f *fixture) create(ctx context.Context) {
	GinkgoHelper()
	Expect(kube.Create(ctx, f.nodeClass)).To(Succeed())
	Expect(kube.Create(ctx, f.nodePool)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(f.nodeClass), f.nodeClass)).To(Succeed())
		g.Expect(f.nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue(), "LinodeNodeClass %s is not Ready: %v", f.name, f.nodeClass.Status.Conditions)
		g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(f.nodePool), f.nodePool)).To(Succeed())
		g.Expect(f.nodePool.StatusConditions().Root().IsTrue()).To(BeTrue(), "NodePool %s is not Ready", f.name)
	}).WithContext(ctx).Should(Succeed())
	DeferCleanup(f.teardown)
}

// teardown checks that Kubernetes and Linode agree, deletes the spec's objects and checks that
// no Linode resource is left behind.
func (f *fixture) teardown(ctx context.Context) {
	GinkgoHelper()
	Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed(), "Kubernetes and Linode disagree at the end of the spec")
	Expect(kube.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(namespace), client.MatchingLabels{"e2e": f.name})).To(Succeed())
	Expect(kube.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace), client.MatchingLabels{"e2e": f.name},
		client.GracePeriodSeconds(0))).To(Succeed())
	Expect(client.IgnoreNotFound(kube.Delete(ctx, f.nodePool))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(f.nodeClaims(ctx)).To(BeEmpty())
		g.Expect(cluster.CheckNoLinodeResources()).To(Succeed())
	}).WithContext(ctx).Should(Succeed(), "resources left after deleting NodePool %s", f.name)
	Expect(client.IgnoreNotFound(kube.Delete(ctx, f.nodeClass))).To(Succeed())
	Eventually(func() error {
		return kube.Get(ctx, client.ObjectKeyFromObject(f.nodeClass), &v1.LinodeNodeClass{})
	}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
	Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed())
}

// deployment returns a deployment of pause pods, each asking for cpu, pinned to the NodePool.
func (f *fixture) deployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name, "e2e": f.name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					NodeSelector:                  map[string]string{karpv1.NodePoolLabelKey: f.name},
					Containers: []corev1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
					}},
				},
			},
		},
	}
}

func (f *fixture) nodeClaims(ctx context.Context) []karpv1.NodeClaim {
	GinkgoHelper()
	var claims karpv1.NodeClaimList
	Expect(kube.List(ctx, &claims, client.MatchingLabels{karpv1.NodePoolLabelKey: f.name})).To(Succeed())
	return claims.Items
}

// nodeClaimOf is the NodeClaim of the node the pod runs on.
func (f *fixture) nodeClaimOf(ctx context.Context, pod corev1.Pod) *karpv1.NodeClaim {
	GinkgoHelper()
	for _, claim := range f.nodeClaims(ctx) {
		if claim.Status.NodeName == pod.Spec.NodeName {
			return &claim
		}
	}
	Fail(fmt.Sprintf("pod %s runs on %q, which no NodeClaim of %s launched", pod.Name, pod.Spec.NodeName, f.name))
	return nil
}

func (f *fixture) nodes(ctx context.Context) []corev1.Node {
	GinkgoHelper()
	var nodes corev1.NodeList
	Expect(kube.List(ctx, &nodes, client.MatchingLabels{karpv1.NodePoolLabelKey: f.name})).To(Succeed())
	return nodes.Items
}

func (f *fixture) pods(ctx context.Context, app string) []corev1.Pod {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(kube.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app": app, "e2e": f.name})).To(Succeed())
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() })
}

// expectRunning waits until the app has exactly n running pods, each on a node of the NodePool.
func (f *fixture) expectRunning(ctx context.Context, app string, n int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pods := f.pods(ctx, app)
		running := slices.DeleteFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
		g.Expect(running).To(HaveLen(n), "running pods of %s", app)
	}).WithContext(ctx).Should(Succeed())
}

// scale sets the deployment's replicas.
func scale(ctx context.Context, deployment *appsv1.Deployment, replicas int32) {
	GinkgoHelper()
	Expect(kube.Get(ctx, client.ObjectKeyFromObject(deployment), deployment)).To(Succeed())
	patch := client.MergeFrom(deployment.DeepCopy())
	deployment.Spec.Replicas = &replicas
	Expect(kube.Patch(ctx, deployment, patch)).To(Succeed())
}

// plans lists the plans (instance types) of the nodes, sorted.
func plans(nodes []corev1.Node) []string {
	var out []string
	for _, node := range nodes {
		out = append(out, node.Labels[corev1.LabelInstanceTypeStable])
	}
	slices.Sort(out)
	return out
}

// cpuOf adds up the nodes' CPU capacity.
func cpuOf(nodes []corev1.Node) int64 {
	var total int64
	for _, node := range nodes {
		total += node.Status.Capacity.Cpu().Value()
	}
	return total
}

// consistently is a short Consistently, for "this does not happen".
func consistently(ctx context.Context, actual any) AsyncAssertion {
	return Consistently(actual).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(500 * time.Millisecond)
}

// hasTaint reports whether node carries a taint with the key and effect.
func hasTaint(node corev1.Node, key string, effect corev1.TaintEffect) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
}
