package charts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Dashboards returns the Grafana dashboards among the rendered objects, by file name: the data of
// the ConfigMaps that carry the sidecar's label key.
func Dashboards(objects []*unstructured.Unstructured, labelKey string) map[string]string {
	dashboards := map[string]string{}
	for _, obj := range objects {
		if obj.GetKind() != "ConfigMap" {
			continue
		}
		if _, ok := obj.GetLabels()[labelKey]; !ok {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
		for file, content := range data {
			dashboards[file] = content
		}
	}
	return dashboards
}

// Query is one PromQL query of a dashboard: a target's expr, or the metric a template variable's
// label_values() reads.
type Query struct {
	Dashboard, Panel, Expr string
}

func (q Query) String() string { return fmt.Sprintf("%s, %q: %s", q.Dashboard, q.Panel, q.Expr) }

// labelValues is Grafana's label_values(metric, label) variable query; it is not PromQL.
var labelValues = regexp.MustCompile(`^label_values\(\s*([^,]+?)\s*,\s*\w+\s*\)$`)

// Queries returns every query of the dashboards, in a stable order.
func Queries(dashboards map[string]string) ([]Query, error) {
	var queries []Query
	for file, content := range dashboards {
		var dashboard map[string]any
		if err := json.Unmarshal([]byte(content), &dashboard); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		queries = collect(file, "", dashboard, queries)
		templating, _ := dashboard["templating"].(map[string]any)
		variables, _ := templating["list"].([]any)
		for _, v := range variables {
			variable, _ := v.(map[string]any)
			if variable["type"] != "query" {
				continue
			}
			query, _ := variable["query"].(map[string]any)
			text, _ := query["query"].(string)
			match := labelValues.FindStringSubmatch(text)
			if match == nil {
				return nil, fmt.Errorf("%s: variable %v: %q is not label_values(metric, label)", file, variable["name"], text)
			}
			queries = append(queries, Query{Dashboard: file, Panel: fmt.Sprintf("variable %v", variable["name"]), Expr: match[1]})
		}
	}
	sort.Slice(queries, func(i, j int) bool { return queries[i].String() < queries[j].String() })
	return queries, nil
}

// collect gathers every "expr" under node, naming each after the panel title above it.
func collect(file, panel string, node any, queries []Query) []Query {
	switch node := node.(type) {
	case map[string]any:
		if title, ok := node["title"].(string); ok && node["targets"] != nil {
			panel = title
		}
		for key, value := range node {
			if expr, ok := value.(string); ok && key == "expr" {
				queries = append(queries, Query{Dashboard: file, Panel: panel, Expr: expr})
				continue
			}
			queries = collect(file, panel, value, queries)
		}
	case []any:
		for _, value := range node {
			queries = collect(file, panel, value, queries)
		}
	}
	return queries
}

// grafanaIntervals are the variables Grafana replaces by a duration before it sends a query;
// the parser sees a duration in their place, as Prometheus does.
var grafanaIntervals = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// Selection is what a query reads of one metric: its name and the labels its matchers name.
type Selection struct {
	Metric string
	Labels []string
}

// Grouping is an aggregation's by() labels and the metrics beneath it, one of which at least
// must carry each label.
type Grouping struct {
	Labels, Metrics []string
}

// ParsedQuery is what a query reads, as Prometheus' own parser understands it.
type ParsedQuery struct {
	Selections []Selection
	Groupings  []Grouping
}

// ParseQuery parses the query with Prometheus' parser. Other Grafana variables than the
// intervals may appear only inside label matchers' strings.
func ParseQuery(expr string) (ParsedQuery, error) {
	parsed, err := parser.ParseExpr(grafanaIntervals.Replace(expr))
	if err != nil {
		return ParsedQuery{}, err
	}
	var query ParsedQuery
	var unnamed error
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		switch node := node.(type) {
		case *parser.VectorSelector:
			if node.Name == "" {
				unnamed = fmt.Errorf("%s selects no metric by name", node)
			}
			selection := Selection{Metric: node.Name}
			for _, matcher := range node.LabelMatchers {
				if matcher.Name != "__name__" {
					selection.Labels = append(selection.Labels, matcher.Name)
				}
			}
			query.Selections = append(query.Selections, selection)
		case *parser.AggregateExpr:
			if node.Without || len(node.Grouping) == 0 {
				return nil
			}
			grouping := Grouping{Labels: node.Grouping}
			parser.Inspect(node.Expr, func(inner parser.Node, _ []parser.Node) error {
				if selector, ok := inner.(*parser.VectorSelector); ok {
					grouping.Metrics = append(grouping.Metrics, selector.Name)
				}
				return nil
			})
			query.Groupings = append(query.Groupings, grouping)
		}
		return nil
	})
	return query, unnamed
}
