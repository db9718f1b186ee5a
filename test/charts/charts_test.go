package charts_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/operatorpkg/object"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"

	"github.com/linode/karpenter-provider-linode/pkg/apis/crds"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// required are the values the install instructions always give.
func required(overrides map[string]any) map[string]any {
	values := map[string]any{
		"apiToken": "chart-test-token",
		"settings": map[string]any{"clusterName": "prod"},
	}
	for key, value := range overrides {
		if nested, ok := value.(map[string]any); ok {
			if existing, ok := values[key].(map[string]any); ok {
				for k, v := range nested {
					existing[k] = v
				}
				continue
			}
		}
		values[key] = value
	}
	return values
}

// instanceMode are the values of the README's instance-mode install, with settings over them.
func instanceMode(settings map[string]any) map[string]any {
	values := map[string]any{
		"apiToken": "chart-test-token",
		"region":   "us-ord",
		"settings": map[string]any{"mode": "instance"},
	}
	for key, value := range settings {
		values["settings"].(map[string]any)[key] = value
	}
	return values
}

var valueMatrix = []struct {
	name   string
	values map[string]any
}{
	{name: "defaults", values: required(nil)},
	{name: "existing secret", values: required(map[string]any{"apiToken": "", "existingSecret": "linode-credentials", "existingSecretKey": "token"})},
	{name: "instance mode", values: instanceMode(map[string]any{"clusterEndpoint": "https://203.0.113.10:6443"})},
	{name: "instance mode, endpoint from cluster-info", values: instanceMode(nil)},
	{name: "region override", values: required(map[string]any{"region": "us-sea"})},
	{name: "enterprise API", values: required(map[string]any{"settings": map[string]any{"apiVersion": "v4beta", "apiURL": "http://linode-emulator.kube-system:8080"}})},
	{name: "webhook off", values: required(map[string]any{"webhook": map[string]any{"enabled": false}})},
	{name: "service monitor", values: required(map[string]any{"serviceMonitor": map[string]any{"enabled": true}})},
	{name: "network policy", values: required(map[string]any{"networkPolicy": map[string]any{
		"enabled":     true,
		"webhookFrom": []any{map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.0/24"}}},
		"metricsFrom": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
	}})},
	{name: "feature gates and batching", values: required(map[string]any{"settings": map[string]any{
		"batchMaxDuration": "30s", "batchIdleDuration": "2s", "featureGates": map[string]any{"nodeRepair": true}}})},
}

func TestChartsPassHelmLint(t *testing.T) {
	for chart, values := range map[string]map[string]any{"karpenter-crd": nil, "karpenter": required(nil)} {
		t.Run(chart, func(t *testing.T) {
			result := lint.RunAll(chartrender.Dir(chart), values, chartrender.Namespace)
			for _, message := range result.Messages {
				// INFO messages are suggestions (e.g. an icon); warnings and errors fail.
				if message.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", message)
				}
			}
		})
	}
}

// TestCRDChartMatchesItsSources: the CRD chart renders exactly the CRDs the controller embeds
// (ours with the conversion webhook the controller serves, at the karpenter chart's webhook
// Service), each with Helm's keep policy unless keepOnUninstall is false.
func TestCRDChartMatchesItsSources(t *testing.T) {
	source := object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crds.LinodeNodeClass)
	source.Spec.Conversion = conversion.Conversion(apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
		Name: "karpenter-webhook", Namespace: chartrender.Namespace, Path: new(conversion.Path), Port: new(int32(443)),
	}})
	sources := []*apiextensionsv1.CustomResourceDefinition{source}
	for _, crd := range [][]byte{coreapis.NodePoolCRD, coreapis.NodeClaimCRD, coreapis.NodeOverlayCRD, coreapis.CapacityBufferCRD} {
		sources = append(sources, object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crd))
	}
	for _, keep := range []bool{true, false} {
		values := map[string]any{}
		if !keep {
			values["keepOnUninstall"] = false
		}
		objects, err := chartrender.Render("karpenter-crd", values)
		if err != nil {
			t.Fatal(err)
		}
		if len(objects) != len(sources) {
			t.Errorf("karpenter-crd renders %d objects, want the %d CRDs the controller embeds", len(objects), len(sources))
		}
		for _, want := range sources {
			want = want.DeepCopy()
			if keep {
				want.Annotations["helm.sh/resource-policy"] = "keep"
			}
			rendered := chartrender.Find(objects, "CustomResourceDefinition", want.Name)
			if rendered == nil {
				t.Errorf("%s is missing from the chart: run hack/sync-chart-crds.sh (make generate)", want.Name)
				continue
			}
			got, err := chartrender.As[apiextensionsv1.CustomResourceDefinition](rendered)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("keepOnUninstall=%t: the chart's %s differs from the CRD the controller embeds (with the conversion webhook and the keep policy): run hack/sync-chart-crds.sh (make generate)", keep, want.Name)
			}
		}
	}
	crd, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := chartrender.As[apiextensionsv1.CustomResourceDefinition](chartrender.Find(crd, "CustomResourceDefinition", conversion.CustomResourceDefinitionName))
	if err != nil {
		t.Fatal(err)
	}
	karpenter, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	if chartrender.Find(karpenter, "Service", rendered.Spec.Conversion.Webhook.ClientConfig.Service.Name) == nil {
		t.Errorf("the CRD's conversion webhook calls Service %s, which the karpenter chart does not install", rendered.Spec.Conversion.Webhook.ClientConfig.Service.Name)
	}
}

