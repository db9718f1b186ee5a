package charts_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// helmTemplate is `helm template` (an install as a client-side dry run, which validates the values
// against the chart's schema and the cluster's version against its kubeVersion, as `helm install`
// does) of the chart as release karpenter in kube-system on Kubernetes kubeVersion.
func helmTemplate(t *testing.T, chart string, values map[string]any, kubeVersion string) error {
	t.Helper()
	chrt, err := loader.Load(chartrender.Dir(chart))
	if err != nil {
		t.Fatal(err)
	}
	version, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = "karpenter"
	install.Namespace = chartrender.Namespace
	install.KubeVersion = version
	_, err = install.Run(chrt, values)
	return err
}

// TestHelmRefusesMisspeltValuesAndBadEnums: a value the chart does not know, at any level where a
// misspelling would otherwise be ignored, and a value outside its enum fail `helm install` with a
// message naming the value.
func TestHelmRefusesMisspeltValuesAndBadEnums(t *testing.T) {
	tests := []struct {
		name   string
		chart  string
		values map[string]any
		names  []string // what the message must contain
	}{
		{"a misspelt top-level value", "karpenter", required(map[string]any{"replica": 1}), []string{"'replica'"}},
		{"a misspelt setting", "karpenter", required(map[string]any{"settings": map[string]any{"clusterNmae": "prod"}}), []string{"/settings", "'clusterNmae'"}},
		{"a misspelt feature gate", "karpenter", required(map[string]any{"settings": map[string]any{"featureGates": map[string]any{"nodeRepiar": true}}}), []string{"/settings/featureGates", "'nodeRepiar'"}},
		{"a misspelt node identity value", "karpenter", merge(instanceMode(nil), map[string]any{"nodeIdentity": map[string]any{"replica": 3}}), []string{"/nodeIdentity", "'replica'"}},
		{"a misspelt flowSchemas value", "karpenter", required(map[string]any{"flowSchemas": map[string]any{"enable": false}}), []string{"/flowSchemas", "'enable'"}},
		{"a misspelt networkPolicy value", "karpenter", required(map[string]any{"networkPolicy": map[string]any{"enabled": true, "webhookfrom": []any{}}}), []string{"/networkPolicy", "'webhookfrom'"}},
		{"a bad mode", "karpenter", required(map[string]any{"settings": map[string]any{"mode": "kubeadm"}}), []string{"/settings/mode", "'lke', 'instance'"}},
		{"a bad API version", "karpenter", required(map[string]any{"settings": map[string]any{"apiVersion": "v5"}}), []string{"/settings/apiVersion", "'v4', 'v4beta'"}},
		{"a bad sizing policy", "karpenter", required(map[string]any{"settings": map[string]any{"sizing": map[string]any{"policy": "off"}}}), []string{"/settings/sizing/policy", "'enabled', 'disabled'"}},
		{"a bad log level", "karpenter", required(map[string]any{"logLevel": "warn"}), []string{"/logLevel", "'debug', 'info', 'error'"}},
		{"a bad preference policy", "karpenter", required(map[string]any{"settings": map[string]any{"preferencePolicy": "respect"}}), []string{"/settings/preferencePolicy", "'Respect', 'Ignore'"}},
		{"a bad duration", "karpenter", required(map[string]any{"settings": map[string]any{"batchMaxDuration": "10 seconds"}}), []string{"/settings/batchMaxDuration"}},
		{"a misspelt CRD chart value", "karpenter-crd", map[string]any{"keepOnUninstal": false}, []string{"'keepOnUninstal'"}},
		{"a misspelt CRD chart webhook value", "karpenter-crd", map[string]any{"webhook": map[string]any{"servicename": "prod-karpenter-webhook"}}, []string{"/webhook", "'servicename'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := helmTemplate(t, tt.chart, tt.values, "v1.36.1")
			if err == nil {
				t.Fatal("helm template succeeded")
			}
			for _, name := range tt.names {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name %s", err, name)
				}
			}
		})
	}
}

// TestHelmAcceptsTheDocumentedValues: the defaults with the install instructions' values, every
// set of values the other chart tests render and the alpha chart's values file pass the schema, on the least Kubernetes release the chart names; the release
// before it is refused by name.
func TestHelmAcceptsTheDocumentedValues(t *testing.T) {
	sets := map[string]map[string]any{"karpenter-crd defaults": nil, "karpenter-crd, CRDs deleted on uninstall": {"keepOnUninstall": false}}
	for _, tt := range valueMatrix {
		sets[tt.name] = tt.values
	}
	for name, values := range sets {
		t.Run(name, func(t *testing.T) {
			chart := "karpenter"
			if strings.HasPrefix(name, "karpenter-crd") {
				chart = "karpenter-crd"
			}
			if err := helmTemplate(t, chart, values, "v1.31.0"); err != nil {
				t.Errorf("helm template on Kubernetes 1.31: %v", err)
			}
			err := helmTemplate(t, chart, values, "v1.30.14")
			if err == nil || !strings.Contains(err.Error(), "chart requires kubeVersion: >= 1.31.0-0 which is incompatible with Kubernetes v1.30.14") {
				t.Errorf("helm template on Kubernetes 1.30: %v, want kubeVersion refused", err)
			}
		})
	}
	t.Run("the alpha chart's values file", func(t *testing.T) {
		if err := helmTemplate(t, "karpenter", alphaValues(t, nil), "v1.31.0"); err != nil {
			t.Errorf("helm template: %v", err)
		}
	})
}
