package chartrender

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Policy is one of a chart's ValidatingAdmissionPolicies, compiled as kube-apiserver compiles it
// (k8s.io/apiserver's validating admission policy plugin, at the version kube-apiserver v1.36
// runs), so that tests evaluate its CEL in process, many thousand requests a second, rather than
// one request per round trip to a real apiserver. What it does not evaluate (parameters,
// namespace and object selectors, excluded resources, authorizer checks) it refuses to compile.
type Policy struct {
	Name        string
	constraints *admissionregistrationv1.MatchResources
	validator   validating.Validator
}

// Request is an admission request as a policy sees it: the objects as kube-apiserver hands them
// to admission (a Secret's stringData already merged into its data, metadata.creationTimestamp
// set on CREATE).
type Request struct {
	Operation   admission.Operation
	Resource    schema.GroupVersionResource
	SubResource string
	Kind        schema.GroupVersionKind
	Namespace   string
	Name        string
	// Object is nil on DELETE, OldObject on CREATE.
	Object, OldObject runtime.Object
	User              user.Info
}

// AdmissionPolicies compiles every ValidatingAdmissionPolicy among objects, as Render returns them.
func AdmissionPolicies(objects []*unstructured.Unstructured) ([]*Policy, error) {
	var policies []*Policy
	for _, obj := range objects {
		if obj.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		policy, err := CompilePolicy(obj)
		if err != nil {
			return nil, err
		}
		policies = append(policies, policy)
	}
	return policies, nil
}

// CompilePolicy compiles a ValidatingAdmissionPolicy as kube-apiserver does (the plugin's
// compilePolicy), with the strict cost of the current compatibility version.
func CompilePolicy(obj *unstructured.Unstructured) (*Policy, error) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, policy); err != nil {
		return nil, fmt.Errorf("ValidatingAdmissionPolicy %s: %w", obj.GetName(), err)
	}
	spec := policy.Spec
	if spec.ParamKind != nil || spec.MatchConstraints == nil || spec.MatchConstraints.NamespaceSelector != nil ||
		spec.MatchConstraints.ObjectSelector != nil || len(spec.MatchConstraints.ExcludeResourceRules) > 0 {
		return nil, fmt.Errorf("ValidatingAdmissionPolicy %s: parameters, selectors and excluded resources are not evaluated here", policy.Name)
	}
	declarations := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, err
	}
	variables := make([]plugincel.NamedExpressionAccessor, len(spec.Variables))
	for i, variable := range spec.Variables {
		variables[i] = &validating.Variable{Name: variable.Name, Expression: variable.Expression}
	}
	compiler.CompileAndStoreVariables(variables, declarations, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(spec.MatchConditions) > 0 {
		conditions := make([]plugincel.ExpressionAccessor, len(spec.MatchConditions))
		for i := range spec.MatchConditions {
			conditions[i] = (*matchconditions.MatchCondition)(&spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(conditions, declarations, environment.StoredExpressions),
			spec.FailurePolicy, "policy", "validate", policy.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(spec.Validations))
	for i, validation := range spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: validation.Expression, Message: validation.Message, Reason: validation.Reason}
		if validation.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: validation.MessageExpression}
		}
	}
	validationFilter := compiler.CompileCondition(validations, declarations, environment.StoredExpressions)
	validator := validating.NewValidator(
		validationFilter, matcher,
		compiler.CompileCondition(nil, declarations, environment.StoredExpressions),
		compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions),
		spec.FailurePolicy, nil)
	return &Policy{Name: policy.Name, constraints: spec.MatchConstraints, validator: validator}, nil
}

// Admit evaluates the policy on req as kube-apiserver would with a binding whose action is Deny:
// nil when it admits the request, or an error with each failed validation's message, or the
// evaluation error (an expression that does not compile, or fails) that its failure policy turns
// into a denial, marked "(error)".
func (p *Policy) Admit(ctx context.Context, req Request) error {
	if !p.matches(req) {
		return nil
	}
	attributes := admission.NewAttributesRecord(req.Object, req.OldObject, req.Kind, req.Namespace, req.Name,
		req.Resource, req.SubResource, req.Operation, nil, false, req.User)
	versioned := &admission.VersionedAttributes{
		Attributes: attributes, VersionedKind: req.Kind, VersionedObject: req.Object, VersionedOldObject: req.OldObject,
	}
	var namespace *corev1.Namespace
	if req.Namespace != "" {
		namespace = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: req.Namespace}}
	}
	result := p.validator.Validate(ctx, req.Resource, versioned, nil, namespace, celconfig.RuntimeCELCostBudget, nil)
	var denials []string
	for _, decision := range result.Decisions {
		if decision.Action == validating.ActionDeny {
			denials = append(denials, fmt.Sprintf("%s (%s)", decision.Message, decision.Evaluation))
		}
	}
	if len(denials) > 0 {
		return fmt.Errorf("ValidatingAdmissionPolicy %s denied the request: %s", p.Name, strings.Join(denials, "; "))
	}
	return nil
}

// AdmitAll is nil when every policy admits req, or the denials joined.
func AdmitAll(ctx context.Context, policies []*Policy, req Request) error {
	var denials []error
	for _, policy := range policies {
		if err := policy.Admit(ctx, req); err != nil {
			denials = append(denials, err)
		}
	}
	return errors.Join(denials...)
}

// matches says whether the policy's resource rules select the request.
func (p *Policy) matches(req Request) bool {
	resource := req.Resource.Resource
	if req.SubResource != "" {
		resource += "/" + req.SubResource
	}
	return slices.ContainsFunc(p.constraints.ResourceRules, func(rule admissionregistrationv1.NamedRuleWithOperations) bool {
		return (slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) || slices.Contains(rule.Operations, admissionregistrationv1.OperationType(req.Operation))) &&
			(slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.APIGroups, req.Resource.Group)) &&
			(slices.Contains(rule.APIVersions, "*") || slices.Contains(rule.APIVersions, req.Resource.Version)) &&
			(slices.Contains(rule.Resources, "*") || slices.Contains(rule.Resources, resource)) &&
			(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, req.Name))
	})
}
