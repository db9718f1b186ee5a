package charts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// Who refuses an attack: RBAC, or the chart's ValidatingAdmissionPolicies where RBAC cannot.
const (
	byRBAC   = "RBAC"
	byPolicy = "ValidatingAdmissionPolicy"
)

// TestControllerServiceAccountIsHeldToItsWork installs the charts on a real kube-apiserver, first
// in LKE mode and then upgraded to instance mode, and holds a token of the controller's
// ServiceAccount from the TokenRequest API, as an attacker who stole it from the controller's pod
// would. Every way that token could reach other credentials (a ServiceAccount token Secret, the
// Secrets of kube-system, a bootstrap token, a node's certificate), redirect the cluster's
// admission and conversion requests, bring pods onto a control-plane node, or change what new
// nodes run is refused; what the controller does with it (keep its certificate and the caBundles,
// core's writes to its nodes, its writes to classes and pods) still succeeds. In instance mode
// a token of the node identity component's ServiceAccount is tried the same way.
func TestControllerServiceAccountIsHeldToItsWork(t *testing.T) {
	env, err := environment.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	crdObjects, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, env.Client, crdObjects)
	lke, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, env.Client, lke)

	admin := env.Client
	config, err := environment.ServiceAccountConfig(ctx, env.Config, chartrender.Namespace, "karpenter")
	if err != nil {
		t.Fatal(err)
	}
	stolen, err := client.New(config, client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	// What else kube-system holds: the Linode CCM's token, and a bootstrap token of kubeadm's.
	ccm := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ccm-linode"},
		StringData: map[string]string{"apiToken": "the-ccm-linode-token", "region": "us-ord"},
	}
	kubeadmToken := bootstrapToken("abcdef", map[string]string{"auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token", "usage-bootstrap-signing": "true"})
	kubeadmToken.Labels, kubeadmToken.OwnerReferences = nil, nil
	for _, secret := range []*corev1.Secret{ccm, kubeadmToken} {
		if err := admin.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	awaitPolicies(t,
		func() bool {
			return refusedByPolicy(stolen.Create(ctx, serviceAccountToken("karpenter-cert"), client.DryRunAll))
		},
		func() bool {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: conversion.CustomResourceDefinitionName}}
			return refusedByPolicy(stolen.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"attacker":"true"}}}`)), client.DryRunAll))
		})

	certificates := certificate.NewManager(stolen, stolen, certificate.Target{
		Namespace: chartrender.Namespace, SecretName: "karpenter-cert", ServiceName: "karpenter-webhook",
		WebhookConfigurationName: "karpenter", CustomResourceDefinitionNames: []string{conversion.CustomResourceDefinitionName},
	})
	secretAttacks := func(t *testing.T) {
		for _, secret := range []*corev1.Secret{serviceAccountToken("karpenter-cert"), serviceAccountToken("karpenter-bootstrap-token-key"), serviceAccountToken("steal-kube-system")} {
			t.Run("create a service account token Secret named "+secret.Name, func(t *testing.T) {
				expectRefused(t, stolen.Create(ctx, secret), byPolicy)
			})
		}
		t.Run("read the CCM's Linode token", func(t *testing.T) {
			expectRefused(t, stolen.Get(ctx, client.ObjectKeyFromObject(ccm), &corev1.Secret{}), byRBAC)
		})
		t.Run("list the Secrets of kube-system", func(t *testing.T) {
			expectRefused(t, stolen.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system")), byRBAC)
		})
		t.Run("overwrite the CCM's Linode token", func(t *testing.T) {
			expectRefused(t, stolen.Update(ctx, ccm.DeepCopy()), byRBAC)
		})
	}
	caBundleAttacks := func(t *testing.T) {
		for _, attack := range []struct {
			name   string
			change func(*admissionregistrationv1.MutatingWebhook)
		}{
			{"send every node update to the webhook", func(w *admissionregistrationv1.MutatingWebhook) {
				w.Rules[0].Operations = append(w.Rules[0].Operations, admissionregistrationv1.Update)
			}},
			{"send every Secret to the webhook", func(w *admissionregistrationv1.MutatingWebhook) {
				w.Rules[0].Resources = []string{"*"}
			}},
			{"drop the objectSelector", func(w *admissionregistrationv1.MutatingWebhook) { w.ObjectSelector = &metav1.LabelSelector{} }},
			{"point the webhook at another Service", func(w *admissionregistrationv1.MutatingWebhook) { w.ClientConfig.Service.Name = "attacker" }},
			{"point the webhook at a URL", func(w *admissionregistrationv1.MutatingWebhook) {
				w.ClientConfig.Service, w.ClientConfig.URL = nil, new("https://attacker.example.com/mutate")
			}},
			{"make the webhook's failure block nodes", func(w *admissionregistrationv1.MutatingWebhook) {
				w.FailurePolicy = new(admissionregistrationv1.Fail)
			}},
		} {
			t.Run("MutatingWebhookConfiguration: "+attack.name, func(t *testing.T) {
				configuration := &admissionregistrationv1.MutatingWebhookConfiguration{}
				if err := stolen.Get(ctx, client.ObjectKey{Name: "karpenter"}, configuration); err != nil {
					t.Fatal(err)
				}
				stored := configuration.DeepCopy()
				attack.change(&configuration.Webhooks[0])
				expectRefused(t, stolen.Patch(ctx, configuration, client.MergeFrom(stored)), byPolicy)
			})
		}
		t.Run("MutatingWebhookConfiguration: hand it to the garbage collector", func(t *testing.T) {
			patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`
			configuration := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "karpenter"}}
			expectRefused(t, stolen.Patch(ctx, configuration, client.RawPatch(types.MergePatchType, []byte(patch))), byPolicy)
		})
		for _, attack := range []struct {
			name   string
			change func(*apiextensionsv1.CustomResourceDefinition)
		}{
			{"point the conversion webhook at another Service", func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Spec.Conversion.Webhook.ClientConfig.Service.Name = "attacker"
			}},
			{"point the conversion webhook at a URL", func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Spec.Conversion.Webhook.ClientConfig.Service, crd.Spec.Conversion.Webhook.ClientConfig.URL = nil, new("https://attacker.example.com/convert")
			}},
			{"turn conversion off", func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
			}},
			{"stop serving a version", func(crd *apiextensionsv1.CustomResourceDefinition) {
				for i := range crd.Spec.Versions {
					crd.Spec.Versions[i].Served = crd.Spec.Versions[i].Storage
				}
			}},
			{"hand it to the garbage collector", func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "00000000-0000-0000-0000-000000000000"}}
			}},
		} {
			t.Run("CustomResourceDefinition: "+attack.name, func(t *testing.T) {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := stolen.Get(ctx, client.ObjectKey{Name: conversion.CustomResourceDefinitionName}, crd); err != nil {
					t.Fatal(err)
				}
				stored := crd.DeepCopy()
				attack.change(crd)
				expectRefused(t, stolen.Patch(ctx, crd, client.MergeFrom(stored)), byPolicy)
			})
		}
		t.Run("CustomResourceDefinition: add a version to status.storedVersions", func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: conversion.CustomResourceDefinitionName}}
			patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"storedVersions":["v1alpha1","v1"]}}`))
			expectRefused(t, stolen.Status().Patch(ctx, crd, patch), byPolicy)
		})
		t.Run("create another MutatingWebhookConfiguration", func(t *testing.T) {
			configuration := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := admin.Get(ctx, client.ObjectKey{Name: "karpenter"}, configuration); err != nil {
				t.Fatal(err)
			}
			configuration.ObjectMeta = metav1.ObjectMeta{Name: "attacker"}
			expectRefused(t, stolen.Create(ctx, configuration), byRBAC)
		})
	}

	t.Run("lke mode", func(t *testing.T) {
		secretAttacks(t)
		podAttacks(ctx, t, admin, stolen)
		t.Run("the controller issues its certificate and keeps both caBundles", func(t *testing.T) {
			if _, err := certificates.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			expectCABundles(ctx, t, admin)
		})
		for _, attack := range []struct {
			name   string
			change func(*corev1.Secret)
		}{
			{"make karpenter-cert immutable, so that the controller can never renew it", func(s *corev1.Secret) { s.Immutable = new(true) }},
			{"hand karpenter-cert to the garbage collector", func(s *corev1.Secret) {
				s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "00000000-0000-0000-0000-000000000000"}}
			}},
		} {
			t.Run(attack.name, func(t *testing.T) {
				cert := &corev1.Secret{}
				if err := stolen.Get(ctx, client.ObjectKey{Namespace: chartrender.Namespace, Name: "karpenter-cert"}, cert); err != nil {
					t.Fatal(err)
				}
				attack.change(cert)
				expectRefused(t, stolen.Update(ctx, cert), byPolicy)
			})
		}
		caBundleAttacks(t)
		nodeAttacks(ctx, t, admin, stolen)
		nodeClassAttacks(ctx, t, admin, stolen)
		t.Run("delete the CCM's Linode token", func(t *testing.T) {
			expectRefused(t, stolen.Delete(ctx, ccm.DeepCopy()), byRBAC)
		})
		t.Run("create a bootstrap token", func(t *testing.T) {
			expectRefused(t, stolen.Create(ctx, bootstrapToken("lkemod", nil)), byPolicy)
		})
	})

	instance, err := chartrender.Render("karpenter", instanceMode(nil))
	if err != nil {
		t.Fatal(err)
	}
	helmUpgrade(ctx, t, admin, lke, instance)
	identityConfig, err := environment.ServiceAccountConfig(ctx, env.Config, chartrender.Namespace, "karpenter-node-identity")
	if err != nil {
		t.Fatal(err)
	}
	identity, err := client.New(identityConfig, client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	awaitPolicies(t, func() bool {
		return refusedByPolicy(identity.Create(ctx, bootstrapToken("dryrun", map[string]string{"expiration": "2999-01-01T00:00:00Z"}), client.DryRunAll))
	})

	t.Run("instance mode", func(t *testing.T) {
		nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef("default")}})
		if err := admin.Create(ctx, nodeClaim); err != nil {
			t.Fatal(err)
		}
		keyRef := types.NamespacedName{Namespace: chartrender.Namespace, Name: "karpenter-bootstrap-token-key"}
		secretAttacks(t)
		t.Run("plant a bootstrap token key of its own, before the node identity component makes one", func(t *testing.T) {
			key := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: keyRef.Namespace, Name: keyRef.Name},
				Type:       corev1.SecretTypeOpaque, Immutable: new(true),
				Data: map[string][]byte{bootstraptoken.KeySecretKey: []byte("0123456789abcdef0123456789abcdef")},
			}
			expectRefused(t, stolen.Create(ctx, key), byPolicy)
		})
		issuer := bootstraptoken.NewIssuer(identity, identity, keyRef, clock.RealClock{})
		tokenKey, err := issuer.Key(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("the node identity component issues a NodeClaim's token and deletes it", func(t *testing.T) {
			if err := issuer.Issue(ctx, nodeClaim); err != nil {
				t.Fatal(err)
			}
			if err := issuer.Delete(ctx, nodeClaim); err != nil {
				t.Fatal(err)
			}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: tokenKey.SecretName(nodeClaim)}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
				t.Errorf("the token is still there after its deletion: %v", err)
			}
			if err := issuer.Issue(ctx, nodeClaim); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("the controller derives the token the node identity component issued from the mounted key", func(t *testing.T) {
			key := &corev1.Secret{}
			if err := admin.Get(ctx, keyRef, key); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), bootstraptoken.KeySecretKey)
			if err := os.WriteFile(file, key.Data[bootstraptoken.KeySecretKey], 0o600); err != nil {
				t.Fatal(err)
			}
			token, err := bootstraptoken.NewKeyFile(file, stolen).Token(ctx, nodeClaim)
			if err != nil {
				t.Fatal(err)
			}
			issued := &corev1.Secret{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: tokenKey.SecretName(nodeClaim)}, issued); err != nil {
				t.Fatal(err)
			}
			if string(token) != string(issued.Data["token-id"])+"."+string(issued.Data["token-secret"]) {
				t.Errorf("the controller's token is not the one issued")
			}
		})
		t.Run("the controller renews its certificate", func(t *testing.T) {
			// A certificate that must serve one more name is renewed in its Secret.
			if _, err := certificate.NewManager(stolen, stolen, certificate.Target{
				Namespace: chartrender.Namespace, SecretName: "karpenter-cert", ServiceName: "karpenter-webhook",
				CustomResourceDefinitionNames: []string{conversion.CustomResourceDefinitionName},
			}, certificate.WithExtraHosts("127.0.0.1")).Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("read the bootstrap token key", func(t *testing.T) {
			expectRefused(t, stolen.Get(ctx, keyRef, &corev1.Secret{}), byRBAC)
		})
		t.Run("read the token the node identity component issued", func(t *testing.T) {
			expectRefused(t, stolen.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: tokenKey.SecretName(nodeClaim)}, &corev1.Secret{}), byRBAC)
		})
		t.Run("delete the token the node identity component issued, so that the node cannot join", func(t *testing.T) {
			token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: tokenKey.SecretName(nodeClaim)}}
			expectRefused(t, stolen.Delete(ctx, token), byRBAC)
		})
		for _, attack := range tokenAttacks(nodeClaim) {
			t.Run("create a bootstrap token "+attack.name, func(t *testing.T) {
				expectRefused(t, stolen.Create(ctx, attack.secret), byPolicy)
			})
		}
		t.Run("create a bootstrap token as the node identity component issues them", func(t *testing.T) {
			expectRefused(t, stolen.Create(ctx, bootstrapToken("asidnt", nil)), byPolicy)
		})
		for _, secret := range []*corev1.Secret{ccm, kubeadmToken} {
			t.Run("delete "+secret.Name, func(t *testing.T) {
				expectRefused(t, stolen.Delete(ctx, secret.DeepCopy()), byRBAC)
			})
		}
		t.Run("approve a kubelet certificate for a control-plane node", func(t *testing.T) {
			csr := kubeletCertificateRequest(ctx, t, admin, "system:node:"+controlPlaneNode)
			expectRefused(t, approve(ctx, stolen, csr), byRBAC)
		})
		nodeIdentityAttacks(ctx, t, env.Config, admin, identity, nodeClaim, ccm)
	})
}

// tokenAttacks are bootstrap tokens made otherwise than the node identity component makes them,
// each a way to a stronger or longer-lived credential.
func tokenAttacks(nodeClaim *karpv1.NodeClaim) []struct {
	name   string
	secret *corev1.Secret
} {
	owned := func(secret *corev1.Secret) *corev1.Secret {
		secret.OwnerReferences[0].Name, secret.OwnerReferences[0].UID = nodeClaim.Name, nodeClaim.UID
		return secret
	}
	return []struct {
		name   string
		secret *corev1.Secret
	}{
		{"in the group system:masters", bootstrapToken("master", map[string]string{"auth-extra-groups": "system:masters"})},
		{"in kubeadm's group too", bootstrapToken("kubadm", map[string]string{"auth-extra-groups": bootstraptoken.Group + ",system:bootstrappers:kubeadm:default-node-token"})},
		{"that signs cluster-info", bootstrapToken("signer", map[string]string{"usage-bootstrap-signing": "true"})},
		{"that never expires", bootstrapToken("forevr", map[string]string{"expiration": ""})},
		{"owned by a live NodeClaim, expiring in 2999", owned(bootstrapToken("yr2999", map[string]string{"expiration": "2999-01-01T00:00:00Z"}))},
		{"owned by a live NodeClaim, expiring 25 minutes from now", owned(bootstrapToken("in25mn", map[string]string{"expiration": time.Now().Add(25 * time.Minute).UTC().Format(time.RFC3339)}))},
		{"expiring at a time in another format", owned(bootstrapToken("format", map[string]string{"expiration": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339Nano)}))},
		{"owned by no NodeClaim", func() *corev1.Secret {
			secret := bootstrapToken("orphan", nil)
			secret.OwnerReferences = nil
			return secret
		}()},
	}
}

// podAttacks tries, holding the controller's token, to run other code in a pod or steer a
// Service's traffic through a pod's status; the two changes Karpenter makes to pods still succeed.
func podAttacks(ctx context.Context, t *testing.T, admin, stolen client.Client) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "payments", Labels: map[string]string{"app": "payments"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "default",
			Containers:         []corev1.Container{{Name: "app", Image: "registry.example.com/payments:1.0"}},
		},
	}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	awaitPolicies(t, func() bool {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"dry-run"}}}`))
		return refusedByPolicy(stolen.Patch(ctx, pod.DeepCopy(), patch, client.DryRunAll))
	})
	for _, attack := range []struct {
		name, patch string
		status      bool
	}{
		{name: "run another image in the pod", patch: `{"spec":{"containers":[{"name":"app","image":"attacker.example.com/shell:1.0"}]}}`},
		{name: "move the pod into another Service", patch: `{"metadata":{"labels":{"app":"billing"}}}`},
		{name: "hand the pod to the garbage collector", patch: `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`},
		{name: "change another annotation of the pod", patch: `{"metadata":{"annotations":{"prometheus.io/scrape":"false"}}}`},
		{name: "mark the pod Ready", status: true, patch: `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`},
		{name: "give the pod another IP", status: true, patch: `{"status":{"podIP":"203.0.113.7","podIPs":[{"ip":"203.0.113.7"}]}}`},
		{name: "rewrite why the pod is in its phase", status: true, patch: `{"status":{"reason":"Evicted","message":"The node was low on memory."}}`},
		{name: "rewrite when the pod started", status: true, patch: `{"status":{"startTime":"2020-01-01T00:00:00Z"}}`},
	} {
		t.Run("pod: "+attack.name, func(t *testing.T) {
			patch := client.RawPatch(types.MergePatchType, []byte(attack.patch))
			if attack.status {
				expectRefused(t, stolen.Status().Patch(ctx, pod.DeepCopy(), patch), byPolicy)
			} else {
				expectRefused(t, stolen.Patch(ctx, pod.DeepCopy(), patch), byPolicy)
			}
		})
	}
	t.Run("pod: core sets its deletion cost and the controller nominates its node", func(t *testing.T) {
		cost := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"-100"}}}`))
		if err := stolen.Patch(ctx, pod.DeepCopy(), cost); err != nil {
			t.Fatal(err)
		}
		nominate := client.RawPatch(types.MergePatchType, []byte(`{"status":{"nominatedNodeName":"lke1-2-abc"}}`))
		if err := stolen.Status().Patch(ctx, pod.DeepCopy(), nominate); err != nil {
			t.Fatal(err)
		}
	})
}

// bootstrapToken is a token Secret as the issuer makes them, with data changed (an empty value
// removes the entry).
func bootstrapToken(id string, data map[string]string) *corev1.Secret {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-system", Name: "bootstrap-token-" + id,
			Labels: map[string]string{bootstraptoken.LabelNodeClaimToken: "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: "default-abcde", UID: "00000000-0000-0000-0000-000000000001",
			}},
		},
		Type: "bootstrap.kubernetes.io/token",
		StringData: map[string]string{
			"token-id": id, "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true",
			"auth-extra-groups": bootstraptoken.Group, "expiration": time.Now().Add(bootstraptoken.TTL).UTC().Format(time.RFC3339),
		},
	}
	for key, value := range data {
		if value == "" {
			delete(secret.StringData, key)
		} else {
			secret.StringData[key] = value
		}
	}
	return secret
}

// serviceAccountToken is a Secret that kube-controller-manager fills with a token of the
// ServiceAccount namespace-controller, which may delete anything in the cluster.
func serviceAccountToken(name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-system", Name: name,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "namespace-controller"},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
}

// expectRefused fails the test unless err is kube-apiserver's refusal by RBAC or by the chart's
// admission policy.
func expectRefused(t *testing.T, err error, by string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("allowed; want it refused by %s", by)
	case !apierrors.IsForbidden(err):
		t.Fatalf("failed otherwise than refused by %s: %v", by, err)
	case by == byPolicy && !refusedByPolicy(err):
		t.Fatalf("refused by RBAC (%v); the test wants RBAC to allow it, and the chart's policy to refuse it", err)
	case by == byRBAC && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		t.Fatalf("refused by a policy (%v); want RBAC to refuse it", err)
	}
}

// awaitPolicies waits until kube-apiserver enforces the chart's policies as installed, which it
// does some time after they are created or changed: until each dry run says so.
func awaitPolicies(t *testing.T, enforced ...func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, dryRun := range enforced {
		for !dryRun() {
			if time.Now().After(deadline) {
				t.Fatal("the chart's policies are not enforced as installed 30s after their installation")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func refusedByPolicy(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'karpenter-")
}

// expectCABundles fails the test unless the webhook configuration and the CRD trust the CA the
// certificate Secret holds.
func expectCABundles(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: chartrender.Namespace, Name: "karpenter-cert"}, secret); err != nil {
		t.Fatal(err)
	}
	ca := string(secret.Data[certificate.KeyCABundle])
	configuration := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "karpenter"}, configuration); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: conversion.CustomResourceDefinitionName}, crd); err != nil {
		t.Fatal(err)
	}
	if ca == "" || string(configuration.Webhooks[0].ClientConfig.CABundle) != ca || string(crd.Spec.Conversion.Webhook.ClientConfig.CABundle) != ca {
		t.Errorf("the caBundles do not trust the controller's CA")
	}
}

// helmUpgrade applies to as `helm upgrade` does over from: what to renders is applied, and what
// only from rendered is deleted.
func helmUpgrade(ctx context.Context, t *testing.T, c client.Client, from, to []*unstructured.Unstructured) {
	t.Helper()
	applyAll(ctx, t, c, to)
	key := func(obj *unstructured.Unstructured) string {
		return fmt.Sprintf("%s/%s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	kept := make([]string, 0, len(to))
	for _, obj := range to {
		kept = append(kept, key(obj))
	}
	for _, obj := range from {
		if !slices.Contains(kept, key(obj)) {
			if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				t.Fatalf("helm upgrade: deleting %s: %v", key(obj), err)
			}
		}
	}
}
