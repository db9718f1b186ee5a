// Package framework is what the end-to-end suites share: a local cluster started for a Ginkgo
// suite (package localcluster), and a fixture per spec, its own LinodeNodeClass and NodePool,
// whose pods select the NodePool so that specs never use each other's nodes, and whose teardown
// checks that Kubernetes and the emulator's account agree and that nothing is left behind.
package framework

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Namespace is where the specs' deployments run.
const Namespace = "default"

// RegisterSuite registers, at the top level of a suite's package, what runs around its specs: the
// suite's local cluster, started in BeforeSuite with opts and handed to started, and stopped when
// the suite ends; after each spec, a check that no component or the controller died, that
// kube-apiserver refused the controller, which runs as the chart's ServiceAccount, nothing, and
// that the emulator refused none of the controller's Linode request bodies by Linode's request
// rules (test/emulator/requestrules). The components' logs are kept, and their directory
// printed, when a spec failed.
func RegisterSuite(opts localcluster.Options, started func(*localcluster.Cluster)) bool {
	var cluster *localcluster.Cluster
	ginkgo.BeforeSuite(func(ctx ginkgo.SpecContext) {
		cluster = startCluster(ctx, opts)
		started(cluster)
	}, ginkgo.NodeTimeout(5*time.Minute))
	ginkgo.ReportAfterEach(recordFailure)
	ginkgo.AfterEach(func() {
		gomega.Expect(cluster.CheckHealthy()).To(gomega.Succeed(), "a component or the controller died")
		refusals, err := cluster.ControllerRefusals()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(refusals).To(gomega.BeEmpty(), "kube-apiserver refused the controller requests the chart's RBAC should allow")
		gomega.Expect(cluster.LinodeRefusals()).To(gomega.BeEmpty(), "the controller sent Linode request bodies that Linode's request rules refuse")
	})
	return true
}

func startCluster(ctx context.Context, opts localcluster.Options) *localcluster.Cluster {
	ginkgo.GinkgoHelper()
	workDir, err := os.MkdirTemp("", "karpenter-linode-e2e-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	opts.WorkDir = workDir
	opts.Progress = func(step string) { fmt.Fprintln(ginkgo.GinkgoWriter, step) }
	cluster, err := localcluster.Start(ctx, opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() {
		gomega.Expect(cluster.Stop()).To(gomega.Succeed())
		if failed.Load() {
			fmt.Fprintf(os.Stderr, "logs of the cluster's components and the controller: %s\n", workDir)
			return
		}
		gomega.Expect(os.RemoveAll(workDir)).To(gomega.Succeed())
	})
	return cluster
}

// RunSpecs runs a suite's specs with the waits every suite uses: a spec's Eventually gives up
// after 2 minutes, polling every 250 ms. Every wait is given the spec's context; without
// EnforceDefaultTimeoutsWhenUsingContexts such a wait has no timeout of its own and a missing
// behaviour hangs the suite instead of failing the spec.
func RunSpecs(t *testing.T, description string) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(2 * time.Minute)
	gomega.SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	gomega.EnforceDefaultTimeoutsWhenUsingContexts()
	ginkgo.RunSpecs(t, description)
}

// failed keeps the cluster's logs after a failing run.
var failed atomic.Bool

// recordFailure notes a failed spec, so that the cluster's logs are kept.
func recordFailure(report ginkgo.SpecReport) {
	if report.Failed() {
		failed.Store(true)
	}
}

var specCounter atomic.Int32

// Fixture is one spec's LinodeNodeClass and NodePool on a cluster.
type Fixture struct {
	Name      string
	NodeClass *v1.LinodeNodeClass
	NodePool  *karpv1.NodePool
	cluster   *localcluster.Cluster
}

// NewFixture returns a NodeClass with spec and a NodePool allowing the standard and dedicated
// plans, with disruption tuned for a test: consolidate empty or under-used nodes after 1 s, all at
// once. Create them with Create.
func NewFixture(cluster *localcluster.Cluster, prefix string, spec v1.LinodeNodeClassSpec) *Fixture {
	name := fmt.Sprintf("%s-%d", prefix, specCounter.Add(1))
	return &Fixture{
		Name:      name,
		cluster:   cluster,
		NodeClass: test.LinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}),
		NodePool: &karpv1.NodePool{
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

func (f *Fixture) kube() client.Client { return f.cluster.Kube }

// Create creates the NodeClass and NodePool, waits until both are Ready, and registers the
// spec's teardown and end-of-spec checks.
func (f *Fixture) Create(ctx context.Context) {
	ginkgo.GinkgoHelper()
	gomega.Expect(f.kube().Create(ctx, f.NodeClass)).To(gomega.Succeed())
	gomega.Expect(f.kube().Create(ctx, f.NodePool)).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(f.kube().Get(ctx, client.ObjectKeyFromObject(f.NodeClass), f.NodeClass)).To(gomega.Succeed())
		g.Expect(f.NodeClass.StatusConditions().Root().IsTrue()).To(gomega.BeTrue(), "LinodeNodeClass %s is not Ready: %v", f.Name, f.NodeClass.Status.Conditions)
		g.Expect(f.kube().Get(ctx, client.ObjectKeyFromObject(f.NodePool), f.NodePool)).To(gomega.Succeed())
		g.Expect(f.NodePool.StatusConditions().Root().IsTrue()).To(gomega.BeTrue(), "NodePool %s is not Ready", f.Name)
	}).WithContext(ctx).Should(gomega.Succeed())
	ginkgo.DeferCleanup(f.teardown)
}

