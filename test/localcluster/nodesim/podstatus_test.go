package nodesim_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// TestRunningPodsAreReadyAgainOnceTheirNodeIs marks running pods not Ready, as the node lifecycle
// controller does while their Node's leases lapse (kube-apiserver restarting): the pods of a Node
// that is Ready again are reported Ready again, those of a Node whose Linode is down are not.
func TestRunningPodsAreReadyAgainOnceTheirNodeIs(t *testing.T) {
	ctx := context.Background()
	startSimulator(t)
	t.Cleanup(func() { cleanUpNodes(t) })
	namespace := testNamespace(t, "readiness")
	back := readyNode(t, "back", nil)
	down := readyNode(t, "down", map[string]string{nodesim.AnnotationKwokStatus: "custom"})
	onBack, onDown := markedNotReady(t, namespace, back), markedNotReady(t, namespace, down)

	waitFor(t, "the pod of the Ready node to be Ready again", nodesim.PodStatusSyncPeriod+5*time.Second, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(onBack), onBack) == nil && nodesim.PodReady(onBack)
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(onDown), onDown); err != nil {
		t.Fatal(err)
	}
	if nodesim.PodReady(onDown) {
		t.Error("the pod of a node whose Linode is down was reported Ready")
	}
}

// TestASilentNodeStaysNotReady writes Ready True on the Node of a Linode that is down, as kwok does
// when it initialises a Node it has just seen before its cache shows the annotation: the
// simulator marks it Ready Unknown again, as the node lifecycle controller would.
func TestASilentNodeStaysNotReady(t *testing.T) {
	ctx := context.Background()
	startSimulator(t)
	t.Cleanup(func() { cleanUpNodes(t) })
	node := readyNode(t, "silent", map[string]string{nodesim.AnnotationKwokStatus: "custom"})
	waitFor(t, "the silent node to be marked Ready Unknown", nodesim.PodStatusSyncPeriod+5*time.Second, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(node), node) == nil && nodeReadyStatus(node) == corev1.ConditionUnknown
	})
}

// readyNode is a Ready Node kwok acts as the kubelet of, with the annotations.
func readyNode(t *testing.T, name string, annotations map[string]string) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{nodesim.AnnotationKwokNode: "fake"}}}
	for key, value := range annotations {
		node.Annotations[key] = value
	}
	if err := env.Client.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	// The simulator may write the new Node first: read it again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		return env.Client.Status().Update(context.Background(), node)
	})
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// markedNotReady is a pod running on the node that the node lifecycle controller marked not Ready.
func markedNotReady(t *testing.T, namespace string, node *corev1.Node) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "on-" + node.Name},
		Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "app", Image: "pause"}}},
	}
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	status := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "pause", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status = status
		return env.Client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// nodeReadyStatus is the status of the Node's Ready condition, empty without one.
func nodeReadyStatus(node *corev1.Node) corev1.ConditionStatus {
	for _, condition := range node.Status.Conditions {
		if condition.Type == corev1.NodeReady {
			return condition.Status
		}
	}
	return ""
}
