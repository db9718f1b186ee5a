package instance_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// instanceCreates is the emulator's counter of Linode creates: one per launched node.
const instanceCreates = "POST /linode/instances"

// newFixture is a fixture whose class installs a public image with cloud-init.
func newFixture(prefix string) *framework.Fixture {
	return framework.NewFixture(cluster, prefix, v1.LinodeNodeClassSpec{Image: lo.ToPtr("linode/ubuntu24.04")})
}

var _ = Describe("Instance mode", func() {
	It("launches Linodes that join by TLS bootstrap for pending pods, consolidates them, and leaves no bootstrap token", func(ctx SpecContext) {
		f := newFixture("scale")
		f.Create(ctx)
		inflate := f.Deployment("inflate", 5, "1")
		Expect(kube.Create(ctx, inflate)).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 5)

		By("registering each node with the certificate its bootstrap token obtained")
		nodes := f.Nodes(ctx)
		Expect(nodes).NotTo(BeEmpty())
		for _, node := range nodes {
			Expect(node.Spec.ProviderID).To(HavePrefix(nodeprovider.ProviderIDPrefix))
			Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelTopologyZone, node.Labels[corev1.LabelTopologyRegion]))
			Expect(node.Spec.Taints).NotTo(ContainElement(HaveField("Key", karpv1.UnregisteredTaintKey)), "core lifted the taint the kubelet registered with")
			expectJoinedByBootstrapToken(ctx, node.Name)
		}
		Eventually(cluster.CheckNoBootstrapTokens).WithContext(ctx).Should(Succeed(), "a registered node's token is deleted")

		By("replacing the under-used nodes with one that fits the pod left")
		framework.Scale(ctx, kube, inflate, 1)
		Eventually(func(g Gomega) {
			nodes := f.Nodes(ctx)
			g.Expect(nodes).To(HaveLen(1))
			g.Expect(nodes[0].Status.Capacity.Cpu().Value()).To(BeNumerically("<=", 2))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		f.ExpectRunning(ctx, "inflate", 1)

		By("removing the empty node")
		framework.Scale(ctx, kube, inflate, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.NodeClaims(ctx)).To(BeEmpty())
			g.Expect(f.Nodes(ctx)).To(BeEmpty())
			g.Expect(cluster.CheckNoLinodeResources()).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
		Expect(cluster.CheckNoBootstrapTokens(ctx)).To(Succeed())
	})

	It("drains a node deleted by hand, deletes its Linode and reschedules its pods", func(ctx SpecContext) {
		f := newFixture("manual")
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("inflate", 2, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "inflate", 2)
		f.ExpectNodeDeletedByHandDrains(ctx, "inflate", 2)
	})

	It("replaces nodes one at a time when a newer image matches the class's imageSelector", func(ctx SpecContext) {
		label := fmt.Sprintf("e2e-node-%d", time.Now().UnixNano())
		first := cluster.Emulator.AddImage(emulator.ImageSpec{Label: label + " v1", Created: time.Now().Add(-time.Hour), CloudInit: true})
		f := framework.NewFixture(cluster, "image-drift", v1.LinodeNodeClassSpec{ImageSelector: &v1.ImageSelector{Label: &label}})
		f.NodePool.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: "1"}}
		f.Create(ctx)
		Expect(f.NodeClass.Status.Image.ID).To(Equal(first))
		spread := f.Deployment("spread", 3, "1")
		spread.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: spread.Spec.Selector,
		}}
		Expect(kube.Create(ctx, spread)).To(Succeed())
		f.ExpectRunning(ctx, "spread", 3)
		original := f.NodeClaims(ctx)
		Expect(original).To(HaveLen(3), "one node per pod")

		newer := cluster.Emulator.AddImage(emulator.ImageSpec{Label: label + " v2", Created: time.Now(), CloudInit: true})
		// The NodeClass controller looks for newer images every few minutes; a touch of the class
		// has it look now.
		touched := f.NodeClass.DeepCopy()
		touched.Annotations = map[string]string{"e2e/touched": "now"}
		Expect(kube.Patch(ctx, touched, client.MergeFrom(f.NodeClass))).To(Succeed())

		By("draining at most one old node at a time, as the NodePool's budget says")
		originalNames := lo.Map(original, func(c karpv1.NodeClaim, _ int) string { return c.Name })
		Eventually(func(g Gomega) {
			claims := f.NodeClaims(ctx)
			// A NodeClaim being deleted consumes the budget until its node is drained and its Linode
			// deleted (InstanceTerminating); core then moves on while Linode finishes the deletion.
			draining := lo.Filter(claims, func(c karpv1.NodeClaim, _ int) bool {
				return slices.Contains(originalNames, c.Name) && !c.DeletionTimestamp.IsZero() &&
					!c.StatusConditions().IsTrue(karpv1.ConditionTypeInstanceTerminating)
			})
			Expect(len(draining)).To(BeNumerically("<=", 1), "old nodes drained at once: %v", lo.Map(draining, func(c karpv1.NodeClaim, _ int) string { return c.Name }))
			g.Expect(claims).To(HaveLen(3))
			for _, claim := range claims {
				g.Expect(originalNames).NotTo(ContainElement(claim.Name))
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue())
				g.Expect(imageOf(claim)).To(Equal(newer))
			}
		}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		f.ExpectRunning(ctx, "spread", 3)
	}, SpecTimeout(6*time.Minute))

	It("launches one Linode per NodeClaim when the controller crashes in the middle of a launch", func(ctx SpecContext) {
		f := newFixture("crash")
		f.Create(ctx)
		createsBefore := cluster.Emulator.Counters()[instanceCreates]
		// Linode creates the first Linode, but its answer never reaches the controller.
		cluster.Emulator.InjectFault(emulator.Fault{Method: "POST", Route: "/linode/instances", LoseResponse: emulator.LoseByHanging, Count: 1})
		Expect(kube.Create(ctx, f.Deployment("inflate", 3, "1"))).To(Succeed())
		Eventually(cluster.Emulator.Instances).WithContext(ctx).ShouldNot(BeEmpty(), "a Linode is created")
		Expect(f.NodeClaims(ctx)).To(ContainElement(HaveField("Status.ProviderID", BeEmpty())), "a NodeClaim is still launching when the controller crashes")

		Expect(cluster.RestartController(ctx, localcluster.RestartOptions{Crash: true})).To(Succeed())

		f.ExpectRunning(ctx, "inflate", 3)
		Eventually(cluster.CheckConsistency).WithContext(ctx).Should(Succeed())
		claims := f.NodeClaims(ctx)
		Expect(f.Nodes(ctx)).To(HaveLen(len(claims)))
		Expect(cluster.Emulator.Counters()[instanceCreates]-createsBefore).To(Equal(len(claims)),
			"the restarted controller found the Linode its predecessor created instead of creating another")
	})

	It("deletes a leaked Linode of this cluster, and nothing that is not this cluster's", func(ctx SpecContext) {
		kubeSystem := &corev1.Namespace{}
		Expect(kube.Get(ctx, types.NamespacedName{Name: metav1.NamespaceSystem}, kubeSystem)).To(Succeed())
		linode := cluster.Emulator.NewClient()
		// A launch whose NodeClaim went while Linode's answer was lost leaves such a Linode.
		leaked, err := linode.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: cluster.Region(), Type: "g6-nanode-1", Label: "leaked-linode",
			Tags: []string{nodeprovider.ClusterTag(string(kubeSystem.UID)), nodeprovider.NodeClaimTag("gone-x7k2p"), nodeprovider.NodePoolTag("gone")}})
		Expect(err).NotTo(HaveOccurred())
		foreign, err := linode.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: cluster.Region(), Type: "g6-nanode-1", Label: "someone-elses",
			Tags: []string{nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("gone-x7k2p")}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(linode.DeleteInstance(ctx, foreign.ID)).To(Succeed()) })

		Eventually(cluster.Emulator.Instances).WithContext(ctx).WithTimeout(2*garbageCollectionGracePeriod+time.Minute).
			ShouldNot(ContainElement(HaveField("ID", leaked.ID)), "the leaked Linode is deleted after the grace period")
		Expect(cluster.Emulator.Instances()).To(ContainElement(HaveField("ID", foreign.ID)), "a Linode without this cluster's tag is never touched")
	})
})

