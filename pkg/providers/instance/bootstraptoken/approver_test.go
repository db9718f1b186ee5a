package bootstraptoken_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate/csr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// TestABootstrapTokenBecomesOnlyItsOwnNode holds a NodeClaim's bootstrap token, as anyone who read
// the Linode's user data would, and tries to turn it into another node's identity on a control
// plane set up as kubeadm's, with kube-controller-manager signing node client certificates as it
// does there and the node identity component issuing the tokens and deciding their requests with
// the chart's RBAC and admission policies alone. A thief of the controller's ServiceAccount may
// also create NodeClaims, and so have the controller launch one named like an existing node: its
// token gets no certificate for that node either.
func TestABootstrapTokenBecomesOnlyItsOwnNode(t *testing.T) {
	ctx := TestContextWithLogger(t)
	env, err := environment.NewNodeBootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	keyRef := types.NamespacedName{Namespace: chartrender.Namespace, Name: "karpenter-bootstrap-token-key"}
	runNodeIdentityAsTheChart(ctx, t, env, keyRef)

	// other-node has registered, cp-1 is a control-plane node, and victim a node Karpenter does not
	// manage.
	for _, node := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "other-node"}},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "cp-1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "victim"}},
	} {
		if err := env.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	own := nodeClaim(ctx, t, env, "own-node")
	namedLikeControlPlane, namedLikeVictim := nodeClaim(ctx, t, env, "cp-1"), nodeClaim(ctx, t, env, "victim")
	tokenKey, err := env.Key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kubeletUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

	for _, attempt := range []struct {
		name, commonName string
		token            *karpv1.NodeClaim
		organizations    []string
		usages           []certificatesv1.KeyUsage
		wantMessage      string
	}{
		{name: "an existing node's name", token: own, commonName: "system:node:other-node", organizations: []string{"system:nodes"}, usages: kubeletUsages,
			wantMessage: "Node other-node exists: a bootstrap token never becomes an existing node"},
		{name: "a made-up node name", token: own, commonName: "system:node:made-up", organizations: []string{"system:nodes"}, usages: kubeletUsages,
			wantMessage: "bootstrap token " + tokenKey.ID(own) + " was issued for NodeClaim own-node, whose node is own-node, not made-up"},
		{name: "a control-plane node's name, with the token of a NodeClaim named like it", token: namedLikeControlPlane, commonName: "system:node:cp-1", organizations: []string{"system:nodes"}, usages: kubeletUsages,
			wantMessage: "Node cp-1 exists and is a control-plane node (label node-role.kubernetes.io/control-plane)"},
		{name: "an existing node's name, with the token of a NodeClaim named like it", token: namedLikeVictim, commonName: "system:node:victim", organizations: []string{"system:nodes"}, usages: kubeletUsages,
			wantMessage: "Node victim exists"},
		{name: "its own name, in system:masters too", token: own, commonName: "system:node:" + own.Name, organizations: []string{"system:masters", "system:nodes"}, usages: kubeletUsages,
			wantMessage: "organizations"},
		{name: "its own name, for serving", token: own, commonName: "system:node:" + own.Name, organizations: []string{"system:nodes"},
			usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}, wantMessage: "usages"},
	} {
		t.Run(attempt.name, func(t *testing.T) {
			request, _ := certificateRequest(t, attempt.commonName, attempt.organizations)
			name, _, err := csr.RequestCertificateWithContext(ctx, tokenClient(ctx, t, env, attempt.token), request, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, attempt.usages, nil)
			if err != nil {
				t.Fatal(err)
			}
			decision := awaitDecision(ctx, t, env, name)
			if decision.Type != certificatesv1.CertificateDenied || !strings.Contains(decision.Message, attempt.wantMessage) {
				t.Fatalf("CertificateSigningRequest for %s %v: %s %s, want Denied saying %q", attempt.commonName, attempt.organizations, decision.Type, decision.Message, attempt.wantMessage)
			}
			// Denied for good: the signer never issues a certificate for it.
			time.Sleep(2 * time.Second)
			denied := &certificatesv1.CertificateSigningRequest{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, denied); err != nil {
				t.Fatal(err)
			}
			if len(denied.Status.Certificate) > 0 {
				t.Errorf("a certificate was issued for %s", attempt.commonName)
			}
			awaitEvent(ctx, t, env, name, "NodeCertificateDenied")
		})
	}

	ownToken := tokenClient(ctx, t, env, own)
	request, key := certificateRequest(t, "system:node:"+own.Name, []string{"system:nodes"})
	name, uid, err := csr.RequestCertificateWithContext(ctx, ownToken, request, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, kubeletUsages, key)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	certPEM, err := csr.WaitForCertificate(waitCtx, ownToken, name, uid)
	if err != nil {
		t.Fatalf("the NodeClaim's own node got no certificate: %v (%v)", err, awaitDecision(ctx, t, env, name))
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	asNode := rest.AnonymousClientConfig(env.Config)
	asNode.CertData, asNode.KeyData = certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	nodeClient := kubernetes.NewForConfigOrDie(asNode)

	// The certificate is the node's identity, which NodeRestriction confines to its own Node.
	if _, err := nodeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: own.Name}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("the node cannot register itself with its certificate: %v", err)
	}
	for _, impostor := range []string{"made-up", "other-node"} {
		_, err := nodeClient.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: impostor}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("the node's certificate registered Node %s: %v", impostor, err)
		}
	}
	if _, err := nodeClient.CoreV1().Nodes().UpdateStatus(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-node"}}, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node's certificate wrote Node other-node's status: %v", err)
	}

	// Requests of users other than the tokens are not the component's: the admin's is left to
	// kube-controller-manager, which approves it because the admin may do anything.
	adminRequest, _ := certificateRequest(t, "system:node:made-up", []string{"system:nodes"})
	adminCSR, _, err := csr.RequestCertificateWithContext(ctx, kubernetes.NewForConfigOrDie(env.Config), adminRequest, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, kubeletUsages, nil)
	if err != nil {
		t.Fatal(err)
	}
	if decision := awaitDecision(ctx, t, env, adminCSR); decision.Type != certificatesv1.CertificateApproved || decision.Reason == bootstraptoken.ReasonApproved {
		t.Errorf("the admin's request was decided %s by %s: %s", decision.Type, decision.Reason, decision.Message)
	}
}

