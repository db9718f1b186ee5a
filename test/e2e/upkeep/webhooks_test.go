package upkeep_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// The webhooks reach the controller through a Service whose endpoint is ready while the
// controller is (localcluster), so a controller that left its Service would fail these specs.
var _ = Describe("Webhooks while the Linode API fails", func() {
	It("convert v1alpha1 reads and taint joining LKE nodes through an outage and a revoked token, which the LinodeNodeClass, the metric and an event report", func(ctx SpecContext) {
		f := newFixture("webhooks")
		f.Create(ctx)

		By("an outage of the whole Linode API, through a restart of the controller")
		started := strings.Count(controllerLog(), controllersStarted)
		outage := cluster.Emulator.InjectFault(emulator.Fault{ErrorRate: 1, ErrorStatus: http.StatusServiceUnavailable})
		DeferCleanup(func() { cluster.Emulator.RemoveFault(outage) })
		Expect(cluster.RestartController(ctx, localcluster.RestartOptions{})).To(Succeed())
		Expect(strings.Count(controllerLog(), controllersStarted)).To(Equal(started), "the controllers started during the outage")
		claim := launchedNodeClaim(ctx, f)
		expectWebhooksServe(ctx, f, claim, "outage")
		cluster.Emulator.RemoveFault(outage)
		Eventually(func() int { return strings.Count(controllerLog(), controllersStarted) }).WithContext(ctx).
			Should(Equal(started+1), "the controllers start once the API answers")

		By("a token revoked on Linode's side")
		token := cluster.Emulator.Token()
		cluster.Emulator.RevokeToken()
		DeferCleanup(func() { cluster.Emulator.SetToken(token) })
		Eventually(func(g Gomega) {
			condition := apiAuthorized(ctx, g, f)
			g.Expect(condition.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition.Reason).To(Equal(nodeclass.ReasonTokenRefused))
			g.Expect(tokenRefusedMetric(g)).To(Equal("1"))
			g.Expect(hasEvent(ctx, g, f.NodeClass.Name, nodeclass.ReasonTokenRefused)).To(BeTrue(), "no %s event on LinodeNodeClass %s", nodeclass.ReasonTokenRefused, f.Name)
		}).WithContext(ctx).Should(Succeed())
		// kube-apiserver keeps its connections to a webhook open, whatever the Service's endpoints
		// say since; once restarted it connects again, through an endpoint that must be ready.
		Expect(cluster.RestartAPIServer(0)).To(Succeed())
		expectWebhooksServe(ctx, f, claim, "revoked")

		By("the token valid again")
		cluster.Emulator.SetToken(token)
		Eventually(func(g Gomega) {
			g.Expect(apiAuthorized(ctx, g, f).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(tokenRefusedMetric(g)).To(Equal("0"))
		}).WithContext(ctx).Should(Succeed())
	})
})

// controllersStarted is what the controller logs once the Linode API answered its start-up check
// and its controllers start.
const controllersStarted = "found the Linode side of the cluster"

func controllerLog() string {
	GinkgoHelper()
	content, err := os.ReadFile(cluster.ControllerLog())
	Expect(err).NotTo(HaveOccurred())
	return string(content)
}

// launchedNodeClaim is a NodeClaim of the fixture's NodePool whose node has not joined yet, as
// one is between its launch and its node's registration. It is made while core's controllers do
// not run: they would launch it, or delete it while its LinodeNodeClass is not ready. It has no
// provider ID, so that nothing asks Linode about it and its deletion waits for no API.
func launchedNodeClaim(ctx context.Context, f *framework.Fixture) *karpv1.NodeClaim {
	GinkgoHelper()
	claim := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: f.Name + "-joining", Labels: map[string]string{karpv1.NodePoolLabelKey: f.Name}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: test.NodeClassRef(f.Name),
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{{
				Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard"},
			}},
		},
	}
	Expect(kube.Create(ctx, claim)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(kube.Delete(ctx, claim))).To(Succeed()) })
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	Expect(kube.Status().Update(ctx, claim)).To(Succeed())
	return claim
}

