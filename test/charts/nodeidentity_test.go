package charts_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// TestNodeIdentityRunsApartFromTheController checks what instance mode's chart renders for the
// node identity component: a Deployment of its own, running the image's node-identity command as a
// ServiceAccount of its own, whose pods no selector of the controller's picks up (its Deployment,
// its Services, its PodDisruptionBudget), and the key mounted into the controller's pods; and that
// the controller's own roles hold none of what makes a node.
func TestNodeIdentityRunsApartFromTheController(t *testing.T) {
	objects, err := chartrender.Render("karpenter", instanceMode(nil))
	if err != nil {
		t.Fatal(err)
	}
	identity, err := chartrender.As[appsv1.Deployment](chartrender.Find(objects, "Deployment", "karpenter-node-identity"))
	if err != nil {
		t.Fatal(err)
	}
	controller, err := chartrender.As[appsv1.Deployment](chartrender.Find(objects, "Deployment", "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	spec := identity.Spec.Template.Spec
	if spec.ServiceAccountName != "karpenter-node-identity" || chartrender.Find(objects, "ServiceAccount", "karpenter-node-identity") == nil {
		t.Errorf("the node identity component runs as ServiceAccount %q", spec.ServiceAccountName)
	}
	if len(spec.Containers) != 1 || !slices.Equal(spec.Containers[0].Command, []string{"/node-identity"}) || spec.Containers[0].Image != controller.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("the node identity component's container is %+v; want the controller's image running /node-identity", spec.Containers)
	}
	if *identity.Spec.Replicas != 2 || chartrender.Find(objects, "PodDisruptionBudget", "karpenter-node-identity") == nil {
		t.Errorf("the node identity component runs %d replicas; want 2 under a PodDisruptionBudget, as nodes cannot join while none runs", *identity.Spec.Replicas)
	}
	identityPods := labels.Set(identity.Spec.Template.Labels)
	for _, selector := range controllerSelectors(t, objects) {
		if selector.Matches(identityPods) {
			t.Errorf("the controller's selector %s picks the node identity component's pods %v", selector, identityPods)
		}
	}
	antiAffinity := spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(antiAffinity) != 1 || !labels.SelectorFromSet(antiAffinity[0].PodAffinityTerm.LabelSelector.MatchLabels).Matches(identityPods) {
		t.Errorf("the node identity component's replicas do not prefer separate nodes: %+v", antiAffinity)
	}
	if terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) != 1 || terms[0].MatchExpressions[0].Key != "karpenter.sh/nodepool" {
		t.Errorf("the node identity component may run on nodes Karpenter removes: %+v", terms)
	}

	env, err := chartrender.ControllerEnvironment(objects, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keyFile := env["BOOTSTRAP_TOKEN_KEY_FILE"]
	mountsKey := slices.ContainsFunc(controller.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "karpenter-bootstrap-token-key" && v.Secret.Optional != nil && *v.Secret.Optional
	})
	if !mountsKey || !strings.HasSuffix(keyFile, "/key") {
		t.Errorf("the controller's pods do not mount the key's Secret (optional until the component makes it) at BOOTSTRAP_TOKEN_KEY_FILE %q", keyFile)
	}

	for _, role := range controllerRules(t, objects) {
		for _, resource := range role.Resources {
			if resource == "certificatesigningrequests/approval" || resource == "signers" {
				t.Errorf("the controller's roles let it approve certificates: %+v", role)
			}
		}
	}

	lke, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range lke {
		if strings.Contains(obj.GetName(), "node-identity") {
			t.Errorf("LKE mode, whose nodes need no bootstrap token, renders %s %s", obj.GetKind(), obj.GetName())
		}
	}
}

// controllerSelectors are the label selectors of the controller's Deployment, Services and
// PodDisruptionBudget.
func controllerSelectors(t *testing.T, objects []*unstructured.Unstructured) []labels.Selector {
	t.Helper()
	var selectors []labels.Selector
	for _, obj := range objects {
		if strings.Contains(obj.GetName(), "node-identity") {
			continue
		}
		switch obj.GetKind() {
		case "Service":
			service, err := chartrender.As[corev1.Service](obj)
			if err != nil {
				t.Fatal(err)
			}
			selectors = append(selectors, labels.SelectorFromSet(service.Spec.Selector))
		case "Deployment", "PodDisruptionBudget":
			matchLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
			selector, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: matchLabels})
			if err != nil {
				t.Fatal(err)
			}
			selectors = append(selectors, selector)
		}
	}
	return selectors
}

// controllerRules are the rules of every Role and ClusterRole bound to the controller's
// ServiceAccount.
func controllerRules(t *testing.T, objects []*unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	bound := map[string]bool{}
	for _, obj := range objects {
		if obj.GetKind() != "RoleBinding" && obj.GetKind() != "ClusterRoleBinding" {
			continue
		}
		binding, err := chartrender.As[rbacv1.ClusterRoleBinding](obj)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" && s.Name == "karpenter" }) {
			bound[binding.RoleRef.Kind+"/"+obj.GetNamespace()+"/"+binding.RoleRef.Name] = true
		}
	}
	var rules []rbacv1.PolicyRule
	for _, obj := range objects {
		if obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole" || !bound[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] {
			continue
		}
		role, err := chartrender.As[rbacv1.ClusterRole](obj)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, role.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no role is bound to the controller's ServiceAccount")
	}
	return rules
}
