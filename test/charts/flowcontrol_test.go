package charts_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// flowSchemaHeader is where kube-apiserver's API Priority and Fairness names the FlowSchema a
// request matched.
const flowSchemaHeader = "X-Kubernetes-PF-FlowSchema-UID"

// TestFlowSchemasMatchTheControllersRequests installs the chart outside kube-system, where
// nothing built in raises a ServiceAccount's priority, and makes the controller's kinds of
// request with a token of its ServiceAccount: without the chart's FlowSchemas its lease renewals
// fall under workload-low, where a busy API server throttles them; with them they go to
// leader-election, and its other requests to workload-high.
func TestFlowSchemasMatchTheControllersRequests(t *testing.T) {
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
	const namespace = "karpenter"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	crdObjects, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, env.Client, crdObjects)
	without, err := chartrender.RenderIn("karpenter", namespace, required(map[string]any{"flowSchemas": map[string]any{"enabled": false}}))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, env.Client, without)

	config, err := environment.ServiceAccountConfig(ctx, env.Config, namespace, "karpenter")
	if err != nil {
		t.Fatal(err)
	}
	matched := &matchedFlowSchemas{}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return matched.recording(rt) })
	controller, err := client.New(config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "karpenter-leader-election"}}
	if err := controller.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	// The requests leader election and the controllers make: a lease's get and renewal, and a
	// list of the cluster's pods.
	requests := func() (renewal, list string) {
		t.Helper()
		if err := controller.Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
			t.Fatal(err)
		}
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		if err := controller.Update(ctx, lease); err != nil {
			t.Fatal(err)
		}
		renewal = matched.last("/leases/")
		if err := controller.List(ctx, &corev1.PodList{}); err != nil {
			t.Fatal(err)
		}
		return renewal, matched.last("/pods")
	}
	if renewal, _ := requests(); renewal != flowSchemaUID(ctx, t, env.Client, "service-accounts") {
		t.Fatalf("without the chart's FlowSchemas the lease renewal matched FlowSchema %s, want the built-in service-accounts (workload-low)", renewal)
	}

	with, err := chartrender.RenderIn("karpenter", namespace, required(nil))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, env.Client, with)
	leaderElection, workload := flowSchemaUID(ctx, t, env.Client, "karpenter-leader-election"), flowSchemaUID(ctx, t, env.Client, "karpenter-workload")
	for _, schema := range []struct{ name, level string }{{"karpenter-leader-election", "leader-election"}, {"karpenter-workload", "workload-high"}} {
		flowSchema := &flowcontrolv1.FlowSchema{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: schema.name}, flowSchema); err != nil {
			t.Fatal(err)
		}
		if flowSchema.Spec.PriorityLevelConfiguration.Name != schema.level {
			t.Errorf("FlowSchema %s sends its requests to %s, want %s", schema.name, flowSchema.Spec.PriorityLevelConfiguration.Name, schema.level)
		}
	}
	// kube-apiserver takes up FlowSchemas a moment after they are written.
	deadline := time.Now().Add(30 * time.Second)
	for {
		renewal, list := requests()
		if renewal == leaderElection && list == workload {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the chart's FlowSchemas the lease renewal matched %s (want karpenter-leader-election, %s) and the list %s (want karpenter-workload, %s)", renewal, leaderElection, list, workload)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func flowSchemaUID(ctx context.Context, t *testing.T, c client.Client, name string) string {
	t.Helper()
	flowSchema := &flowcontrolv1.FlowSchema{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, flowSchema); err != nil {
		t.Fatal(err)
	}
	return string(flowSchema.UID)
}

// matchedFlowSchemas records the FlowSchema each response says its request matched.
type matchedFlowSchemas struct {
	mu      sync.Mutex
	matches []struct{ path, uid string }
}

func (m *matchedFlowSchemas) recording(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil {
			m.mu.Lock()
			m.matches = append(m.matches, struct{ path, uid string }{req.URL.Path, resp.Header.Get(flowSchemaHeader)})
			m.mu.Unlock()
		}
		return resp, err
	})
}

// last is the FlowSchema of the latest request whose path contains path.
func (m *matchedFlowSchemas) last(path string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.matches) - 1; i >= 0; i-- {
		if strings.Contains(m.matches[i].path, path) {
			return m.matches[i].uid
		}
	}
	return ""
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestNetworkPolicyAdmitsTheWebhookAndMetricsCallers checks that the optional NetworkPolicy
// selects the controller pods and opens exactly the ports their webhook server and metrics
// endpoint listen on, to the peers the values name; applying it is TestRenderedChartsApply's.
func TestNetworkPolicyAdmitsTheWebhookAndMetricsCallers(t *testing.T) {
	apiServer := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}
	prometheus := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	objects, err := chartrender.Render("karpenter", required(map[string]any{"networkPolicy": map[string]any{
		"enabled":     true,
		"webhookFrom": []any{map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.0/24"}}},
		"metricsFrom": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
	}, "webhook": map[string]any{"port": 9443}}))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := chartrender.As[networkingv1.NetworkPolicy](chartrender.Find(objects, "NetworkPolicy", "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	deployment, err := chartrender.As[appsv1.Deployment](chartrender.Find(objects, "Deployment", "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if selector.Empty() || !selector.Matches(labels.Set(deployment.Spec.Template.Labels)) {
		t.Errorf("the NetworkPolicy's pod selector %v does not select the controller pods %v", selector, deployment.Spec.Template.Labels)
	}
	ports := map[string]int32{}
	for _, port := range deployment.Spec.Template.Spec.Containers[0].Ports {
		ports[port.Name] = port.ContainerPort
	}
	for _, want := range []struct {
		port string
		from networkingv1.NetworkPolicyPeer
	}{{"https-webhook", apiServer}, {"http-metrics", prometheus}} {
		if !slices.ContainsFunc(policy.Spec.Ingress, func(rule networkingv1.NetworkPolicyIngressRule) bool {
			return len(rule.Ports) == 1 && *rule.Ports[0].Port == intstr.FromInt32(ports[want.port]) &&
				len(rule.From) == 1 && equality.Semantic.DeepEqual(rule.From[0], want.from)
		}) {
			t.Errorf("no ingress rule opens %s (%d) to %+v alone: %+v", want.port, ports[want.port], want.from, policy.Spec.Ingress)
		}
	}
	if len(policy.Spec.Ingress) != 2 {
		t.Errorf("the NetworkPolicy has %d ingress rules, want the webhook's and the metrics'", len(policy.Spec.Ingress))
	}
	defaults, err := chartrender.Render("karpenter", required(nil))
	if err != nil {
		t.Fatal(err)
	}
	if chartrender.Find(defaults, "NetworkPolicy", "karpenter") != nil {
		t.Errorf("a NetworkPolicy is rendered by default")
	}
}