func TestRenderRefusesIncompleteValues(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]any
		message string
	}{
		{
			name:    "no cluster name",
			values:  map[string]any{"apiToken": "t"},
			message: "settings.clusterName is required: set it to the label of your LKE cluster",
		},
		{
			name:    "no token",
			values:  map[string]any{"settings": map[string]any{"clusterName": "prod"}},
			message: "a Linode API token is required: --set apiToken=$LINODE_TOKEN, or --set existingSecret=",
		},
		{
			name:    "instance mode without a region",
			values:  required(map[string]any{"settings": map[string]any{"mode": "instance"}}),
			message: "region is required in instance mode",
		},
		{
			name:    "a ServiceAccount the chart does not create, unnamed",
			values:  required(map[string]any{"serviceAccount": map[string]any{"create": false}}),
			message: "serviceAccount.create=false needs serviceAccount.name",
		},
		{
			name:    "a NetworkPolicy that would cut the API server off the webhooks",
			values:  required(map[string]any{"networkPolicy": map[string]any{"enabled": true}}),
			message: "networkPolicy.enabled needs networkPolicy.webhookFrom",
		},
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

func TestRenderedDeployment(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, objects []*unstructured.Unstructured, env map[string]string)
	}{
		{
			name:   "defaults",
			values: required(nil),
			check: func(t *testing.T, objects []*unstructured.Unstructured, env map[string]string) {
				want := map[string]string{
					"CLUSTER_NAME": "prod", "KARPENTER_MODE": "lke",
					"LINODE_URL": "https://api.linode.com", "LINODE_API_VERSION": "v4", "LOG_LEVEL": "info",
					"BATCH_MAX_DURATION": "10s", "BATCH_IDLE_DURATION": "1s", "DISABLE_WEBHOOK": "false",
					"LEADER_ELECTION_NAMESPACE": chartrender.Namespace, "MEMORY_LIMIT": "1073741824", "CPU_REQUESTS": "500",
					"SIZING_POLICY": "enabled", "SIZING_LARGE_FLEET_NODES": "100", "SIZING_TOLERANCE_PERCENT": "25",
				}
				for key, value := range want {
					if env[key] != value {
						t.Errorf("%s = %q, want %q", key, env[key], value)
					}
				}
				if token := tokenFromFile(t, env); token != "chart-test-token" {
					t.Errorf("the token file holds %q, want the apiToken value", token)
				}
				if _, ok := env["LINODE_TOKEN"]; ok {
					t.Errorf("LINODE_TOKEN is set: the token would be read once, and a rotation need a restart")
				}
				deployment, err := chartrender.As[appsv1.Deployment](chartrender.Find(objects, "Deployment", "karpenter"))
				if err != nil {
					t.Fatal(err)
				}
				for key, value := range deployment.Spec.Template.Annotations {
					if strings.Contains(key, "token") || strings.Contains(value, fmt.Sprintf("%x", sha256.Sum256([]byte("chart-test-token")))) {
						t.Errorf("the pod annotation %s=%s publishes the token's digest to whoever can read pods", key, value)
					}
				}
				if _, ok := env["LINODE_REGION"]; ok {
					t.Errorf("LINODE_REGION is set without a region value: it would override the cluster's")
				}
				if chartrender.Find(objects, "MutatingWebhookConfiguration", "karpenter") == nil {
					t.Errorf("the webhook is enabled by default but not rendered")
				}
				if bindings := bootstrapGroupBindings(t, objects); len(bindings) > 0 {
					t.Errorf("LKE mode grants the bootstrap group %v; only instance mode issues bootstrap tokens", bindings)
				}
			},
		},
		{
			name:   "existing secret",
			values: required(map[string]any{"apiToken": "", "existingSecret": "linode-credentials", "existingSecretKey": "token"}),
			check: func(t *testing.T, objects []*unstructured.Unstructured, env map[string]string) {
				if token := tokenFromFile(t, env); token != "from-existing-secret" {
					t.Errorf("the token file holds %q, want the existing Secret's", token)
				}
				if chartrender.Find(objects, "Secret", "karpenter") != nil {
					t.Errorf("the chart rendered its own Secret although existingSecret is set")
				}
			},
		},
		{
			name:   "instance mode, without a cluster name",
			values: instanceMode(map[string]any{"clusterEndpoint": "https://203.0.113.10:6443"}),
			check: func(t *testing.T, objects []*unstructured.Unstructured, env map[string]string) {
				want := map[string]string{
					"KARPENTER_MODE": "instance", "LINODE_REGION": "us-ord", "CLUSTER_ENDPOINT": "https://203.0.113.10:6443",
					"DISABLE_WEBHOOK": "true", "CLUSTER_NAME": "",
				}
				for key, value := range want {
					if env[key] != value {
						t.Errorf("%s = %q, want %q", key, env[key], value)
					}
				}
				if chartrender.Find(objects, "MutatingWebhookConfiguration", "karpenter") != nil {
					t.Errorf("the Node webhook is rendered in instance mode, whose kubelets register with Karpenter's taint themselves")
				}
				for _, binding := range bootstraptoken.ClusterRoleBindings() {
					if !slices.ContainsFunc(bootstrapGroupBindings(t, objects), func(rendered rbacv1.ClusterRoleBinding) bool {
						return equality.Semantic.DeepEqual(rendered.RoleRef, binding.RoleRef) && equality.Semantic.DeepEqual(rendered.Subjects, binding.Subjects)
					}) {
						t.Errorf("no ClusterRoleBinding grants %s to %s, as kubeadm grants its bootstrap tokens' group", binding.RoleRef.Name, bootstraptoken.Group)
					}
				}
				for _, binding := range bootstrapGroupBindings(t, objects) {
					if strings.HasPrefix(binding.RoleRef.Name, "system:certificates.k8s.io:") {
						t.Errorf("ClusterRoleBinding %s lets kube-controller-manager approve %s's certificate requests (%s) for any node name", binding.Name, bootstraptoken.Group, binding.RoleRef.Name)
					}
				}
				if !rendersBinding(t, objects, bootstraptoken.NodeCertificateRenewalBinding()) {
					t.Errorf("nodeCertificateRenewal is on by default, but no ClusterRoleBinding lets system:nodes renew their client certificates")
				}
			},
		},
		{
			name: "instance mode without node certificate renewal",
			values: map[string]any{
				"apiToken": "chart-test-token", "region": "us-ord", "settings": map[string]any{"mode": "instance"},
				"nodeCertificateRenewal": false,
			},
			check: func(t *testing.T, objects []*unstructured.Unstructured, _ map[string]string) {
				if rendersBinding(t, objects, bootstraptoken.NodeCertificateRenewalBinding()) {
					t.Errorf("nodeCertificateRenewal is false, but system:nodes are still bound to selfnodeclient")
				}
			},
		},
		{
			name:   "instance mode takes the endpoint from cluster-info",
			values: instanceMode(nil),
			check: func(t *testing.T, _ []*unstructured.Unstructured, env map[string]string) {
				if value, ok := env["CLUSTER_ENDPOINT"]; ok {
					t.Errorf("CLUSTER_ENDPOINT = %q without a clusterEndpoint value: it would hide cluster-info's", value)
				}
			},
		},
		{
			name:   "sizing policy off",
			values: required(map[string]any{"settings": map[string]any{"sizing": map[string]any{"policy": "disabled"}}}),
			check: func(t *testing.T, _ []*unstructured.Unstructured, env map[string]string) {
				if env["SIZING_POLICY"] != "disabled" {
					t.Errorf("SIZING_POLICY = %q, want disabled", env["SIZING_POLICY"])
				}
			},
		},
		{
			name:   "webhook off",
			values: required(map[string]any{"webhook": map[string]any{"enabled": false}}),
			check: func(t *testing.T, objects []*unstructured.Unstructured, env map[string]string) {
				if env["DISABLE_WEBHOOK"] != "true" {
					t.Errorf("DISABLE_WEBHOOK = %q, want true", env["DISABLE_WEBHOOK"])
				}
				if chartrender.Find(objects, "MutatingWebhookConfiguration", "karpenter") != nil {
					t.Errorf("MutatingWebhookConfiguration rendered with the webhook off")
				}
				if chartrender.Find(objects, "Service", "karpenter-webhook") == nil {
					t.Errorf("webhook Service missing with the Node webhook off: the LinodeNodeClass conversion webhook needs it")
				}
			},
		},
		{
			name:   "feature gates",
			values: required(map[string]any{"settings": map[string]any{"featureGates": map[string]any{"nodeRepair": true}}}),
			check: func(t *testing.T, _ []*unstructured.Unstructured, env map[string]string) {
				if !strings.Contains(env["FEATURE_GATES"], "NodeRepair=true") || !strings.Contains(env["FEATURE_GATES"], "NodeOverlay=false") {
					t.Errorf("FEATURE_GATES = %q", env["FEATURE_GATES"])
				}
			},
		},
	}
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "linode-credentials"}, Data: map[string][]byte{"token": []byte("from-existing-secret")}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := chartrender.Render("karpenter", tt.values)
			if err != nil {
				t.Fatal(err)
			}
			env, err := chartrender.ControllerEnvironment(objects, t.TempDir(), existing)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, objects, env)
		})
	}
}