// runNodeIdentityAsTheChart runs the node identity component as the chart's ServiceAccount for
// it, with the chart's RBAC and admission policies in instance mode and nothing else: the
// bootstrap tokens' group bindings the environment made are replaced by the chart's.
func runNodeIdentityAsTheChart(ctx context.Context, t *testing.T, env *environment.NodeBootstrap, keyRef types.NamespacedName) {
	t.Helper()
	for _, binding := range bootstraptoken.ClusterRoleBindings() {
		if err := env.Client.Delete(ctx, binding); err != nil {
			t.Fatal(err)
		}
	}
	objects, err := chartrender.Render("karpenter", map[string]any{"apiToken": "unused", "region": "us-ord", "settings": map[string]any{"mode": "instance"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if !slices.Contains([]string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}, obj.GetKind()) {
			continue
		}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	asChart := rest.CopyConfig(env.Config)
	asChart.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + chartrender.Namespace + ":karpenter-node-identity",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + chartrender.Namespace, "system:authenticated"},
	}
	if err := env.StartNodeIdentity(ctx, asChart, keyRef); err != nil {
		t.Fatal(err)
	}
}

// nodeClaim is a NodeClaim of a LinodeNodeClass, whose token the node identity component issues.
func nodeClaim(ctx context.Context, t *testing.T, env *environment.NodeBootstrap, name string) *karpv1.NodeClaim {
	t.Helper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef("default")}})
	if err := env.Client.Create(ctx, nodeClaim); err != nil {
		t.Fatal(err)
	}
	return nodeClaim
}

// tokenClient authenticates with the NodeClaim's bootstrap token, as its kubelet would, once the
// node identity component has issued it.
func tokenClient(ctx context.Context, t *testing.T, env *environment.NodeBootstrap, nodeClaim *karpv1.NodeClaim) *kubernetes.Clientset {
	t.Helper()
	token, err := env.Token(ctx, nodeClaim)
	if err != nil {
		t.Fatal(err)
	}
	withToken := rest.AnonymousClientConfig(env.Config)
	withToken.BearerToken = string(token)
	return kubernetes.NewForConfigOrDie(withToken)
}

// certificateRequest is a PEM certificate request for the subject, and its key.
func certificateRequest(t *testing.T, commonName string, organizations []string) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: commonName, Organization: organizations}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), key
}

// awaitDecision waits for the request to be approved or denied, and returns that condition.
func awaitDecision(ctx context.Context, t *testing.T, env *environment.NodeBootstrap, name string) certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	var decision certificatesv1.CertificateSigningRequestCondition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		request := &certificatesv1.CertificateSigningRequest{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, request); err != nil {
			return false, err
		}
		for _, condition := range request.Status.Conditions {
			if condition.Type == certificatesv1.CertificateApproved || condition.Type == certificatesv1.CertificateDenied {
				decision = condition
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CertificateSigningRequest %s was neither approved nor denied: %v", name, err)
	}
	return decision
}

// awaitEvent waits for an event of the reason about the request.
func awaitEvent(ctx context.Context, t *testing.T, env *environment.NodeBootstrap, name, reason string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := env.Client.List(ctx, list); err != nil {
			return false, err
		}
		return slices.ContainsFunc(list.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == name && e.Reason == reason
		}), nil
	})
	if err != nil {
		t.Errorf("no %s event about CertificateSigningRequest %s: %v", reason, name, err)
	}
}

