package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// metric is one metric the provider registers, as its constructor's call declares it.
type metric struct {
	name, kind, help, stage, pkg string
	labels                       []label
}

type label struct {
	name, help string
	values     []labelValue
}

type labelValue struct{ name, help string }

// constructors are operatorpkg's metric constructors, by the kind of metric each makes.
var constructors = map[string]string{
	"NewPrometheusCounter":   "counter",
	"NewPrometheusGauge":     "gauge",
	"NewPrometheusHistogram": "histogram",
	"NewPrometheusSummary":   "summary",
}

const operatorpkgMetrics = "github.com/awslabs/operatorpkg/metrics"

// metricsPage lists the metrics registered by the packages of pattern, read from their source:
// a metric is a call of an operatorpkg constructor whose options and labels are constants or
// package-level Label variables, which go/types evaluates.
func metricsPage(pattern string) (string, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}, pattern)
	if err != nil {
		return "", err
	}
	var metrics []metric
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			return "", fmt.Errorf("%s: %v", pkg.PkgPath, pkg.Errors[0])
		}
		found, err := metricsOf(pkg)
		if err != nil {
			return "", err
		}
		metrics = append(metrics, found...)
	}
	slices.SortFunc(metrics, func(a, b metric) int { return strings.Compare(a.name, b.name) })

	var b strings.Builder
	b.WriteString(generatedHeader("go run ./hack/docgen", "the metrics registered in pkg/"))
	b.WriteString(`# Metrics

The controller serves Prometheus metrics on ` + "`METRICS_PORT`" + ` (8080, path ` + "`/metrics`" + `): Karpenter
core's (see Karpenter's metrics reference) and the provider's, listed here. The chart's
` + "`serviceMonitor.enabled`" + ` scrapes them, and ` + "`dashboards.enabled`" + ` adds Grafana dashboards built on them.

`)
	for _, m := range metrics {
		fmt.Fprintf(&b, "### `%s`\n\n%s (%s; `%s`). %s\n\n", m.name, m.kind, strings.ToLower(m.stage), m.pkg, strings.TrimSpace(m.help))
		for _, l := range m.labels {
			fmt.Fprintf(&b, "- `%s`: %s\n", l.name, strings.TrimSpace(l.help))
			for _, v := range l.values {
				fmt.Fprintf(&b, "  - `%s`: %s\n", v.name, strings.TrimSpace(v.help))
			}
		}
		if len(m.labels) > 0 {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// metricsOf finds the metric constructor calls in the package's files.
func metricsOf(pkg *packages.Package) ([]metric, error) {
	var out []metric
	var failure error
	for _, file := range pkg.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || failure != nil {
				return failure == nil
			}
			kind, ok := constructorKind(pkg.TypesInfo, call)
			if !ok {
				return true
			}
			m, err := readMetric(pkg, call)
			if err != nil {
				failure = fmt.Errorf("%s: %w", pkg.Fset.Position(call.Pos()), err)
				return false
			}
			m.kind, m.pkg = kind, pkg.PkgPath
			out = append(out, m)
			return true
		})
	}
	return out, failure
}

func constructorKind(info *types.Info, call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != operatorpkgMetrics {
		return "", false
	}
	kind, ok := constructors[fn.Name()]
	return kind, ok
}

// readMetric reads constructor(registry, opts, labels, stage).
func readMetric(pkg *packages.Package, call *ast.CallExpr) (metric, error) {
	if len(call.Args) != 4 {
		return metric{}, fmt.Errorf("want 4 arguments, got %d", len(call.Args))
	}
	opts, ok := call.Args[1].(*ast.CompositeLit)
	if !ok {
		return metric{}, fmt.Errorf("the options are not a composite literal")
	}
	fields, err := stringFields(pkg, opts)
	if err != nil {
		return metric{}, err
	}
	m := metric{help: fields["Help"], stage: exprName(call.Args[3])}
	m.name = strings.Join(slices.DeleteFunc([]string{fields["Namespace"], fields["Subsystem"], fields["Name"]}, func(s string) bool { return s == "" }), "_")
	if m.labels, err = readLabels(pkg, call.Args[2]); err != nil {
		return metric{}, err
	}
	return m, nil
}

// readLabels reads a []Label literal (or nil) whose elements are literals or package-level
// variables of this or another loaded package.
func readLabels(pkg *packages.Package, expr ast.Expr) ([]label, error) {
	if ident, ok := expr.(*ast.Ident); ok && ident.Name == "nil" {
		return nil, nil
	}
	list, ok := expr.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("the labels are not a []Label literal")
	}
	var out []label
	for _, element := range list.Elts {
		lit, err := labelLiteral(pkg, element)
		if err != nil {
			return nil, err
		}
		fields, err := stringFields(pkg, lit)
		if err != nil {
			return nil, err
		}
		l := label{name: fields["Name"], help: fields["Help"]}
		for _, kv := range lit.Elts {
			kv, ok := kv.(*ast.KeyValueExpr)
			if !ok || exprName(kv.Key) != "Values" {
				continue
			}
			values, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				return nil, fmt.Errorf("label %s: Values is not a literal", l.name)
			}
			for _, v := range values.Elts {
				v, ok := v.(*ast.CompositeLit)
				if !ok {
					return nil, fmt.Errorf("label %s: a value is not a literal", l.name)
				}
				vf, err := stringFields(pkg, v)
				if err != nil {
					return nil, err
				}
				l.values = append(l.values, labelValue{name: vf["Name"], help: vf["Help"]})
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// labelLiteral is the Label literal an element of a []Label is, or the one the package-level
// variable it names was declared with.
func labelLiteral(pkg *packages.Package, element ast.Expr) (*ast.CompositeLit, error) {
	switch e := element.(type) {
	case *ast.CompositeLit:
		return e, nil
	case *ast.Ident:
		obj := pkg.TypesInfo.Uses[e]
		for _, file := range pkg.Syntax {
			var found *ast.CompositeLit
			ast.Inspect(file, func(n ast.Node) bool {
				spec, ok := n.(*ast.ValueSpec)
				if !ok || found != nil {
					return found == nil
				}
				for i, name := range spec.Names {
					if pkg.TypesInfo.Defs[name] == obj && i < len(spec.Values) {
						found, _ = spec.Values[i].(*ast.CompositeLit)
					}
				}
				return true
			})
			if found != nil {
				return found, nil
			}
		}
		return nil, fmt.Errorf("label %s: no literal declaration in the package", e.Name)
	}
	return nil, fmt.Errorf("a label is neither a literal nor a package-level variable")
}

// stringFields evaluates the constant string fields of a keyed composite literal.
func stringFields(pkg *packages.Package, lit *ast.CompositeLit) (map[string]string, error) {
	out := map[string]string{}
	for _, element := range lit.Elts {
		kv, ok := element.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: want keyed fields", pkg.Fset.Position(lit.Pos()))
		}
		tv, ok := pkg.TypesInfo.Types[kv.Value]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			continue
		}
		out[exprName(kv.Key)] = constant.StringVal(tv.Value)
	}
	return out, nil
}

// exprName is the name an identifier or a selector ends with.
func exprName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