// bootstrapGroupBindings are the rendered ClusterRoleBindings whose subject is the bootstrap
// tokens' group.
func bootstrapGroupBindings(t *testing.T, objects []*unstructured.Unstructured) []rbacv1.ClusterRoleBinding {
	t.Helper()
	var bindings []rbacv1.ClusterRoleBinding
	for _, obj := range objects {
		if obj.GetKind() != "ClusterRoleBinding" {
			continue
		}
		binding, err := chartrender.As[rbacv1.ClusterRoleBinding](obj)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool { return s.Name == bootstraptoken.Group }) {
			bindings = append(bindings, *binding)
		}
	}
	return bindings
}

// rendersBinding reports whether a rendered ClusterRoleBinding grants what want grants.
func rendersBinding(t *testing.T, objects []*unstructured.Unstructured, want *rbacv1.ClusterRoleBinding) bool {
	t.Helper()
	for _, obj := range objects {
		if obj.GetKind() != "ClusterRoleBinding" {
			continue
		}
		binding, err := chartrender.As[rbacv1.ClusterRoleBinding](obj)
		if err != nil {
			t.Fatal(err)
		}
		if equality.Semantic.DeepEqual(binding.RoleRef, want.RoleRef) && equality.Semantic.DeepEqual(binding.Subjects, want.Subjects) {
			return true
		}
	}
	return false
}