// expectWebhooksServe reads the fixture's LinodeNodeClass as v1alpha1, which only the conversion
// webhook can answer, and registers a Node of claim as the kubelet of an LKE pool would (named as
// LKE names it, labelled with its NodePool and NodeClaim), which must be admitted with Karpenter's
// registration taint.
func expectWebhooksServe(ctx context.Context, f *framework.Fixture, claim *karpv1.NodeClaim, phase string) {
	GinkgoHelper()
	// A kube-apiserver just restarted finds the Service's endpoints a moment later.
	Eventually(func(g Gomega) {
		alpha := &unstructured.Unstructured{}
		alpha.SetAPIVersion("karpenter.k8s.linode/v1alpha1")
		alpha.SetKind("LinodeNodeClass")
		g.Expect(kube.Get(ctx, client.ObjectKey{Name: f.NodeClass.Name}, alpha)).To(Succeed())
		g.Expect(alpha.GetAPIVersion()).To(Equal("karpenter.k8s.linode/v1alpha1"))
	}).WithContext(ctx).Should(Succeed(), "reading LinodeNodeClass %s as v1alpha1", f.Name)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   fmt.Sprintf("lke%d-%d-%x", cluster.LKEClusterID, 990000+len(phase), phase),
		Labels: map[string]string{karpv1.NodePoolLabelKey: f.Name, v1.LabelNodeClaim: claim.Name},
	}}
	// The webhook finds the NodeClaim in the controller's cache, which sees it a moment later.
	// The Node is admitted either way, without the taint while the webhook cannot be reached
	// (failurePolicy Ignore).
	Eventually(func(g Gomega) {
		admitted := node.DeepCopy()
		g.Expect(kube.Create(ctx, admitted, client.DryRunAll)).To(Succeed())
		g.Expect(admitted.Spec.Taints).To(ContainElement(karpv1.UnregisteredNoExecuteTaint))
	}).WithContext(ctx).Should(Succeed(), "a dry run of the Node's creation is not tainted")
	Expect(kube.Create(ctx, node)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(kube.Delete(ctx, node))).To(Succeed()) })
	Expect(framework.HasTaint(*node, karpv1.UnregisteredNoExecuteTaint.Key, karpv1.UnregisteredNoExecuteTaint.Effect)).To(BeTrue(),
		"Node %s joined without %s", node.Name, karpv1.UnregisteredNoExecuteTaint.Key)
}

func apiAuthorized(ctx context.Context, g Gomega, f *framework.Fixture) metav1.Condition {
	nodeClass := &v1.LinodeNodeClass{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(f.NodeClass), nodeClass)).To(Succeed())
	condition := nodeClass.StatusConditions().Get(v1.ConditionTypeAPIAuthorized)
	g.Expect(condition).NotTo(BeNil())
	return metav1.Condition(*condition)
}

// tokenRefusedMetric is the value of karpenter_linode_api_token_refused the controller exports.
func tokenRefusedMetric(g Gomega) string {
	resp, err := http.Get(cluster.ControllerMetricsURL())
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	for line := range strings.Lines(string(body)) {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), "karpenter_linode_api_token_refused "); ok {
			return value
		}
	}
	return ""
}

// hasEvent reports whether an event of reason is recorded about the object name, in either
// events API.
func hasEvent(ctx context.Context, g Gomega, name, reason string) bool {
	var coreEvents corev1.EventList
	g.Expect(kube.List(ctx, &coreEvents)).To(Succeed())
	for _, event := range coreEvents.Items {
		if event.InvolvedObject.Name == name && event.Reason == reason {
			return true
		}
	}
	var events eventsv1.EventList
	g.Expect(kube.List(ctx, &events)).To(Succeed())
	for _, event := range events.Items {
		if event.Regarding.Name == name && event.Reason == reason {
			return true
		}
	}
	return false
}
