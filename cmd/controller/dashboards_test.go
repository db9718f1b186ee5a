package main_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
// series) with the labels the query matches or groups by, or, for the metrics in
// seriesAfterEvents, one its code registers (whose labels are not checked).
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
	for _, q := range queries {
		parsed, err := charts.ParseQuery(q.Expr)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		for _, selection := range parsed.Selections {
			name := selection.Metric
			family := familyOf(name, families)
			switch {
			case family != nil:
				for _, label := range selection.Labels {
					if !carries(family, name, label) {
						t.Errorf("%s: %s has no label %s on /metrics", q, name, label)
					}
				}
			case afterEventsOf(name):
				if !registered(baseName(name)) {
					t.Errorf("%s: no metric %s is registered by the controller's code", q, name)
				}
			default:
				t.Errorf("%s: the running controller exports no %s on /metrics", q, name)
			}
		}
		for _, grouping := range parsed.Groupings {
			for _, label := range grouping.Labels {
				if !groupable(grouping.Metrics, label, families) {
					t.Errorf("%s: grouped by %s, which none of %v carries on /metrics", q, label, grouping.Metrics)
				}
			}
		}
	}
}

// groupable says whether one of the metrics carries the label, or none is on /metrics to tell.
func groupable(metrics []string, label string, families map[string]*dto.MetricFamily) bool {
	seen := false
	for _, name := range metrics {
		if family := familyOf(name, families); family != nil {
			seen = true
			if carries(family, name, label) {
				return true
			}
		}
	}
	return !seen
}

// carries says whether a series of the family carries the label; a histogram's _bucket series
// carry le.
func carries(family *dto.MetricFamily, name, label string) bool {
	if label == "le" && family.GetType() == dto.MetricType_HISTOGRAM && strings.HasSuffix(name, "_bucket") {
		return true
	}
	for _, m := range family.GetMetric() {
		for _, pair := range m.GetLabel() {
			if pair.GetName() == label {
				return true
			}
		}
	}
	return false
}

// familyOf is the family on /metrics that has the metric's series, or nil.
func familyOf(name string, families map[string]*dto.MetricFamily) *dto.MetricFamily {
	if family, ok := families[name]; ok {
		return family
	}
	base := baseName(name)
	if family, ok := families[base]; ok && base != name {
		switch family.GetType() {
		case dto.MetricType_HISTOGRAM:
			return family
		case dto.MetricType_SUMMARY:
			if !strings.HasSuffix(name, "_bucket") {
				return family
			}
		}
	}
	return nil
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

// checkBudgetsAsTheAPICounts checks that the controller counts each of its Linode API requests
// against the budget the API (the emulator, with Linode's limits) charges it to: for every
// budget, the requests the controller counted are those the API's last answer said the window
// has used. The emulator's clock stands still, so its windows hold every request of the test.
func checkBudgetsAsTheAPICounts(t *testing.T, metricsURL string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mismatch := budgetMismatch(metricsURL)
		if mismatch == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Error(mismatch)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// budgetMismatch describes how the controller's count of requests differs from the API's, or
// is empty when they agree.
func budgetMismatch(metricsURL string) string {
	_, exposition, err := get(metricsURL)
	if err != nil {
		return err.Error()
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		return err.Error()
	}
	byBudget := func(name string) map[string]float64 {
		values := map[string]float64{}
		for _, m := range families[name].GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "budget" {
					values[label.GetValue()] += m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
		}
		return values
	}
	limits, remaining := byBudget("karpenter_linode_api_rate_limit"), byBudget("karpenter_linode_api_rate_limit_remaining")
	counted := byBudget("karpenter_linode_api_requests_total")
	if limits["list"] == 0 {
		return "the controller reports no limit of the list budget: it read no rate-limit header"
	}
	var mismatches []string
	for budget, limit := range limits {
		if used := limit - remaining[budget]; used != counted[budget] {
			mismatches = append(mismatches, fmt.Sprintf("%s: the API counted %v requests, the controller %v", budget, used, counted[budget]))
		}
	}
	for budget := range counted {
		if _, ok := limits[budget]; !ok {
			mismatches = append(mismatches, fmt.Sprintf("%s: the controller counted %v requests the API charged to no such budget", budget, counted[budget]))
		}
	}
	return strings.Join(mismatches, "; ")
}
