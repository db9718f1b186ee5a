package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

// TestPlanLiveCluster plans for a real kube-apiserver's workloads with --kubeconfig: the pods of
// a Deployment (made by kube-controller-manager, still pending) and a bare pod already on a node
// count, as if provisioned from nothing; a finished pod and a DaemonSet's pod do not, the
// DaemonSet counting as overhead on every node instead; the cluster's own NodePool is used; and
// its node is priced beside the plan, in the node's region. The plan equals the plan for the same objects as manifests.
func TestPlanLiveCluster(t *testing.T) {
	env, err := environment.New(environment.WithControllerManager())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := env.Client

	in, err := planner.ReadManifests([]string{readmeNodePool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "old-node", Labels: map[string]string{corev1.LabelInstanceTypeStable: "g6-standard-4", corev1.LabelTopologyRegion: "us-east"}}}
	web := deployment("web", 3, "500m")
	logs := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "logs", Namespace: corev1.NamespaceDefault},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "logs"}}, Template: podTemplate("logs", "200m")},
	}
	bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: corev1.NamespaceDefault}, Spec: podTemplate("bound", "2").Spec}
	bound.Spec.NodeName = node.Name
	done := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: corev1.NamespaceDefault}, Spec: podTemplate("done", "4").Spec}
	for _, obj := range []client.Object{in.NodeClasses[0], in.NodePools[0], node, web, logs, bound, done} {
		if err := kube.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	done.Status.Phase = corev1.PodSucceeded
	if err := kube.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager makes the Deployment's pods and the DaemonSet's pod for the node.
	for {
		var pods corev1.PodList
		if err := kube.List(ctx, &pods); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 2+3+1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d pods, want the bound and the done pods, web's 3 and logs' 1", len(pods.Items))
		case <-time.After(100 * time.Millisecond):
		}
	}

	live := planJSON(t, "--kubeconfig", env.KubeconfigPath)
	if live.Pods != 3+1 || live.Region != "us-east" || len(live.Notes) != 2 {
		t.Errorf("%d pods planned for in %s (notes %v), want web's 3 and the bound pod on the cluster's NodePool, in its nodes' region",
			live.Pods, live.Region, live.Notes)
	}
	if live.Current == nil || live.Current.Nodes != 1 || live.Current.Plans["g6-standard-4"] != 1 || live.Current.Hourly != 0.072 || live.Current.Monthly != 48 {
		t.Errorf("current fleet %+v, want the node's g6-standard-4 at $0.072/h, $48/month", live.Current)
	}

	// The same objects as manifests: the README's NodePool, the Deployment, the DaemonSet and the
	// bound pod.
	manifest := filepath.Join(t.TempDir(), "cluster.yaml")
	web.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	logs.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}
	bound.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	var data []byte
	for _, obj := range []any{web, logs, bound} {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, doc...), "---\n"...)
	}
	if err := os.WriteFile(manifest, data, 0o600); err != nil {
		t.Fatal(err)
	}
	files := planJSON(t, "-f", readmeNodePool, "-f", manifest, "--region", "us-east")
	if !equality.Semantic.DeepEqual(live.NodePools, files.NodePools) || live.Fleet != files.Fleet {
		t.Errorf("the live cluster's plan %+v differs from the manifests' %+v", live.NodePools, files.NodePools)
	}

	t.Run("as a kubectl plugin", func(t *testing.T) {
		samePlan := func(t *testing.T, how string, got planner.Report) {
			t.Helper()
			if !equality.Semantic.DeepEqual(got.NodePools, live.NodePools) || got.Fleet != live.Fleet || got.Pods != live.Pods {
				t.Errorf("%s plans %d pods, %+v; want the cluster's %d pods, %+v", how, got.Pods, got.NodePools, live.Pods, live.NodePools)
			}
		}
		// Two contexts, one at the real apiserver, the other at an address where nothing listens.
		elsewhere, real := kubeconfigOfTwoContexts(t, env.KubeconfigPath)
		plugin := buildPlugin(t)

		stdout, stderr, err := runPlugin(t, plugin, nil, "--kubeconfig", elsewhere, "--context", "real", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl-linode_plan --context real: %v\n%s", err, stderr)
		}
		samePlan(t, "kubectl-linode_plan --kubeconfig F --context real", decodeReport(t, stdout))
		stdout, stderr, err = runPlugin(t, plugin, []string{"KUBECONFIG=" + real}, "-o", "json")
		if err != nil {
			t.Fatalf("KUBECONFIG=F kubectl-linode_plan: %v\n%s", err, stderr)
		}
		samePlan(t, "KUBECONFIG=F kubectl-linode_plan", decodeReport(t, stdout))

		// The current context is honoured too: it is the one where nothing listens.
		if _, stderr, err := runPlugin(t, plugin, nil, "--kubeconfig", elsewhere, "-o", "json"); err == nil || !strings.Contains(stderr, "reading the cluster at https://127.0.0.1:9") {
			t.Errorf("kubectl-linode_plan with the other context current: %v, %s; want the cluster at 127.0.0.1:9 unreachable", err, stderr)
		}
		// -n plans for one namespace's pods; the DaemonSets of every namespace still count.
		t.Setenv("KUBECONFIG", real)
		if other := planJSON(t, "-n", "kube-system"); other.Pods != 0 || !slices.ContainsFunc(other.Notes, func(note string) bool { return strings.HasSuffix(note, ", namespace kube-system") }) {
			t.Errorf("-n kube-system plans %d pods (notes %v), want none: every pod is in default", other.Pods, other.Notes)
		}
		samePlan(t, "-n default", planJSON(t, "-n", "default"))
	})
}

// kubeconfigOfTwoContexts writes two kubeconfigs of contexts "real", at the apiserver the admin
// kubeconfig names, and "elsewhere", at an address where nothing listens: one whose current
// context is elsewhere, one whose current context is real.
func kubeconfigOfTwoContexts(t *testing.T, admin string) (currentElsewhere, currentReal string) {
	t.Helper()
	config, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		t.Fatal(err)
	}
	adminContext := config.Contexts[config.CurrentContext]
	config.Contexts = map[string]*clientcmdapi.Context{"real": adminContext}
	config.Clusters["elsewhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:9", InsecureSkipTLSVerify: true}
	elsewhereContext := adminContext.DeepCopy()
	elsewhereContext.Cluster = "elsewhere"
	config.Contexts["elsewhere"] = elsewhereContext
	dir := t.TempDir()
	for name, current := range map[string]string{"elsewhere": "elsewhere", "real": "real"} {
		config.CurrentContext = current
		if err := clientcmd.WriteToFile(*config, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "elsewhere"), filepath.Join(dir, "real")
}

// buildPlugin builds the command as make plan installs it for kubectl: kubectl-linode_plan.
func buildPlugin(t *testing.T) string {
	t.Helper()
	plugin := filepath.Join(t.TempDir(), pluginName)
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return plugin
}

// runPlugin runs the plugin binary with a home of its own, without KUBECONFIG unless env sets it.
func runPlugin(t *testing.T, plugin string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(plugin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func decodeReport(t *testing.T, stdout string) planner.Report {
	t.Helper()
	var report planner.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return report
}

func planJSON(t *testing.T, args ...string) planner.Report {
	t.Helper()
	stdout, stderr, status := runPlan(t, append(args, "-o", "json"), "")
	if status != exitPlaced {
		t.Fatalf("exit status %d: %s%s", status, stderr, stdout)
	}
	return decodeReport(t, stdout)
}

func deployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name, cpu),
		},
	}
}

func podTemplate(app, cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}
