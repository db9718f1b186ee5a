package main_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestControllerAsTheChartRunsIt runs the built controller with the environment the Helm chart
// gives it, against a real apiserver and the Linode emulator: it becomes ready, serves metrics,
// launches an LKE pool for a pending pod, exports every metric the chart's dashboards query,
// counts its Linode API requests against Linode's rate limits as the API does, and never writes
// the token anywhere.
func TestControllerAsTheChartRunsIt(t *testing.T) {
	env := startCluster(t)
	// Linode's rate limits, whose headers the controller reports for the dashboards.
	e := startEmulator(t, emulator.WithRateLimits(emulator.DefaultRateLimits()))
	clusterID := e.Clusters()[0].ID
	ctx := context.Background()

	metricsPort, probePort, webhookPort := freePort(t), freePort(t), freePort(t)
	objects, controllerEnv := renderRelease(t, map[string]any{
		"apiToken": token,
		"settings": map[string]any{"clusterName": "prod", "apiURL": e.URL(), "batchIdleDuration": "200ms"},
		"controller": map[string]any{
			"metrics":     map[string]any{"port": chartPort(metricsPort)},
			"healthProbe": map[string]any{"port": chartPort(probePort)},
		},
		"webhook":    map[string]any{"port": chartPort(webhookPort)},
		"dashboards": map[string]any{"enabled": true},
	})
	applyAsHelm(ctx, t, env.Client, objects)
	controllerEnv["KUBECONFIG"] = env.KubeconfigPath
	p := start(t, controllerEnv)

	eventually(t, p, time.Minute, "ready", func() bool {
		code, _, err := get("http://127.0.0.1:" + probePort + "/readyz")
		return err == nil && code == http.StatusOK
	})
	// The controller issued the webhook's certificate and made the apiserver trust it.
	webhookConfiguration := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "karpenter"}, webhookConfiguration); err != nil {
		t.Fatal(err)
	}
	if len(webhookConfiguration.Webhooks) != 1 || len(webhookConfiguration.Webhooks[0].ClientConfig.CABundle) == 0 {
		t.Errorf("the Node webhook's caBundle is empty once the controller is ready")
	}
	code, metrics, err := get("http://127.0.0.1:" + metricsPort + "/metrics")
	if err != nil || code != http.StatusOK || !strings.Contains(metrics, "karpenter_build_info") {
		t.Fatalf("/metrics = %d, %v; karpenter_build_info missing", code, err)
	}
	// The release version, where an operator looks for it: the metrics, the first log line, and
	// the user agent Linode's logs show.
	version := releaseVersion()
	if !regexp.MustCompile(`(?m)^karpenter_linode_build_info\{.*version="` + regexp.QuoteMeta(version) + `".*\} 1$`).MatchString(metrics) {
		t.Errorf("/metrics has no karpenter_linode_build_info of version %s", version)
	}
	if !slices.ContainsFunc(strings.Split(p.output.String(), "\n"), func(line string) bool {
		return strings.Contains(line, "starting karpenter-provider-linode") && strings.Contains(line, `"version":"`+version+`"`)
	}) {
		t.Errorf("the controller logged no start-up line with version %s; it wrote:\n%s", version, p.output)
	}
	if !slices.ContainsFunc(e.Requests(), func(r emulator.RequestRecord) bool {
		return r.UserAgent == "karpenter-provider-linode/"+version
	}) {
		t.Errorf("no request reached the Linode API with the user agent karpenter-provider-linode/%s", version)
	}

	for _, obj := range mustDecode(t, "default.yaml") {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}}},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, p, 2*time.Minute, "an LKE pool launched for the pending pod", func() bool {
		return len(e.Pools(clusterID)) > 0
	})

	_, metrics, err = get("http://127.0.0.1:" + metricsPort + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	checkDashboardMetrics(t, objects, metrics)
	checkBudgetsAsTheAPICounts(t, "http://127.0.0.1:"+metricsPort+"/metrics")
	p.stop(t)
	written := p.output.String() + metrics + allEvents(ctx, t, env.Client)
	if strings.Contains(written, token) {
		t.Errorf("the token appears in the controller's logs, metrics or events")
	}
}

func mustDecode(t *testing.T, example string) []client.Object {
	t.Helper()
	objects, err := chartrender.DecodeFile(chartrender.Dir("../examples/" + example))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]client.Object, 0, len(objects))
	for _, obj := range objects {
		out = append(out, obj)
	}
	return out
}

// allEvents returns every event in the cluster, both APIs, as text.
func allEvents(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var text strings.Builder
	var coreEvents corev1.EventList
	if err := c.List(ctx, &coreEvents); err != nil {
		t.Fatal(err)
	}
	for _, ev := range coreEvents.Items {
		text.WriteString(ev.Reason + " " + ev.Message + " " + ev.InvolvedObject.Name + "\n")
	}
	var events eventsv1.EventList
	if err := c.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		text.WriteString(ev.Reason + " " + ev.Note + " " + ev.Regarding.Name + "\n")
	}
	if text.Len() == 0 {
		t.Errorf("no events at all: the scan for the token would prove nothing")
	}
	return text.String()
}
