package main_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// TestInstanceModeAsTheChartRunsIt installs the chart in instance mode on a control plane set up
// as kubeadm sets one up for joining nodes, and runs the controller with the chart's environment
// and as the chart's ServiceAccount, so that only the chart's RBAC applies, beside the node
// identity component as its own. Misconfigured, the controller exits with one line naming
// CLUSTER_ENDPOINT; configured, it launches a Linode for a pending pod whose user data joins the
// cluster through TLS bootstrap, with only the rights the chart gives the bootstrap tokens' group,
// and the token is deleted once the node registered.
func TestInstanceModeAsTheChartRunsIt(t *testing.T) {
	ctx := context.Background()
	env, err := environment.NewNodeBootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	// Karpenter provisions for pods the scheduler could not place.
	binDir, err := component.BinaryDir()
	if err != nil {
		t.Fatal(err)
	}
	scheduler, err := component.StartAll(t.TempDir(), component.KubeScheduler(binDir, filepath.Join(env.LogDir, "kubeconfig")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := component.StopAll(scheduler, 5*time.Second); err != nil {
			t.Error(err)
		}
	})
	// The chart's bindings, and nothing else, must let the tokens' group join.
	for _, binding := range bootstraptoken.ClusterRoleBindings() {
		if err := env.Client.Delete(ctx, binding); err != nil {
			t.Fatal(err)
		}
	}
	e := test.StartEmulatorForTest(t, emulator.WithToken(token), emulator.WithClock(clock.RealClock{}))
	metricsPort, probePort := freePort(t), freePort(t)
	objects, controllerEnv := renderRelease(t, map[string]any{
		"apiToken": token,
		"region":   "us-ord",
		"settings": map[string]any{"mode": "instance", "apiURL": e.URL(), "batchIdleDuration": "200ms"},
		"controller": map[string]any{
			"metrics":     map[string]any{"port": chartPort(metricsPort)},
			"healthProbe": map[string]any{"port": chartPort(probePort)},
		},
	})
	applyAsHelm(ctx, t, env.Client, objects)
	controllerEnv["KUBECONFIG"] = impersonatingKubeconfig(t, env, chartrender.Namespace, "karpenter")
	controllerEnv["DISABLE_LEADER_ELECTION"] = "true"

	// The node identity component, as its ServiceAccount, issues the tokens and approves the
	// certificates; the kubelet mounts the key it keeps into the controller's pod.
	asNodeIdentity := rest.CopyConfig(env.Config)
	asNodeIdentity.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + chartrender.Namespace + ":karpenter-node-identity",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + chartrender.Namespace, "system:authenticated"},
	}
	keyRef := types.NamespacedName{Namespace: chartrender.Namespace, Name: "karpenter-bootstrap-token-key"}
	if err := env.StartNodeIdentity(ctx, asNodeIdentity, keyRef); err != nil {
		t.Fatal(err)
	}
	key := &corev1.Secret{}
	if err := env.Client.Get(ctx, keyRef, key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(controllerEnv["BOOTSTRAP_TOKEN_KEY_FILE"], key.Data[bootstraptoken.KeySecretKey], 0o600); err != nil {
		t.Fatal(err)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "https://" + closed.Addr().String()
	closed.Close()
	for _, tt := range []struct {
		name     string
		endpoint string
		wantLine string
	}{
		{name: "no endpoint, no cluster-info", wantLine: "karpenter: CLUSTER_ENDPOINT is not set and the cluster publishes no kube-public/cluster-info (kubeadm does)"},
		{name: "an endpoint nothing answers at", endpoint: unreachable, wantLine: `karpenter: CLUSTER_ENDPOINT: the cluster endpoint "` + unreachable + `" (from CLUSTER_ENDPOINT) does not answer`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			misconfigured := map[string]string{}
			for key, value := range controllerEnv {
				misconfigured[key] = value
			}
			if tt.endpoint != "" {
				misconfigured["CLUSTER_ENDPOINT"] = tt.endpoint
			}
			p := start(t, misconfigured)
			if code := p.wait(t, time.Minute); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.Contains(p.output.String(), tt.wantLine) {
				t.Errorf("output lacks %q:\n%s", tt.wantLine, tail(p.output.String(), 20))
			}
		})
	}

	if err := component.PublishClusterInfo(ctx, env.Client, env.Endpoint(), env.ServingCA()); err != nil {
		t.Fatal(err)
	}
	nodes := nodesim.New(env.Client, e.Emulator, nodesim.ResourceModel{HypervisorMemoryPercent: 2.5, MaxPods: 110})
	joined := make(chan nodesim.Event, 10)
	nodes.OnEvent(func(ev nodesim.Event) { joined <- ev })
	simCtx, stopSim := context.WithCancel(log.IntoContext(ctx, logr.Discard()))
	simDone := make(chan struct{})
	go func() { nodes.Run(simCtx); close(simDone) }()
	t.Cleanup(func() { stopSim(); <-simDone })

	p := start(t, controllerEnv)
	eventually(t, p, time.Minute, "ready", func() bool {
		code, _, err := get("http://127.0.0.1:" + probePort + "/readyz")
		return err == nil && code == http.StatusOK
	})
	// Readiness does not wait for the mode's start-up (which checks that the endpoint answers), so
	// the line may come a little after.
	eventually(t, p, time.Minute, "saying it took the endpoint from kube-public/cluster-info", func() bool {
		return strings.Contains(p.output.String(), "kube-public/cluster-info")
	})
	for _, obj := range mustDecode(t, "instance.yaml") {
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
	var ev nodesim.Event
	select {
	case ev = <-joined:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no Linode joined within 2 minutes; the end of the controller's output:\n%s", tail(p.output.String(), 40))
	}
	if ev.Err != nil || !ev.Registered {
		t.Fatalf("the Linode did not join: %+v", ev)
	}
	eventually(t, p, time.Minute, "the NodeClaim registered and its bootstrap token deleted", func() bool {
		claims := &karpv1.NodeClaimList{}
		tokens := &corev1.SecretList{}
		if env.Client.List(ctx, claims) != nil || env.Client.List(ctx, tokens, client.InNamespace(bootstraptoken.Namespace), client.MatchingLabels{bootstraptoken.LabelNodeClaimToken: "true"}) != nil {
			return false
		}
		return len(claims.Items) == 1 && claims.Items[0].StatusConditions().IsTrue(karpv1.ConditionTypeRegistered) && len(tokens.Items) == 0
	})
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ev.NodeName}, node); err != nil {
		t.Fatal(err)
	}
	// The chart leaves its tokens' requests to the node identity component: kube-controller-manager
	// would approve any node name.
	requests := &certificatesv1.CertificateSigningRequestList{}
	if err := env.Client.List(ctx, requests); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(requests.Items, func(r certificatesv1.CertificateSigningRequest) bool {
		return slices.ContainsFunc(r.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
			return c.Type == certificatesv1.CertificateApproved && c.Reason == bootstraptoken.ReasonApproved
		})
	}) {
		t.Errorf("the node identity component approved no node's certificate request: %+v", requests.Items)
	}
	if node.Spec.ProviderID != "linode://"+strconv.Itoa(ev.InstanceID) || node.Labels[karpv1.NodePoolLabelKey] != "default" {
		t.Errorf("Node %s has provider ID %q and labels %v", node.Name, node.Spec.ProviderID, node.Labels)
	}
	p.stop(t)
	if strings.Contains(p.output.String(), token) {
		t.Errorf("the Linode token appears in the controller's output")
	}
}

// impersonatingKubeconfig writes a kubeconfig that acts as the ServiceAccount, through the
// admin's right to impersonate: the API server then authorizes every request with the
// ServiceAccount's RBAC alone.
func impersonatingKubeconfig(t *testing.T, env *environment.NodeBootstrap, namespace, name string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(filepath.Join(env.LogDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range admin.AuthInfos {
		user.Impersonate = "system:serviceaccount:" + namespace + ":" + name
		user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*admin, path); err != nil {
		t.Fatal(err)
	}
	return path
}
