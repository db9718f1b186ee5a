package charts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
	"github.com/linode/karpenter-provider-linode/test/charts"
)

// TestDashboardsRenderOnlyWhenEnabled: by default the chart ships no dashboard; with
// dashboards.enabled each JSON file under charts/karpenter/dashboards becomes a ConfigMap that
// Grafana's sidecar picks up (its label, its folder annotation), in the namespace asked for.
func TestDashboardsRenderOnlyWhenEnabled(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartrender.Dir("karpenter"), "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards under charts/karpenter/dashboards: %v", err)
	}

	objects, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if obj.GetKind() == "ConfigMap" {
			t.Errorf("dashboards are off by default, yet the chart renders ConfigMap %s", obj.GetName())
		}
	}

	for _, tc := range []struct {
		name                         string
		values                       map[string]any
		namespace, label, labelValue string
	}{
		{name: "defaults", values: map[string]any{"enabled": true}, namespace: chartrender.Namespace, label: "grafana_dashboard", labelValue: "1"},
		{name: "sidecar settings", values: map[string]any{"enabled": true, "namespace": "monitoring", "label": "dashboards.grafana.com/load", "labelValue": "karpenter"},
			namespace: "monitoring", label: "dashboards.grafana.com/load", labelValue: "karpenter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects, err := chartrender.Render("karpenter", required(map[string]any{"dashboards": tc.values}))
			if err != nil {
				t.Fatal(err)
			}
			dashboards := charts.Dashboards(objects, tc.label)
			if len(dashboards) != len(files) {
				t.Fatalf("%d dashboards rendered, want one per file of charts/karpenter/dashboards (%d)", len(dashboards), len(files))
			}
			for _, obj := range objects {
				if obj.GetKind() != "ConfigMap" {
					continue
				}
				if obj.GetNamespace() != tc.namespace {
					t.Errorf("ConfigMap %s is in namespace %q, want %q", obj.GetName(), obj.GetNamespace(), tc.namespace)
				}
				if got := obj.GetLabels()[tc.label]; got != tc.labelValue {
					t.Errorf("ConfigMap %s has label %s=%q, want %q", obj.GetName(), tc.label, got, tc.labelValue)
				}
				if got := obj.GetAnnotations()["grafana_folder"]; got != "Karpenter" {
					t.Errorf("ConfigMap %s is for folder %q, want Karpenter", obj.GetName(), got)
				}
			}
			for _, file := range files {
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := dashboards[filepath.Base(file)]
				if !ok {
					t.Errorf("dashboard %s is not rendered", filepath.Base(file))
					continue
				}
				var dashboard struct {
					UID   string `json:"uid"`
					Title string `json:"title"`
				}
				if err := json.Unmarshal([]byte(got), &dashboard); err != nil || dashboard.UID == "" || dashboard.Title == "" {
					t.Errorf("dashboard %s as rendered is not a dashboard with a uid and a title (%v)", filepath.Base(file), err)
				}
				if got != string(want) && got+"\n" != string(want) {
					t.Errorf("dashboard %s as rendered differs from its file", filepath.Base(file))
				}
			}
		})
	}
}

// TestDashboardQueriesParse: every query of every dashboard is PromQL that Prometheus' own parser
// accepts and selects metrics by name. (Whether the controller exports those metrics is checked
// against a running controller in cmd/controller.)
func TestDashboardQueriesParse(t *testing.T) {
	objects, err := chartrender.Render("karpenter", required(map[string]any{"dashboards": map[string]any{"enabled": true}}))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := charts.Queries(charts.Dashboards(objects, "grafana_dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatal("the dashboards have no queries")
	}
	for _, q := range queries {
		if _, err := charts.ParseQuery(q.Expr); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
