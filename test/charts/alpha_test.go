package charts_test

import (
	"context"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/test/alpharelease"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// alphaCredentials is a Secret as the alpha chart's credentialsSecretRef names it.
var alphaCredentials = &corev1.Secret{
	ObjectMeta: metav1.ObjectMeta{Name: "my-linode-credentials", Namespace: chartrender.Namespace},
	Data: map[string][]byte{
		"LINODE_TOKEN":       []byte("token-from-the-alpha-secret"),
		"LINODE_URL":         []byte("https://api.linode.com"),
		"LINODE_API_VERSION": []byte("v4beta"),
		"CLUSTER_REGION":     []byte("us-ord"),
	},
}

// alphaValues are the alpha chart's values.yaml, whole, with the GitOps install its
// configuration reference describes (--set settings.clusterName=... --set credentialsSecretRef=...)
// and the overrides given.
func alphaValues(t *testing.T, overrides map[string]any) map[string]any {
	shared.Require(t, shared.SeedCompat)
	t.Helper()
	values, err := alpharelease.ChartValues()
	if err != nil {
		t.Fatal(err)
	}
	values["credentialsSecretRef"] = alphaCredentials.Name
	values["settings"].(map[string]any)["clusterName"] = "prod"
	return merge(values, overrides)
}

// merge sets overrides into values, map by map.
func merge(values, overrides map[string]any) map[string]any {
	for key, value := range overrides {
		nested, isMap := value.(map[string]any)
		existing, hasMap := values[key].(map[string]any)
		if isMap && hasMap {
			merge(existing, nested)
			continue
		}
		values[key] = value
	}
	return values
}

// TestAlphaValuesRenderAWorkingInstall renders the alpha chart's values with ours, as a helm
// upgrade that keeps the user's values file would, and checks that the controller gets every
// setting it asked for, under the names it reads now, and would start with them.
func TestAlphaValuesRenderAWorkingInstall(t *testing.T) {
	objects, err := chartrender.Render("karpenter", alphaValues(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if chartrender.Find(objects, "Secret", "karpenter") != nil {
		t.Errorf("the chart rendered a token Secret although credentialsSecretRef names one")
	}
	env, err := chartrender.ControllerEnvironment(objects, t.TempDir(), alphaCredentials)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"CLUSTER_NAME": "prod", "KARPENTER_MODE": "lke",
		"LINODE_URL":         "https://api.linode.com",
		"LINODE_API_VERSION": "v4beta", "LINODE_REGION": "us-ord",
		"VM_MEMORY_OVERHEAD_PERCENT": "0.075", "BATCH_MAX_DURATION": "5m", "BATCH_IDLE_DURATION": "1m",
		"FEATURE_GATES":   "NodeRepair=false,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false,PodDeletionCostManagement=false",
		"DISABLE_WEBHOOK": "false", "WEBHOOK_PORT": "8443", "METRICS_PORT": "8080", "HEALTH_PROBE_PORT": "8081", "LOG_LEVEL": "info",
	}
	for key, value := range want {
		if env[key] != value {
			t.Errorf("%s = %q, want %q", key, env[key], value)
		}
	}
	controller := chartrender.Find(objects, "Deployment", "karpenter")
	containers, _, _ := unstructured.NestedSlice(controller.Object, "spec", "template", "spec", "containers")
	ours, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	oursContainers, _, _ := unstructured.NestedSlice(chartrender.Find(ours, "Deployment", "karpenter").Object, "spec", "template", "spec", "containers")
	if image, want := containers[0].(map[string]any)["image"], oursContainers[0].(map[string]any)["image"]; image != want {
		t.Errorf("image = %v, want the chart's own %v: the alpha values file's controller.image (its chart's defaults, tag latest) asks for no image in particular", image, want)
	}
	if token := tokenFromFile(t, env); token != "token-from-the-alpha-secret" {
		t.Errorf("the token file holds %q, want the alpha Secret's LINODE_TOKEN", token)
	}
	if _, ok := env["HYPERVISOR_MEMORY_PERCENT"]; ok {
		t.Errorf("HYPERVISOR_MEMORY_PERCENT is set beside VM_MEMORY_OVERHEAD_PERCENT: the controller refuses both")
	}

	// The controller accepts the environment: the settings parse and validate.
	for key, value := range env {
		t.Setenv(key, value)
	}
	ctx, err := operator.ParseSettings(context.Background(), nil, io.Discard)
	if err != nil {
		t.Fatalf("the controller would not start with the rendered environment: %v", err)
	}
	if opts := options.FromContext(ctx); opts.HypervisorMemoryPercent != 7.5 || opts.Region != "us-ord" || opts.APIVersion != "v4beta" {
		t.Errorf("the controller reads hypervisor memory %v%%, region %q, API version %q; want 7.5, us-ord, v4beta",
			opts.HypervisorMemoryPercent, opts.Region, opts.APIVersion)
	}
}

// TestAlphaValuesAreMapped: each value the alpha chart named differently reaches the controller
// under the name it reads now.
func TestAlphaValuesAreMapped(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, env map[string]string, deployment map[string]any)
	}{
		{
			name:   "top-level apiURL and apiVersion, with apiToken",
			values: required(map[string]any{"apiURL": "http://linode-emulator.kube-system:8080", "apiVersion": "v4beta"}),
			check: func(t *testing.T, env map[string]string, _ map[string]any) {
				if env["LINODE_URL"] != "http://linode-emulator.kube-system:8080" || env["LINODE_API_VERSION"] != "v4beta" {
					t.Errorf("LINODE_URL = %q, LINODE_API_VERSION = %q", env["LINODE_URL"], env["LINODE_API_VERSION"])
				}
			},
		},
		{
			name:   "credentialsSecretRef without CLUSTER_REGION leaves the region to discovery",
			values: required(map[string]any{"apiToken": "", "credentialsSecretRef": "bare-credentials"}),
			check: func(t *testing.T, env map[string]string, _ map[string]any) {
				if token := tokenFromFile(t, env); token != "bare-token" {
					t.Errorf("the token file holds %q, want the Secret's", token)
				}
				for _, key := range []string{"LINODE_REGION", "LINODE_URL", "LINODE_API_VERSION"} {
					if value, ok := env[key]; ok {
						t.Errorf("%s = %q although the Secret has no such key: the controller's default applies", key, value)
					}
				}
			},
		},
		{
			name:   "region wins over the Secret's CLUSTER_REGION",
			values: alphaValues(t, map[string]any{"region": "us-sea"}),
			check: func(t *testing.T, env map[string]string, _ map[string]any) {
				if env["LINODE_REGION"] != "us-sea" {
					t.Errorf("LINODE_REGION = %q, want us-sea", env["LINODE_REGION"])
				}
			},
		},
		{
			name: "controller image, pull policy, cluster endpoint, host network and DNS config",
			values: required(map[string]any{
				"controller":      map[string]any{"image": map[string]any{"repository": "registry.example.com/karpenter-linode", "tag": "v0.9.0"}},
				"imagePullPolicy": "Always",
				"settings":        map[string]any{"clusterEndpoint": "https://203.0.113.10:6443"},
				"hostNetwork":     true,
				"dnsConfig":       map[string]any{"options": []any{map[string]any{"name": "ndots", "value": "1"}}},
			}),
			check: func(t *testing.T, env map[string]string, deployment map[string]any) {
				spec := deployment["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				container := spec["containers"].([]any)[0].(map[string]any)
				if container["image"] != "registry.example.com/karpenter-linode:v0.9.0" || container["imagePullPolicy"] != "Always" {
					t.Errorf("image = %v, pull policy = %v", container["image"], container["imagePullPolicy"])
				}
				if spec["hostNetwork"] != true || spec["dnsConfig"] == nil {
					t.Errorf("hostNetwork = %v, dnsConfig = %v", spec["hostNetwork"], spec["dnsConfig"])
				}
				if env["CLUSTER_ENDPOINT"] != "https://203.0.113.10:6443" {
					t.Errorf("CLUSTER_ENDPOINT = %q", env["CLUSTER_ENDPOINT"])
				}
			},
		},
	}
	bare := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bare-credentials"}, Data: map[string][]byte{"LINODE_TOKEN": []byte("bare-token")}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := chartrender.Render("karpenter", tt.values)
			if err != nil {
				t.Fatal(err)
			}
			env, err := chartrender.ControllerEnvironment(objects, t.TempDir(), alphaCredentials, bare)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, env, chartrender.Find(objects, "Deployment", "karpenter").Object)
		})
	}
}

