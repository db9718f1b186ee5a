package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// TestTokenRotatedInItsSecretIsUsedWithoutARestart revokes the controller's token on Linode's
// side: the controller notices on its next call and reports it by the metric, the
// LinodeNodeClass's APIAuthorized condition and a warning event, and stays ready, since
// readiness is what keeps its webhooks in their Service; once the Secret's file holds the new
// token (as the kubelet updates a mounted Secret), the same process reports the token accepted
// and launches.
func TestTokenRotatedInItsSecretIsUsedWithoutARestart(t *testing.T) {
	env := startCluster(t)
	e := startEmulator(t)
	clusterID := e.Clusters()[0].ID
	ctx := context.Background()

	metricsPort, probePort := freePort(t), freePort(t)
	_, controllerEnv := renderRelease(t, map[string]any{
		"apiToken": token,
		"settings": map[string]any{"clusterName": "prod", "apiURL": e.URL(), "batchIdleDuration": "200ms"},
		"controller": map[string]any{
			"metrics":     map[string]any{"port": chartPort(metricsPort)},
			"healthProbe": map[string]any{"port": chartPort(probePort)},
		},
		"webhook": map[string]any{"enabled": false},
	})
	controllerEnv["KUBECONFIG"] = env.KubeconfigPath
	p := start(t, controllerEnv)
	readiness := func() (int, string) {
		code, body, _ := get("http://127.0.0.1:" + probePort + "/readyz?verbose")
		return code, body
	}
	tokenRefused := func() string {
		_, metrics, _ := get("http://127.0.0.1:" + metricsPort + "/metrics")
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, "karpenter_linode_api_token_refused ") {
				return strings.TrimPrefix(line, "karpenter_linode_api_token_refused ")
			}
		}
		return ""
	}
	eventually(t, p, time.Minute, "ready", func() bool { code, _ := readiness(); return code == http.StatusOK })
	if got := tokenRefused(); got != "0" {
		t.Fatalf("karpenter_linode_api_token_refused = %q while the token works", got)
	}

	const rotated = "tok-rotated-7c41d2"
	e.SetToken(rotated)
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
	eventually(t, p, time.Minute, "reporting the refused token by its metric", func() bool { return tokenRefused() == "1" })
	code, body := readiness()
	if code != http.StatusOK {
		t.Errorf("not ready while the API refuses the token; the webhooks would leave their Service:\n%s", body)
	}
	eventually(t, p, time.Minute, "reporting the refused token on the LinodeNodeClass", func() bool {
		return apiAuthorized(ctx, env.Client) == metav1.ConditionFalse && strings.Contains(allEvents(ctx, t, env.Client), "TokenRefused")
	})
	if !strings.Contains(p.output.String(), "the Linode API refuses the token (401 Unauthorized)") {
		t.Errorf("the log does not say the API refuses the token")
	}
	if len(e.Pools(clusterID)) != 0 {
		t.Fatalf("a pool was launched with a revoked token")
	}

	tokenFile := controllerEnv["LINODE_TOKEN_FILE"]
	next := filepath.Join(filepath.Dir(tokenFile), ".next")
	if err := os.WriteFile(next, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, tokenFile); err != nil {
		t.Fatal(err)
	}
	eventually(t, p, time.Minute, "reporting the new token accepted", func() bool {
		return tokenRefused() == "0" && apiAuthorized(ctx, env.Client) == metav1.ConditionTrue
	})
	eventually(t, p, 2*time.Minute, "launching for the pending pod with the new token", func() bool {
		return len(e.Pools(clusterID)) > 0
	})
	_ = env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))
	p.stop(t)
	if strings.Contains(p.output.String()+body, rotated) {
		t.Errorf("the new token appears in the controller's output or readiness answer")
	}
}

// apiAuthorized is the APIAuthorized condition of the example's LinodeNodeClass.
func apiAuthorized(ctx context.Context, c client.Client) metav1.ConditionStatus {
	nodeClass := &v1.LinodeNodeClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: "default"}, nodeClass); err != nil {
		return metav1.ConditionUnknown
	}
	condition := nodeClass.StatusConditions().Get(v1.ConditionTypeAPIAuthorized)
	if condition == nil {
		return metav1.ConditionUnknown
	}
	return condition.Status
}