// tokenFromFile reads the token the controller would read from its LINODE_TOKEN_FILE.
func tokenFromFile(t *testing.T, env map[string]string) string {
	t.Helper()
	if env["LINODE_TOKEN_FILE"] == "" {
		t.Fatal("LINODE_TOKEN_FILE is not set")
	}
	token, err := os.ReadFile(env["LINODE_TOKEN_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	return string(token)
}

func TestDeploymentKeepsTheControllerAvailableAndOffItsOwnNodes(t *testing.T) {
	objects, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	deployment, err := chartrender.As[appsv1.Deployment](chartrender.Find(objects, "Deployment", "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	spec := deployment.Spec.Template.Spec
	if *deployment.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *deployment.Spec.Replicas)
	}
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q", spec.PriorityClassName)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool { return t.Key == "CriticalAddonsOnly" }) {
		t.Errorf("no CriticalAddonsOnly toleration: %v", spec.Tolerations)
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || !slices.ContainsFunc(terms[0].MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
		return r.Key == "karpenter.sh/nodepool" && r.Operator == corev1.NodeSelectorOpDoesNotExist
	}) {
		t.Errorf("the controller may be scheduled onto nodes it manages: %+v", terms)
	}
	if required := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution; len(required) > 0 {
		t.Errorf("required anti-affinity %+v leaves a replica Pending on a one-node cluster", required)
	}
	antiAffinity := spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(antiAffinity) != 1 || antiAffinity[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname || antiAffinity[0].PodAffinityTerm.LabelSelector == nil ||
		antiAffinity[0].PodAffinityTerm.LabelSelector.MatchLabels["app.kubernetes.io/name"] != "karpenter" {
		t.Errorf("replicas do not prefer separate nodes: anti-affinity %+v", antiAffinity)
	}
	container := spec.Containers[0]
	if container.Name != "controller" {
		t.Errorf("container name = %q; `kubectl logs -c controller` needs controller", container.Name)
	}
	sc := container.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext = %+v, want non-root, read-only, no privilege escalation", sc)
	}
	if container.ReadinessProbe == nil || container.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		container.LivenessProbe == nil || container.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes = %+v, %+v", container.ReadinessProbe, container.LivenessProbe)
	}
	if deployment.Spec.Template.Labels["app.kubernetes.io/name"] != "karpenter" {
		t.Errorf("pod labels = %v; `kubectl get pods -l app.kubernetes.io/name=karpenter` finds nothing", deployment.Spec.Template.Labels)
	}
	if chartrender.Find(objects, "PodDisruptionBudget", "karpenter") == nil {
		t.Errorf("no PodDisruptionBudget")
	}
}

