package charts_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/google/cel-go/cel"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// apiLeastVersion is the Kubernetes minor release that first serves each kind the charts render,
// where it is later than the oldest release anyone still runs.
var apiLeastVersion = map[string]int{
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":        30,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding": 30,
	"flowcontrol.apiserver.k8s.io/v1 FlowSchema":                       29,
}

// TestKubeVersionIsWhatTheChartsNeed: each chart's kubeVersion admits exactly the Kubernetes
// releases that accept what it installs with every feature on. kube-apiserver 1.N compiles a new
// CEL expression (a CRD's validation rule, an admission policy's) in the environment of 1.N-1, so
// a rule that uses a library of 1.30 (isCIDR) needs 1.31. The karpenter chart runs on the CRDs,
// so it needs what they need.
func TestKubeVersionIsWhatTheChartsNeed(t *testing.T) {
	crds, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	controller, err := chartrender.Render("karpenter", instanceMode(map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	crdsNeed := leastMinorFor(t, crds)
	controllerNeeds := max(leastMinorFor(t, controller), crdsNeed)
	for chart, need := range map[string]int{"karpenter-crd": crdsNeed, "karpenter": controllerNeeds} {
		chrt, err := loader.Load(chartrender.Dir(chart))
		if err != nil {
			t.Fatal(err)
		}
		constraint, err := semver.NewConstraint(chrt.Metadata.KubeVersion)
		if err != nil {
			t.Fatalf("%s: kubeVersion %q: %v", chart, chrt.Metadata.KubeVersion, err)
		}
		least := semver.MustParse(fmt.Sprintf("1.%d.0", need))
		older := semver.MustParse(fmt.Sprintf("1.%d.99", need-1))
		if !constraint.Check(least) || constraint.Check(older) {
			t.Errorf("%s: kubeVersion %q, but what it installs needs Kubernetes 1.%d or later", chart, chrt.Metadata.KubeVersion, need)
		}
	}
}

// leastMinorFor is the least Kubernetes 1.x release that serves every kind among objects and
// compiles every CEL expression they hold as a new expression.
func leastMinorFor(t *testing.T, objects []*unstructured.Unstructured) int {
	t.Helper()
	least := 21
	var expressions []string
	for _, obj := range objects {
		least = max(least, apiLeastVersion[obj.GetAPIVersion()+" "+obj.GetKind()])
		expressions = append(expressions, celExpressions(obj.Object)...)
	}
	if len(expressions) == 0 {
		t.Fatal("no CEL expression found: the walk over the objects is broken")
	}
	for minor := least; ; minor++ {
		if minor > 50 {
			t.Fatalf("expressions compile in no release up to 1.50: %v", failing(expressions, 50))
		}
		if len(failing(expressions, minor)) == 0 {
			return minor
		}
	}
}

// failing are the expressions kube-apiserver 1.minor refuses to compile as new expressions.
func failing(expressions []string, minor int) []string {
	env, err := environment.MustBaseEnvSet(version.MajorMinor(1, uint(minor-1))).NewExpressionsEnv().Extend(
		// Every variable a CRD rule or an admission policy sees, untyped: what matters here is
		// which functions and macros exist, not the objects' schemas.
		cel.Variable("self", cel.DynType), cel.Variable("oldSelf", cel.DynType),
		cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType), cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType), cel.Variable("variables", cel.DynType),
	)
	if err != nil {
		return []string{err.Error()}
	}
	var refused []string
	for _, expression := range expressions {
		if _, issues := env.Compile(expression); issues != nil && issues.Err() != nil {
			refused = append(refused, fmt.Sprintf("%s: %v", expression, issues.Err()))
		}
	}
	return refused
}

// celExpressions finds the CEL in an object: CRD rules and messageExpressions, and an admission
// policy's expressions (validations, variables, match conditions, audit annotations).
func celExpressions(node any) []string {
	var found []string
	switch node := node.(type) {
	case map[string]any:
		for key, value := range node {
			if s, ok := value.(string); ok && slices.Contains([]string{"rule", "messageExpression", "expression", "valueExpression"}, key) {
				found = append(found, s)
				continue
			}
			found = append(found, celExpressions(value)...)
		}
	case []any:
		for _, value := range node {
			found = append(found, celExpressions(value)...)
		}
	}
	return found
}