// TestAlphaServiceMonitor: the alpha chart's serviceMonitor values keep their meaning.
func TestAlphaServiceMonitor(t *testing.T) {
	objects, err := chartrender.Render("karpenter", alphaValues(t, map[string]any{"serviceMonitor": map[string]any{
		"enabled": true, "additionalLabels": map[string]any{"release": "prometheus"}, "endpointConfig": map[string]any{"interval": "15s"},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	monitor := chartrender.Find(objects, "ServiceMonitor", "karpenter")
	if monitor == nil {
		t.Fatal("no ServiceMonitor with serviceMonitor.enabled")
	}
	if monitor.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels = %v, want release=prometheus", monitor.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["interval"] != "15s" || endpoints[0].(map[string]any)["port"] != "http-metrics" {
		t.Errorf("ServiceMonitor endpoints = %v", endpoints)
	}
}

// TestAlphaValuesWithoutEquivalentAreRefused: a value of the alpha chart that means something
// this chart cannot do fails the render, with the value's name and what to do.
func TestAlphaValuesWithoutEquivalentAreRefused(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]any
		message string
	}{
		{"credentialsSecretRef and existingSecret", alphaValues(t, map[string]any{"existingSecret": "other"}), "credentialsSecretRef and existingSecret are both set: keep one"},
		{"credentialsSecretRef and apiToken", alphaValues(t, map[string]any{"apiToken": "t"}), "apiToken is not used with credentialsSecretRef"},
		{"credentialsSecretRef and an apiURL it would hide", alphaValues(t, map[string]any{"apiURL": "https://proxy.example.com"}), "apiURL (settings.apiURL) is not used with credentialsSecretRef: as with the alpha chart, the controller takes LINODE_URL from Secret my-linode-credentials"},
		{"apiVersion against settings.apiVersion", required(map[string]any{"apiVersion": "v4", "settings": map[string]any{"apiVersion": "v4beta"}}), "apiVersion and settings.apiVersion disagree: keep settings.apiVersion"},
		{"both memory overheads", alphaValues(t, map[string]any{"settings": map[string]any{"hypervisorMemoryPercent": 5}}), "settings.vmMemoryOverheadPercent and settings.hypervisorMemoryPercent are both set"},
		{"two images", required(map[string]any{"controller": map[string]any{"image": map[string]any{"tag": "v1"}}, "image": map[string]any{"tag": "v2"}}), "controller.image.tag and image.tag disagree: keep image.tag"},
		{"an LKE launch deadline", alphaValues(t, map[string]any{"settings": map[string]any{"lkeCreateDeadline": "30s"}}), "settings.lkeCreateDeadline of the alpha chart has no equivalent: the LKE launch waits"},
		{"a webhook metrics port", alphaValues(t, map[string]any{"webhook": map[string]any{"metrics": map[string]any{"port": 9001}}}), "webhook.metrics.port of the alpha chart has no equivalent"},
		{"log output paths", alphaValues(t, map[string]any{"logOutputPaths": []any{"/var/log/karpenter"}}), "logOutputPaths of the alpha chart has no equivalent"},
		{"a sidecar", alphaValues(t, map[string]any{"controller": map[string]any{"sidecarContainer": []any{map[string]any{"name": "proxy"}}}}), "controller.sidecarContainer of the alpha chart has no equivalent"},
		{"an alpha release's image", alphaValues(t, map[string]any{"controller": map[string]any{"image": map[string]any{"tag": "v0.1.5"}}}), "controller.image.tag v0.1.5 is a release of the alpha provider (docker.io/linode/karpenter-provider-linode), whose binary this chart cannot run: remove controller.image.tag"},
		{"Linode debug logging", alphaValues(t, map[string]any{"linodeDebug": 1}), "linodeDebug is not supported: linodego's debug output includes the API token"},
		{"a PodDisruptionBudget name", alphaValues(t, map[string]any{"podDisruptionBudget": map[string]any{"name": "karpenter-pdb"}}), "podDisruptionBudget.name has no equivalent: the PodDisruptionBudget is named after the release (karpenter)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chartrender.Render("karpenter", tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("Render error = %v, want one containing %q", err, tt.message)
			}
		})
	}
}

// applyAlphaInstall installs the release that alpha values render, with its Secret.
func applyAlphaInstall(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	objects, err := chartrender.Render("karpenter", alphaValues(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, alphaCredentials.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, c, objects)
}