var _ = Describe("Approver", func() {
	var (
		recorder *coretest.EventRecorder
		approver *bootstraptoken.Approver
	)
	BeforeEach(func() {
		recorder = coretest.NewEventRecorder()
		approver = bootstraptoken.NewApprover(env.Client, env.Client, issuer, recorder)
		for _, binding := range bootstraptoken.ClusterRoleBindings() {
			ExpectApplied(ctx, env.Client, binding)
		}
	})

	// request makes a CertificateSigningRequest as the user of the NodeClaim's bootstrap token, in
	// the tokens' group, through the admin's right to impersonate.
	request := func(nodeClaim *karpv1.NodeClaim, commonName, signer string) *certificatesv1.CertificateSigningRequest {
		GinkgoHelper()
		asToken := rest.CopyConfig(env.Config)
		asToken.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:" + issuedKey().ID(nodeClaim), Groups: []string{"system:bootstrappers", bootstraptoken.Group}}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		Expect(err).ToNot(HaveOccurred())
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: commonName, Organization: []string{"system:nodes"}}}, key)
		Expect(err).ToNot(HaveOccurred())
		name, _, err := csr.RequestCertificateWithContext(ctx, kubernetes.NewForConfigOrDie(asToken), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			"", signer, nil, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, key)
		Expect(err).ToNot(HaveOccurred())
		created := &certificatesv1.CertificateSigningRequest{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, created)).To(Succeed())
		return created
	}
	conditions := func(request *certificatesv1.CertificateSigningRequest) []certificatesv1.CertificateSigningRequestCondition {
		GinkgoHelper()
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(request), request)).To(Succeed())
		return request.Status.Conditions
	}

	It("approves the node of a NodeClaim that has not registered, and denies it once the NodeClaim has", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		first := request(nodeClaim, "system:node:"+nodeClaim.Name, certificatesv1.KubeAPIServerClientKubeletSignerName)
		ExpectObjectReconciled(ctx, env.Client, approver, first)
		Expect(conditions(first)).To(ConsistOf(And(HaveField("Type", certificatesv1.CertificateApproved), HaveField("Message", ContainSubstring(nodeClaim.Name)))))

		registered(nodeClaim)
		again := request(nodeClaim, "system:node:"+nodeClaim.Name, certificatesv1.KubeAPIServerClientKubeletSignerName)
		ExpectObjectReconciled(ctx, env.Client, approver, again)
		Expect(conditions(again)).To(ConsistOf(And(HaveField("Type", certificatesv1.CertificateDenied), HaveField("Message", ContainSubstring("has registered")))))
		Expect(recorder.Calls("NodeCertificateDenied")).To(Equal(1))
	})

	It("denies the name of an existing Node whatever NodeClaim asks for it, saying whether it is a control-plane node", func() {
		for _, node := range []*corev1.Node{
			{ObjectMeta: metav1.ObjectMeta{Name: "victim"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "cp-1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule}}}},
		} {
			ExpectApplied(ctx, env.Client, node)
			namedLikeIt := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: node.Name}})
			ExpectApplied(ctx, env.Client, namedLikeIt)
			denied := request(namedLikeIt, "system:node:"+node.Name, certificatesv1.KubeAPIServerClientKubeletSignerName)
			ExpectObjectReconciled(ctx, env.Client, approver, denied)
			Expect(conditions(denied)).To(ConsistOf(And(HaveField("Type", certificatesv1.CertificateDenied), HaveField("Message", ContainSubstring("Node "+node.Name+" exists")))))
		}
		cp := &certificatesv1.CertificateSigningRequestList{}
		Expect(env.Client.List(ctx, cp)).To(Succeed())
		Expect(cp.Items).To(ContainElement(HaveField("Status.Conditions", ContainElement(HaveField("Message", ContainSubstring("control-plane node (taint node-role.kubernetes.io/master)"))))))
	})

	It("denies a token that belongs to no NodeClaim", func() {
		gone := coretest.NodeClaim()
		denied := request(gone, "system:node:"+gone.Name, certificatesv1.KubeAPIServerClientKubeletSignerName)
		ExpectObjectReconciled(ctx, env.Client, approver, denied)
		Expect(conditions(denied)).To(ConsistOf(HaveField("Message", ContainSubstring("belongs to no NodeClaim"))))
	})

	It("leaves a token's request to another signer pending, which it may not decide, and says so", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		other := request(nodeClaim, "system:node:"+nodeClaim.Name, certificatesv1.KubeAPIServerClientSignerName)
		ExpectObjectReconciled(ctx, env.Client, approver, other)
		Expect(conditions(other)).To(BeEmpty())
		Expect(recorder.Calls("NotAKubeletClientRequest")).To(Equal(1))
	})
})
