package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/alphafields"
	"github.com/linode/karpenter-provider-linode/pkg/test/alpharelease"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// readmeNodeClass is the LinodeNodeClass of the alpha provider's README ("Create NodePool"),
// the one manifest of its documentation that is not in its examples directory.
const readmeNodeClass = `
apiVersion: karpenter.k8s.linode/v1alpha1
kind: LinodeNodeClass
metadata:
  name: default
spec:
  image: "linode/ubuntu22.04"
`

// everyFieldNodeClass sets every field of the alpha schema that a class can hold in LKE mode
// and still be usable; FIREWALL is replaced by a firewall of the account. The alpha CRD took
// osDisk.diskID, which v1alpha1 now refuses: a class stored before the upgrade keeps it.
const everyFieldNodeClass = `
apiVersion: karpenter.k8s.linode/v1alpha1
kind: LinodeNodeClass
metadata:
  name: every-field
spec:
  tags: ["karpenter-node", "env:production"]
  firewallID: FIREWALL
  diskEncryption: enabled
  image: linode/ubuntu22.04
  authorizedKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample admin@example.com"]
  authorizedUsers: ["my-user"]
  backupsEnabled: true
  swap_size: 512
  osDisk: {size: 20Gi, filesystem: ext4, label: root, diskID: 3}
  dataDisks: {sdb: {size: 10Gi, label: data}}
  placementGroup: {id: 7, compliant_only: true}
  vpcID: 99
  ipv6Options: {enableSLAAC: true}
  configuration: {kernel: linode/latest-64bit}
  kubelet:
    maxPods: 64
    cpuCFSQuota: false
    evictionHard: {memory.available: 5%}
    evictionSoft: {memory.available: 10%}
    evictionSoftGracePeriod: {memory.available: 1m30s}
`