// teardown checks that Kubernetes and Linode agree, deletes the spec's objects and checks that
// no Linode resource is left behind.
func (f *Fixture) teardown(ctx context.Context) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(f.cluster.CheckConsistency).WithContext(ctx).Should(gomega.Succeed(), "Kubernetes and Linode disagree at the end of the spec")
	gomega.Expect(f.kube().DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(Namespace), client.MatchingLabels{"e2e": f.Name})).To(gomega.Succeed())
	gomega.Expect(f.kube().DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(Namespace), client.MatchingLabels{"e2e": f.Name},
		client.GracePeriodSeconds(0))).To(gomega.Succeed())
	gomega.Expect(client.IgnoreNotFound(f.kube().Delete(ctx, f.NodePool))).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(f.NodeClaims(ctx)).To(gomega.BeEmpty())
		g.Expect(f.cluster.CheckNoLinodeResources()).To(gomega.Succeed())
	}).WithContext(ctx).Should(gomega.Succeed(), "resources left after deleting NodePool %s", f.Name)
	gomega.Expect(client.IgnoreNotFound(f.kube().Delete(ctx, f.NodeClass))).To(gomega.Succeed())
	gomega.Eventually(func() error {
		return f.kube().Get(ctx, client.ObjectKeyFromObject(f.NodeClass), &v1.LinodeNodeClass{})
	}).WithContext(ctx).Should(gomega.MatchError(gomega.ContainSubstring("not found")))
	gomega.Eventually(f.cluster.CheckConsistency).WithContext(ctx).Should(gomega.Succeed())
}

// Deployment returns a deployment of pause pods, each asking for cpu, pinned to the NodePool.
func (f *Fixture) Deployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name, "e2e": f.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					NodeSelector:                  map[string]string{karpv1.NodePoolLabelKey: f.Name},
					Containers: []corev1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
					}},
				},
			},
		},
	}
}

// NodeClaims are the NodePool's NodeClaims.
func (f *Fixture) NodeClaims(ctx context.Context) []karpv1.NodeClaim {
	ginkgo.GinkgoHelper()
	var claims karpv1.NodeClaimList
	gomega.Expect(f.kube().List(ctx, &claims, client.MatchingLabels{karpv1.NodePoolLabelKey: f.Name})).To(gomega.Succeed())
	return claims.Items
}

// NodeClaimOf is the NodeClaim of the node the pod runs on.
//
// kube-scheduler may bind a pod to a node, and kwok run it, before Karpenter has recorded the
// node's name on its NodeClaim (registration), so the NodeClaim is waited for.
func (f *Fixture) NodeClaimOf(ctx context.Context, pod corev1.Pod) *karpv1.NodeClaim {
	ginkgo.GinkgoHelper()
	var found *karpv1.NodeClaim
	gomega.Eventually(func() bool {
		for _, claim := range f.NodeClaims(ctx) {
			if claim.Status.NodeName == pod.Spec.NodeName {
				found = &claim
				return true
			}
		}
		return false
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(gomega.BeTrue(), "pod %s runs on %q, which no NodeClaim of %s launched", pod.Name, pod.Spec.NodeName, f.Name)
	return found
}

// Nodes are the NodePool's Nodes.
func (f *Fixture) Nodes(ctx context.Context) []corev1.Node {
	ginkgo.GinkgoHelper()
	var nodes corev1.NodeList
	gomega.Expect(f.kube().List(ctx, &nodes, client.MatchingLabels{karpv1.NodePoolLabelKey: f.Name})).To(gomega.Succeed())
	return nodes.Items
}

// Pods are the app's pods that are not being deleted.
func (f *Fixture) Pods(ctx context.Context, app string) []corev1.Pod {
	ginkgo.GinkgoHelper()
	var pods corev1.PodList
	gomega.Expect(f.kube().List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels{"app": app, "e2e": f.Name})).To(gomega.Succeed())
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !p.DeletionTimestamp.IsZero() })
}

// ExpectRunning waits until the app has exactly n running pods.
func (f *Fixture) ExpectRunning(ctx context.Context, app string, n int) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		running := slices.DeleteFunc(f.Pods(ctx, app), func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
		g.Expect(running).To(gomega.HaveLen(n), "running pods of %s", app)
	}).WithContext(ctx).Should(gomega.Succeed())
}

// Scale sets the deployment's replicas.
func Scale(ctx context.Context, kube client.Client, deployment *appsv1.Deployment, replicas int32) {
	ginkgo.GinkgoHelper()
	gomega.Expect(kube.Get(ctx, client.ObjectKeyFromObject(deployment), deployment)).To(gomega.Succeed())
	patch := client.MergeFrom(deployment.DeepCopy())
	deployment.Spec.Replicas = &replicas
	gomega.Expect(kube.Patch(ctx, deployment, patch)).To(gomega.Succeed())
}

// Consistently is a short Consistently, for "this does not happen".
func Consistently(ctx context.Context, actual any) gomega.AsyncAssertion {
	return gomega.Consistently(actual).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(500 * time.Millisecond)
}
