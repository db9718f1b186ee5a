package main_test

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The controller's main imports only the operator package: importing it here registers the
	// same metrics, the same way, in this process.
	_ "github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/test/charts"
)

// seriesAfterEvents are the metrics of the dashboards that have no series until something
// happens that TestControllerAsTheChartRunsIt does not make happen; they are checked against
// the metrics the controller's code registers instead of its /metrics.
var seriesAfterEvents = map[string]string{
	"karpenter_linode_maintenance_decisions_total":                  "Linode host maintenance, or a node's Linode going down",
	"karpenter_linode_garbage_collection_nodes_deleted_total":       "a node no NodeClaim owns outliving the grace period",
	"karpenter_nodeclaims_terminated_total":                         "a NodeClaim terminated",
	"karpenter_nodeclaims_disrupted_total":                          "a NodeClaim disrupted",
	"karpenter_pods_provisioning_startup_duration_seconds":          "a pod starting on a node launched for it (no kubelet runs here)",
	"karpenter_cloudprovider_errors_total":                          "a launch Linode refuses",
	"karpenter_linode_sizing_price_ceiling":                         "a ceiling that holds some plan back",
	"karpenter_linode_instance_type_catalogue_refresh_errors_total": "a failed read of the plan catalogue",
	"karpenter_linode_nomination_pods_total":                        "a pending pod nominated to a starting Node (no Node registers here)",
}

// checkDashboardMetrics checks that every metric the chart's dashboards query is one the
// controller exports: a family on its /metrics (a histogram's by its _bucket, _sum and _count
// series), or, for the metrics in seriesAfterEvents, one its code registers.
func checkDashboardMetrics(t *testing.T, objects []*unstructured.Unstructured, exposition string) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	queries, err := charts.Queries(charts.Dashboards(objects, "grafana_dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatal("the chart rendered no dashboard queries")
	}
	checked := map[string]bool{}
	for _, q := range queries {
		names, err := charts.MetricNames(q.Expr)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		for _, name := range names {
			switch {
			case familyOf(name, families) != "":
			case afterEventsOf(name):
				if !registered(baseName(name)) {
					t.Errorf("%s: no metric %s is registered by the controller's code", q, name)
				}
			default:
				t.Errorf("%s: the running controller exports no %s on /metrics", q, name)
				continue
			}
			checked[name] = true
		}
	}
	var names []string
	for name := range checked {
		names = append(names, name)
	}
	sort.Strings(names)
	t.Logf("dashboard metrics checked: %s", strings.Join(names, ", "))
}

// familyOf is the name of the family on /metrics that has the metric's series, or "".
func familyOf(name string, families map[string]*dto.MetricFamily) string {
	if _, ok := families[name]; ok {
		return name
	}
	base := baseName(name)
	if family, ok := families[base]; ok && base != name {
		switch family.GetType() {
		case dto.MetricType_HISTOGRAM:
			return base
		case dto.MetricType_SUMMARY:
			if !strings.HasSuffix(name, "_bucket") {
				return base
			}
		}
	}
	return ""
}

func afterEventsOf(name string) bool {
	_, ok := seriesAfterEvents[baseName(name)]
	return ok
}

// baseName is a histogram's or summary's name without the suffix of one of its series.
func baseName(name string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if trimmed, ok := strings.CutSuffix(name, suffix); ok {
			return trimmed
		}
	}
	return name
}

// registered reports whether a metric of that name is registered in the controller-runtime
// registry, which is where the controller's code and Karpenter core register theirs: the registry
// refuses another metric of the same name, whether or not it has the same help and labels.
func registered(name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe of the registry"})
	err := crmetrics.Registry.Register(probe)
	if err == nil {
		crmetrics.Registry.Unregister(probe)
		return false
	}
	var already prometheus.AlreadyRegisteredError
	return errors.As(err, &already) || strings.Contains(err.Error(), "previously registered descriptor with the same fully-qualified name")
}
