package e2e_test

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	sigsyaml "sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test/alpharelease"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

// alphaReadmeNodeClass is the LinodeNodeClass of the alpha provider's README; its NodePool is
// the one of the alpha examples' simple.yaml.
const alphaReadmeNodeClass = `
apiVersion: karpenter.k8s.linode/v1alpha1
kind: LinodeNodeClass
metadata:
  name: default
spec:
  image: "linode/ubuntu22.04"
`

var _ = Describe("Manifests of the alpha provider", func() {
	It("apply unchanged and provision nodes for each of their NodePools", func(ctx SpecContext) {
		shared.Require(GinkgoT(), shared.SeedCompat)
		examples, err := alpharelease.Examples()
		Expect(err).NotTo(HaveOccurred())
		readme := &unstructured.Unstructured{}
		Expect(sigsyaml.Unmarshal([]byte(alphaReadmeNodeClass), &readme.Object)).To(Succeed())
		var manifests []*unstructured.Unstructured
		for _, example := range examples {
			manifests = append(manifests, example.Objects...)
		}
		manifests = append(manifests, readme)

		var nodeClasses, nodePools []string
		for _, obj := range manifests {
			// As `kubectl apply --server-side` applies them.
			Expect(kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner("kubectl"))).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			switch obj.GetKind() {
			case "LinodeNodeClass":
				nodeClasses = append(nodeClasses, obj.GetName())
			case "NodePool":
				nodePools = append(nodePools, obj.GetName())
			}
		}
		slices.Sort(nodeClasses)
		nodeClasses = slices.Compact(nodeClasses)
		DeferCleanup(func(ctx context.Context) { deleteAlphaObjects(ctx, nodePools, nodeClasses) })
		Eventually(func(g Gomega) {
			for _, name := range nodeClasses {
				alpha := &unstructured.Unstructured{}
				alpha.SetAPIVersion("karpenter.k8s.linode/v1alpha1")
				alpha.SetKind("LinodeNodeClass")
				g.Expect(kube.Get(ctx, client.ObjectKey{Name: name}, alpha)).To(Succeed())
				conditions, _, _ := unstructured.NestedSlice(alpha.Object, "status", "conditions")
				g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", "Ready"), HaveKeyWithValue("status", "True"))),
					"LinodeNodeClass %s, read as v1alpha1, is not Ready", name)
			}
		}).WithContext(ctx).Should(Succeed())

		// One pod for each NodePool, selecting it and tolerating its taints.
		for _, name := range nodePools {
			nodePool := &karpv1.NodePool{}
			Expect(kube.Get(ctx, client.ObjectKey{Name: name}, nodePool)).To(Succeed())
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "alpha-" + name, Namespace: framework.Namespace, Labels: map[string]string{"e2e": "alpha"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					NodeSelector:                  map[string]string{karpv1.NodePoolLabelKey: name},
					Containers: []corev1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
					}},
				},
			}
			for _, taint := range nodePool.Spec.Template.Spec.Taints {
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect})
			}
			Expect(kube.Create(ctx, pod)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for _, name := range nodePools {
				pod := &corev1.Pod{}
				g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: framework.Namespace, Name: "alpha-" + name}, pod)).To(Succeed())
				g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning), "the pod of NodePool %s", name)
				node := &corev1.Node{}
				g.Expect(kube.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node)).To(Succeed())
				g.Expect(node.Labels).To(HaveKeyWithValue(karpv1.NodePoolLabelKey, name))
			}
		}).WithContext(ctx).Should(Succeed())
		Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed())
	})
})

// deleteAlphaObjects removes the spec's pods, NodePools and LinodeNodeClasses, and checks that
// every Linode resource went with them.
func deleteAlphaObjects(ctx context.Context, nodePools, nodeClasses []string) {
	GinkgoHelper()
	Expect(kube.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(framework.Namespace), client.MatchingLabels{"e2e": "alpha"}, client.GracePeriodSeconds(0))).To(Succeed())
	for _, name := range nodePools {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		var claims karpv1.NodeClaimList
		g.Expect(kube.List(ctx, &claims)).To(Succeed())
		g.Expect(claims.Items).To(BeEmpty())
		g.Expect(cluster.CheckNoLinodeResources()).To(Succeed())
	}).WithContext(ctx).Should(Succeed(), "resources left after deleting the alpha NodePools")
	for _, name := range nodeClasses {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		var remaining v1.LinodeNodeClassList
		g.Expect(kube.List(ctx, &remaining)).To(Succeed())
		g.Expect(slices.ContainsFunc(remaining.Items, func(nc v1.LinodeNodeClass) bool { return slices.Contains(nodeClasses, nc.Name) })).To(BeFalse())
	}).WithContext(ctx).Should(Succeed())
}
