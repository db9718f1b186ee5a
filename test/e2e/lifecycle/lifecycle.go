// Package lifecycle holds the end-to-end specs of a node's life on both LKE tiers, written once
// for every place they run: launch, register, consolidate, drift, delete. Where they run is an
// Environment: a local cluster with the Linode API emulator (this package's own suite, part of
// `make test`, so the specs never rot), or a real LKE cluster in a real Linode account (package
// reallinode, `make e2e-linode`). The specs ask the same questions of both: Kubernetes through
// its API, Linode through the Linode API.
package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/linode/linodego"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// Namespace is where the specs' pods run.
const Namespace = "default"

// DriftTag is the tag the drift spec adds to the LinodeNodeClass, which makes its nodes drift.
const DriftTag = "karpenter-e2e-drifted"

// Environment is a cluster, with the provider's controller running for it, and the Linode account
// its nodes are launched in.
type Environment struct {
	// Kube is a client of the cluster, with Karpenter's and the provider's types registered.
	Kube client.Client
	// Linode is a client of the account, at the tier's API version.
	Linode *linodego.Client
	// LKEClusterID is the LKE cluster the controller launches pools into.
	LKEClusterID int
	// RunTag is put on the specs' LinodeNodeClasses, so that every pool they launch carries it
	// (and, on the enterprise tier, every Linode) and a sweep by the tag finds what a run left.
	RunTag string
	// Plan is the only plan the specs' NodePool may launch.
	Plan string
	// PodCPU is each pod's CPU request (PodCPU): every pod needs a node of its own.
	PodCPU string
	// NodeTimeout bounds each wait for a node to launch, register, be replaced or go: seconds
	// with the emulator's scaled delays, minutes on Linode.
	NodeTimeout time.Duration
	// Poll is how often a wait asks again: often on the emulator, within Linode's rate limits on
	// Linode.
	Poll time.Duration
}

// PodCPU is the CPU request of the specs' pods on a plan of vcpus: 55% of its CPU, more than half
// of what its node offers pods, so that two pods need two nodes; and less than the node offers
// once LKE's DaemonSets (the CNI's, kube-proxy, the CSI driver's) have their share.
func PodCPU(vcpus int) string { return fmt.Sprintf("%dm", vcpus*550) }

// Tier is where one tier's specs run: SetUp, run once before them, readies the controller for
// the tier's LKE cluster and returns the environment; it registers its own clean-up
// (ginkgo.DeferCleanup).
type Tier struct {
	Name  string
	SetUp func(ctx context.Context) *Environment
}

// Describe registers the specs, one ordered container per tier, each tier after the one before
// (a real run starts one tier's cluster and controller once the previous tier's are done). Call
// it at the top level of a suite.
func Describe(tiers ...Tier) bool {
	return ginkgo.Describe("A node's life", ginkgo.Ordered, func() {
		for _, tier := range tiers {
			ginkgo.Context("on the "+tier.Name+" tier", ginkgo.Ordered, func() { describeTier(tier) })
		}
	})
}

