package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if live.Pods != 3+1 || live.Region != "us-east" || len(live.Notes) != 1 {
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
}

func planJSON(t *testing.T, args ...string) planner.Report {
	t.Helper()
	stdout, stderr, status := runPlan(t, append(args, "-o", "json"), "")
	if status != exitPlaced {
		t.Fatalf("exit status %d: %s%s", status, stderr, stdout)
	}
	var report planner.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	return report
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