// imageOf is the image of the NodeClaim's Linode.
func imageOf(claim karpv1.NodeClaim) string {
	id, err := nodeprovider.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return ""
	}
	instance, err := cluster.Emulator.NewClient().GetInstance(context.Background(), id)
	if err != nil {
		return ""
	}
	return instance.Image
}

// expectJoinedByBootstrapToken checks that the node's kubelet obtained its client certificate
// through TLS bootstrap: a CertificateSigningRequest made with one of the provider's bootstrap
// tokens, for system:node:<name>, approved and signed by kube-controller-manager.
func expectJoinedByBootstrapToken(ctx context.Context, nodeName string) {
	GinkgoHelper()
	var csrs certificatesv1.CertificateSigningRequestList
	Expect(kube.List(ctx, &csrs)).To(Succeed())
	found := slices.ContainsFunc(csrs.Items, func(csr certificatesv1.CertificateSigningRequest) bool {
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil {
			return false
		}
		request, err := x509.ParseCertificateRequest(block.Bytes)
		return err == nil && request.Subject.CommonName == "system:node:"+nodeName &&
			strings.HasPrefix(csr.Spec.Username, "system:bootstrap:") && slices.Contains(csr.Spec.Groups, bootstraptoken.Group) &&
			len(csr.Status.Certificate) > 0 &&
			slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
				return c.Type == certificatesv1.CertificateApproved
			})
	})
	Expect(found).To(BeTrue(), "no approved and signed CertificateSigningRequest of a bootstrap token for node %s", nodeName)
}