// TestUpgradeFromTheAlphaProvider is the in-place upgrade as a user runs it, on a real
// kube-apiserver: the alpha provider's CRD holds its example objects, stored as v1alpha1; the
// CRD chart is applied over it, as helm upgrade applies it, then the karpenter chart, and the
// controller, serving the conversion webhook, takes over. Every object then reads as v1 with its
// fields mapped and as v1alpha1 exactly as written, becomes Ready, and is migrated to v1 storage.
func TestUpgradeFromTheAlphaProvider(t *testing.T) {
	shared.Require(t, shared.SeedCompat)
	alphaCRD, err := alpharelease.CRD()
	if err != nil {
		t.Fatal(err)
	}
	env, err := environment.New(environment.WithLinodeNodeClassCRD(alphaCRD))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	e := startEmulator(t)
	firewallID := e.AddFirewall("nodes")
	ctx := context.Background()
	warnings := &warningRecorder{}
	config := rest.CopyConfig(env.Config)
	config.WarningHandler = warnings
	kube, err := client.New(config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// What users of the alpha provider applied, with its CRD.
	written := map[string]*unstructured.Unstructured{}
	examples, err := alpharelease.Examples()
	if err != nil {
		t.Fatal(err)
	}
	var manifests []*unstructured.Unstructured
	for _, example := range examples {
		manifests = append(manifests, example.Objects...)
	}
	manifests = append(manifests, decode(t, readmeNodeClass), decode(t, strings.Replace(everyFieldNodeClass, "FIREWALL", strconv.Itoa(firewallID), 1)))
	for _, obj := range manifests {
		kubectlApply(ctx, t, kube, obj)
		if obj.GetKind() == "LinodeNodeClass" {
			written[obj.GetName()] = obj
		}
	}
	if before := storedVersions(ctx, t, kube); !slices.Equal(before, []string{"v1alpha1"}) {
		t.Fatalf("before the upgrade, storedVersions = %v", before)
	}

	// helm upgrade karpenter-crd, then karpenter. The webhook Service is an ExternalName for the
	// controller run here, at the port the CRD chart is told; everything else is as rendered.
	webhookPort, probePort := freePort(t), freePort(t)
	crdObjects, err := chartrender.Render("karpenter-crd", map[string]any{"webhook": map[string]any{"port": chartPort(webhookPort)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range crdObjects {
		if err := kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			t.Fatalf("helm upgrade karpenter-crd: %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	objects, err := chartrender.Render("karpenter", map[string]any{
		"apiToken": token,
		"settings": map[string]any{"clusterName": "prod", "apiURL": e.URL()},
		"controller": map[string]any{
			"metrics":     map[string]any{"port": chartPort(freePort(t))},
			"healthProbe": map[string]any{"port": chartPort(probePort)},
		},
		// The Node webhook is off: the conversion webhook must be served regardless.
		"webhook": map[string]any{"port": chartPort(webhookPort), "enabled": false},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if obj.GetKind() == "Service" && obj.GetName() == "karpenter-webhook" {
			port, _ := strconv.Atoi(webhookPort)
			obj = externalNameService(t, obj.GetName(), int32(port))
		}
		if err := kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			t.Fatalf("helm upgrade karpenter: %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	controllerEnv, err := chartrender.ControllerEnvironment(objects, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The controller runs as the chart's ServiceAccount, with the chart's RBAC and nothing more.
	controllerEnv["KUBECONFIG"] = serviceAccountKubeconfig(t, env, "karpenter")
	p := start(t, controllerEnv)
	eventually(t, p, time.Minute, "ready", func() bool {
		code, _, err := get("http://127.0.0.1:" + probePort + "/readyz")
		return err == nil && code == 200
	})

	wantV1 := map[string]v1.LinodeNodeClassSpec{
		"default": {Image: new("linode/ubuntu22.04")},
		"ml":      {},
		"every-field": {
			Tags: []v1.Tag{"karpenter-node", "env:production"}, FirewallID: new(firewallID), DiskEncryption: new(v1.DiskEncryptionEnabled),
			Image: new("linode/ubuntu22.04"), AuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample admin@example.com"},
			AuthorizedUsers: []string{"my-user"}, BackupsEnabled: new(true), SwapSizeMB: new(int32(512)), RootDiskSizeMB: new(int32(20480)),
			RootDiskLabel: new("root"), DataDisks: []v1.DataDisk{{Label: "data", SizeMB: 10240}}, Kernel: new("linode/latest-64bit"),
			PlacementGroup: &v1.PlacementGroupSelector{ID: new(7), RequireCompliance: new(true)},
			Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCID: new(99)}, IPv6: &v1.VPCIPv6{SLAAC: new(true)}}},
			},
			Kubelet: &v1.KubeletConfiguration{
				MaxPods:                 new(int32(64)),
				CPUCFSQuota:             new(false),
				EvictionHard:            map[string]v1.EvictionThreshold{"memory.available": "5%"},
				EvictionSoft:            map[string]v1.EvictionThreshold{"memory.available": "10%"},
				EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: 90 * time.Second}},
			},
		},
	}
	if len(written) != len(wantV1) {
		t.Fatalf("the alpha manifests hold LinodeNodeClasses %v; the test expects %d", keys(written), len(wantV1))
	}
	for name, want := range wantV1 {
		nodeClass := &v1.LinodeNodeClass{}
		eventually(t, p, time.Minute, name+" readable and Ready as v1", func() bool {
			return kube.Get(ctx, client.ObjectKey{Name: name}, nodeClass) == nil && nodeClass.StatusConditions().Root().IsTrue()
		})
		if !equality.Semantic.DeepEqual(nodeClass.Spec, want) {
			t.Errorf("%s as v1 (-want +got):\n%s", name, diff.Diff(want, nodeClass.Spec))
		}
		alpha := &unstructured.Unstructured{}
		alpha.SetAPIVersion("karpenter.k8s.linode/v1alpha1")
		alpha.SetKind("LinodeNodeClass")
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, alpha); err != nil {
			t.Fatal(err)
		}
		if got, want := asJSON(t, alpha.Object["spec"]), asJSON(t, written[name].Object["spec"]); got != want || len(alpha.GetAnnotations()) != 0 {
			t.Errorf("%s reads back as v1alpha1 changed (-written +read):\n%s\nannotations %v", name,
				diff.Diff(written[name].Object["spec"], alpha.Object["spec"]), alpha.GetAnnotations())
		}
	}
	ignored := &v1.LinodeNodeClass{}
	eventually(t, p, 30*time.Second, "every-field reporting the fields v1 cannot apply", func() bool {
		return kube.Get(ctx, client.ObjectKey{Name: "every-field"}, ignored) == nil && ignored.StatusConditions().Get(alphafields.ConditionType) != nil
	})
	// The message lists every ignored field: the disk id alone, every other alpha field maps.
	if message := ignored.StatusConditions().Get(alphafields.ConditionType).Message; !strings.HasPrefix(message,
		"spec.osDisk.diskID of karpenter.k8s.linode/v1alpha1 have no v1 equivalent") {
		t.Errorf("condition %s: %s", alphafields.ConditionType, message)
	}

	eventually(t, p, time.Minute, "status.storedVersions trimmed to [v1]", func() bool {
		return slices.Equal(storedVersions(ctx, t, kube), []string{"v1"})
	})

	if forbidden := slices.DeleteFunc(strings.Split(p.output.String(), "\n"), func(line string) bool { return !strings.Contains(line, "forbidden") }); len(forbidden) > 0 {
		t.Errorf("the chart's RBAC refused the controller:\n%s", strings.Join(forbidden, "\n"))
	}

	// After the upgrade, applying a v1alpha1 manifest still works, with a warning naming v1.
	warnings.reset()
	kubectlApply(ctx, t, kube, decode(t, strings.ReplaceAll(readmeNodeClass, "name: default", "name: applied-after")))
	if !slices.ContainsFunc(warnings.all(), func(w string) bool {
		return strings.Contains(w, "karpenter.k8s.linode/v1alpha1 LinodeNodeClass is deprecated; use karpenter.k8s.linode/v1")
	}) {
		t.Errorf("applying a v1alpha1 LinodeNodeClass warned %q; want the deprecation naming v1", warnings.all())
	}
}

// asJSON is v as JSON, so that numbers compare by value whichever decoder typed them.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// serviceAccountKubeconfig is a kubeconfig that authenticates as the ServiceAccount of the
// release namespace, as a pod using it would.
func serviceAccountKubeconfig(t *testing.T, env *environment.Environment, name string) string {
	t.Helper()
	user, err := env.ControlPlane.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + chartrender.Namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + chartrender.Namespace, "system:authenticated"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// kubectlApply applies obj as `kubectl apply --server-side` does.
func kubectlApply(ctx context.Context, t *testing.T, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("kubectl apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

func storedVersions(ctx context.Context, t *testing.T, c client.Client) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: conversion.CustomResourceDefinitionName}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// externalNameService stands in for the chart's webhook Service: with no Pods or Service network
// here, it sends the apiserver to the controller on localhost. The apiserver still checks the
// certificate against the Service's DNS name.
func externalNameService(t *testing.T, name string, port int32) *unstructured.Unstructured {
	t.Helper()
	service, err := toUnstructured(&corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: chartrender.Namespace},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https-webhook", Port: port}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return service
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	data, err := sigsyaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	return out, sigsyaml.Unmarshal(data, &out.Object)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for key := range m {
		out = append(out, key)
	}
	slices.Sort(out)
	return out
}

// warningRecorder keeps the warnings the apiserver sends with its answers.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warnings)
}

func (w *warningRecorder) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = nil
}
