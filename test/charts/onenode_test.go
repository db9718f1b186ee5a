package charts_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// TestReplicasRunOnAOneNodeCluster installs the controller's Deployment, with the chart's
// defaults, on a cluster of one node, with kube-scheduler and kube-controller-manager: both
// replicas run there. With the anti-affinity required, as the chart had it, the second replica
// would stay Pending; a second release in another namespace shows the test can tell.
func TestReplicasRunOnAOneNodeCluster(t *testing.T) {
	env, err := environment.New(environment.WithScheduler(), environment.WithControllerManager())
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

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "only-node", Labels: map[string]string{
		corev1.LabelOSStable: "linux", corev1.LabelHostname: "only-node",
	}}}
	if err := kube.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	if err := kube.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}

	install := func(namespace string, values map[string]any) {
		t.Helper()
		if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
			t.Fatal(err)
		}
		objects, err := chartrender.RenderIn("karpenter", namespace, values)
		if err != nil {
			t.Fatal(err)
		}
		var workload []*unstructured.Unstructured
		for _, obj := range objects {
			if obj.GetKind() == "Deployment" || obj.GetKind() == "ServiceAccount" {
				workload = append(workload, obj)
			}
		}
		applyAll(ctx, t, kube, workload)
	}
	install("karpenter", required(nil))
	requiredAntiAffinity := required(map[string]any{"affinity": map[string]any{"podAntiAffinity": map[string]any{
		"preferredDuringSchedulingIgnoredDuringExecution": nil,
		"requiredDuringSchedulingIgnoredDuringExecution":  []any{map[string]any{"topologyKey": corev1.LabelHostname}},
	}}})
	install("required-anti-affinity", requiredAntiAffinity)

	for {
		defaults, strict, strictUnschedulable := podsOf(ctx, t, kube, "karpenter"), podsOf(ctx, t, kube, "required-anti-affinity"), 0
		for _, pod := range strict.pending {
			if scheduled := podCondition(pod, corev1.PodScheduled); scheduled != nil && scheduled.Reason == corev1.PodReasonUnschedulable {
				strictUnschedulable++
			}
		}
		if len(defaults.bound) == 2 && len(strict.bound) == 1 && strictUnschedulable == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("with the chart's defaults %d of 2 replicas run on the one node (pending: %s); with required anti-affinity %d run and %d are unschedulable, want 1 and 1",
				len(defaults.bound), describePods(defaults.pending), len(strict.bound), strictUnschedulable)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type podsByBinding struct{ bound, pending []corev1.Pod }

func podsOf(ctx context.Context, t *testing.T, kube client.Client, namespace string) podsByBinding {
	t.Helper()
	var pods corev1.PodList
	if err := kube.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app.kubernetes.io/name": "karpenter"}); err != nil {
		t.Fatal(err)
	}
	var result podsByBinding
	for _, pod := range pods.Items {
		if pod.Spec.NodeName != "" {
			result.bound = append(result.bound, pod)
		} else {
			result.pending = append(result.pending, pod)
		}
	}
	return result
}

func podCondition(pod corev1.Pod, conditionType corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == conditionType {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func describePods(pods []corev1.Pod) string {
	var described []string
	for _, pod := range pods {
		if scheduled := podCondition(pod, corev1.PodScheduled); scheduled != nil {
			described = append(described, fmt.Sprintf("%s: %s", pod.Name, scheduled.Message))
		} else {
			described = append(described, pod.Name)
		}
	}
	return fmt.Sprint(described)
}