func describeTier(tier Tier) {
	var (
		env        *Environment
		nodeClass  *v1.LinodeNodeClass
		nodePool   *karpv1.NodePool
		deployment *appsv1.Deployment
		// launched are the NodeClaims of the launch spec; the later specs follow what became of them.
		launched []karpv1.NodeClaim
	)
	name := "lifecycle-" + tier.Name

	// eventually is a wait bounded by the environment's node timeout, polled at its pace.
	eventually := func(ctx context.Context, actual any) gomega.AsyncAssertion {
		return gomega.Eventually(actual).WithContext(ctx).WithTimeout(env.NodeTimeout).WithPolling(env.Poll)
	}
	claims := func(ctx context.Context, g gomega.Gomega) []karpv1.NodeClaim {
		var list karpv1.NodeClaimList
		g.Expect(env.Kube.List(ctx, &list, client.MatchingLabels{karpv1.NodePoolLabelKey: name})).To(gomega.Succeed())
		return slices.DeleteFunc(list.Items, func(c karpv1.NodeClaim) bool { return !c.DeletionTimestamp.IsZero() })
	}
	runningPods := func(ctx context.Context, g gomega.Gomega) []corev1.Pod {
		var pods corev1.PodList
		g.Expect(env.Kube.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels{"app": name})).To(gomega.Succeed())
		return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
			return !p.DeletionTimestamp.IsZero() || p.Status.Phase != corev1.PodRunning
		})
	}
	// runTagPools are the cluster's LKE pools that carry the run's tag: the specs' nodes.
	runTagPools := func(ctx context.Context, g gomega.Gomega) []linodego.LKENodePool {
		pools, err := env.Linode.ListLKENodePools(ctx, env.LKEClusterID, nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return slices.DeleteFunc(pools, func(p linodego.LKENodePool) bool { return !slices.Contains(p.Tags, env.RunTag) })
	}
	expectLinodeGone := func(ctx context.Context, claim karpv1.NodeClaim) {
		ginkgo.GinkgoHelper()
		id, err := nodeprovider.ParseProviderID(claim.Status.ProviderID)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		eventually(ctx, func() error {
			_, err := env.Linode.GetInstance(ctx, id)
			return err
		}).Should(gomega.Satisfy(linodego.IsNotFound), "Linode %d of NodeClaim %s is deleted", id, claim.Name)
	}

	ginkgo.BeforeAll(func(ctx context.Context) {
		env = tier.SetUp(ctx)
		nodeClass = test.LinodeNodeClass(v1.LinodeNodeClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1.LinodeNodeClassSpec{Tags: []v1.Tag{v1.Tag(env.RunTag)}},
		})
		nodePool = &karpv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: karpv1.NodePoolSpec{
				Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
					NodeClassRef: test.NodeClassRef(name),
					Requirements: []karpv1.NodeSelectorRequirementWithMinValues{{
						Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{env.Plan},
					}},
				}},
				Disruption: karpv1.Disruption{
					ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
					ConsolidateAfter:    karpv1.MustParseNillableDuration("1s"),
					Budgets:             []karpv1.Budget{{Nodes: "100%"}},
				},
			},
		}
		deployment = pauseDeployment(name, env.PodCPU)
		// Registered first, so that it runs last: whatever a failed spec left, the NodePool's
		// deletion takes its nodes, and the LinodeNodeClass goes once they are gone.
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(client.IgnoreNotFound(env.Kube.Delete(ctx, deployment))).To(gomega.Succeed())
			gomega.Expect(client.IgnoreNotFound(env.Kube.Delete(ctx, nodePool))).To(gomega.Succeed())
			gomega.Expect(client.IgnoreNotFound(env.Kube.Delete(ctx, nodeClass))).To(gomega.Succeed())
			eventually(ctx, func() bool {
				return apierrors.IsNotFound(env.Kube.Get(ctx, client.ObjectKeyFromObject(nodeClass), &v1.LinodeNodeClass{}))
			}).Should(gomega.BeTrue(), "LinodeNodeClass %s goes once its nodes are gone", name)
		})
		gomega.Expect(env.Kube.Create(ctx, nodeClass)).To(gomega.Succeed())
		gomega.Expect(env.Kube.Create(ctx, nodePool)).To(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			g.Expect(env.Kube.Get(ctx, client.ObjectKeyFromObject(nodeClass), nodeClass)).To(gomega.Succeed())
			g.Expect(nodeClass.StatusConditions().Root().IsTrue()).To(gomega.BeTrue(), "LinodeNodeClass %s is Ready: %v", name, nodeClass.Status.Conditions)
			g.Expect(env.Kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool)).To(gomega.Succeed())
			g.Expect(nodePool.StatusConditions().Root().IsTrue()).To(gomega.BeTrue(), "NodePool %s is Ready", name)
		}).Should(gomega.Succeed())
	})

	ginkgo.It("launches a Linode, in an LKE pool of the cluster carrying the run's tag, for each pod that fits no node", func(ctx context.Context) {
		gomega.Expect(env.Kube.Create(ctx, deployment)).To(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			launched = claims(ctx, g)
			g.Expect(launched).To(gomega.HaveLen(2), "one NodeClaim per pod: a node of %s holds one pod of %s CPU", env.Plan, env.PodCPU)
			for _, claim := range launched {
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched)).To(gomega.BeTrue(), "NodeClaim %s launched", claim.Name)
			}
		}).Should(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			pools := runTagPools(ctx, g)
			var poolLinodes []int
			for _, pool := range pools {
				g.Expect(pool.Type).To(gomega.Equal(env.Plan))
				for _, node := range pool.Linodes {
					poolLinodes = append(poolLinodes, node.InstanceID)
				}
			}
			for _, claim := range launched {
				id, err := nodeprovider.ParseProviderID(claim.Status.ProviderID)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				instance, err := env.Linode.GetInstance(ctx, id)
				g.Expect(err).NotTo(gomega.HaveOccurred(), "NodeClaim %s's Linode", claim.Name)
				g.Expect(instance.Type).To(gomega.Equal(env.Plan))
				if tier.Name == "enterprise" {
					g.Expect(instance.Tags).To(gomega.ContainElement(env.RunTag), "the enterprise tier copies the pool's tags to its Linodes")
				}
				g.Expect(poolLinodes).To(gomega.ContainElement(id), "Linode %d is a node of a pool with the run's tag %s", id, env.RunTag)
			}
		}).Should(gomega.Succeed())
	})

	ginkgo.It("registers each Linode as its NodeClaim's Node and runs the pods there, one per node", func(ctx context.Context) {
		eventually(ctx, func(g gomega.Gomega) {
			current := claims(ctx, g)
			g.Expect(current).To(gomega.HaveLen(2))
			var nodes []string
			for _, claim := range current {
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(gomega.BeTrue(), "NodeClaim %s registered and initialised", claim.Name)
				node := &corev1.Node{}
				g.Expect(env.Kube.Get(ctx, client.ObjectKey{Name: claim.Status.NodeName}, node)).To(gomega.Succeed())
				g.Expect(node.Spec.ProviderID).To(gomega.Equal(claim.Status.ProviderID))
				nodes = append(nodes, node.Name)
			}
			pods := runningPods(ctx, g)
			g.Expect(pods).To(gomega.HaveLen(2))
			g.Expect(pods[0].Spec.NodeName).NotTo(gomega.Equal(pods[1].Spec.NodeName))
			for _, pod := range pods {
				g.Expect(nodes).To(gomega.ContainElement(pod.Spec.NodeName), "pod %s runs on a node of the NodePool", pod.Name)
			}
		}).Should(gomega.Succeed())
	})

	ginkgo.It("consolidates: deletes the node a scale-down leaves empty, and its Linode", func(ctx context.Context) {
		before := launched
		gomega.Expect(env.Kube.Get(ctx, client.ObjectKeyFromObject(deployment), deployment)).To(gomega.Succeed())
		patch := client.MergeFrom(deployment.DeepCopy())
		deployment.Spec.Replicas = ptr.To[int32](1)
		gomega.Expect(env.Kube.Patch(ctx, deployment, patch)).To(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			launched = claims(ctx, g)
			g.Expect(launched).To(gomega.HaveLen(1))
			g.Expect(runningPods(ctx, g)).To(gomega.ConsistOf(gomega.HaveField("Spec.NodeName", launched[0].Status.NodeName)))
		}).Should(gomega.Succeed())
		for _, claim := range before {
			if claim.Name != launched[0].Name {
				expectLinodeGone(ctx, claim)
			}
		}
	})

	ginkgo.It("replaces a node whose LinodeNodeClass changed (drift), the new pool with the new tag", func(ctx context.Context) {
		drifted := launched[0]
		gomega.Expect(env.Kube.Get(ctx, client.ObjectKeyFromObject(nodeClass), nodeClass)).To(gomega.Succeed())
		patch := client.MergeFrom(nodeClass.DeepCopy())
		nodeClass.Spec.Tags = append(nodeClass.Spec.Tags, DriftTag)
		gomega.Expect(env.Kube.Patch(ctx, nodeClass, patch)).To(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			launched = claims(ctx, g)
			g.Expect(launched).To(gomega.HaveLen(1))
			g.Expect(launched[0].Name).NotTo(gomega.Equal(drifted.Name), "the drifted NodeClaim is replaced")
			g.Expect(launched[0].StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(gomega.BeTrue())
			g.Expect(runningPods(ctx, g)).To(gomega.ConsistOf(gomega.HaveField("Spec.NodeName", launched[0].Status.NodeName)))
			pools := runTagPools(ctx, g)
			g.Expect(pools).To(gomega.HaveLen(1))
			g.Expect(pools[0].Tags).To(gomega.ContainElement(DriftTag), "the replacement's pool carries the new tag")
		}).Should(gomega.Succeed())
		expectLinodeGone(ctx, drifted)
	})

	ginkgo.It("deletes every node, Linode and pool when its NodePool is deleted", func(ctx context.Context) {
		last := launched
		gomega.Expect(env.Kube.Delete(ctx, nodePool)).To(gomega.Succeed())
		eventually(ctx, func(g gomega.Gomega) {
			var list karpv1.NodeClaimList
			g.Expect(env.Kube.List(ctx, &list, client.MatchingLabels{karpv1.NodePoolLabelKey: name})).To(gomega.Succeed())
			g.Expect(list.Items).To(gomega.BeEmpty())
			var nodes corev1.NodeList
			g.Expect(env.Kube.List(ctx, &nodes, client.MatchingLabels{karpv1.NodePoolLabelKey: name})).To(gomega.Succeed())
			g.Expect(nodes.Items).To(gomega.BeEmpty())
			g.Expect(runTagPools(ctx, g)).To(gomega.BeEmpty(), "no pool with the run's tag is left in the cluster")
		}).Should(gomega.Succeed())
		for _, claim := range last {
			expectLinodeGone(ctx, claim)
		}
	})
}

// pauseDeployment is two pause pods asking for cpu each, pinned to the NodePool name.
func pauseDeployment(name, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					NodeSelector:                  map[string]string{karpv1.NodePoolLabelKey: name},
					Containers: []corev1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
					}},
				},
			},
		},
	}
}