// serviceMonitorCRD stands in for the Prometheus Operator's CRD, which the chart's optional
// ServiceMonitor needs; its schema is not what this test is about.
var serviceMonitorCRD = &apiextensionsv1.CustomResourceDefinition{
	ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
	Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "monitoring.coreos.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList"},
		Scope: apiextensionsv1.NamespaceScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: new(true),
			}},
		}},
	},
}

// TestRenderedChartsApply installs what the charts render, for each set of values, into a real
// apiserver with server-side apply, as `helm upgrade --install` would.
func TestRenderedChartsApply(t *testing.T) {
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
	if err := env.Client.Create(ctx, serviceMonitorCRD); err != nil {
		t.Fatal(err)
	}

	crdObjects, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(crdObjects) != 5 {
		t.Errorf("karpenter-crd rendered %d objects, want 5 CRDs", len(crdObjects))
	}
	applyAll(ctx, t, env.Client, crdObjects)

	for _, tt := range valueMatrix {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := chartrender.Render("karpenter", tt.values)
			if err != nil {
				t.Fatal(err)
			}
			applyAll(ctx, t, env.Client, objects)
		})
	}
	t.Run("the alpha chart's values with credentialsSecretRef", func(t *testing.T) {
		applyAlphaInstall(ctx, t, env.Client)
	})
}

func applyAll(ctx context.Context, t *testing.T, c client.Client, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objects {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("helm"), client.ForceOwnership)
		if err != nil {
			t.Errorf("apply %s: %v", describe(obj), err)
		}
	}
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

// TestExamplesAreAccepted applies every file in examples/ to a real apiserver with the CRDs
// installed, so a user who copies one gets no validation error.
func TestExamplesAreAccepted(t *testing.T) {
	env, err := environment.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	files, err := filepath.Glob(filepath.Join(chartrender.Dir(".."), "examples", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			objects, err := chartrender.DecodeFile(file)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]bool{}
			for _, obj := range objects {
				kinds[obj.GetKind()] = true
			}
			if !kinds["LinodeNodeClass"] || !kinds["NodePool"] {
				t.Errorf("kinds = %v, want a LinodeNodeClass and a NodePool", kinds)
			}
			applyAll(context.Background(), t, env.Client, objects)
		})
	}
}

// TestWebhookConfigurationMatchesTheWebhook: the chart's MutatingWebhookConfiguration sends the
// apiserver exactly where, and exactly what, the webhook package serves.
func TestWebhookConfigurationMatchesTheWebhook(t *testing.T) {
	objects, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := chartrender.As[admissionregistrationv1.MutatingWebhookConfiguration](chartrender.Find(objects, "MutatingWebhookConfiguration", "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	got := rendered.Webhooks[0]
	want := node.Configuration("karpenter", got.ClientConfig).Webhooks[0]
	if got.ClientConfig.Service == nil || *got.ClientConfig.Service.Path != node.Path {
		t.Errorf("the chart calls %+v, the webhook serves %s", got.ClientConfig.Service, node.Path)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("the chart's webhook differs from the webhook package's:\nchart:   %+v\npackage: %+v", got, want)
	}
}
