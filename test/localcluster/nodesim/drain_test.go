package nodesim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linode/linodego"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// testNamespace is a namespace for the test's pods, which it deletes at the end: the next test's
// emulator names its nodes the same, and a pod left bound to one would hold up its drain.
func testNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ctx := context.Background()
	namespace := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace), client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the test's pods gone", 10*time.Second, func() bool {
			pods := &corev1.PodList{}
			return env.Client.List(ctx, pods, client.InNamespace(namespace)) == nil && len(pods.Items) == 0
		})
	})
	return namespace
}

// poolWithOneNode creates an LKE cluster with a pool of one Linode and waits until the Linode
// runs and its Node has registered.
func poolWithOneNode(ctx context.Context, t *testing.T, emu *emulator.Emulator, linode *linodego.Client, name string) (clusterID, poolID int, node emulator.InstanceInfo) {
	t.Helper()
	clusterID, err := emu.AddLKECluster(name, "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := linode.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pool's Linode running", 10*time.Second, func() bool {
		instances := emu.Instances()
		if len(instances) == 1 && instances[0].Status == "running" {
			node = instances[0]
		}
		return node.ID != 0
	})
	waitFor(t, "node "+node.Label, 10*time.Second, func() bool {
		return env.Client.Get(ctx, client.ObjectKey{Name: node.Label}, &corev1.Node{}) == nil
	})
	return clusterID, pool.ID, node
}

// TestRecycleDrainsTheNodeFirst recycles an LKE node running a deployment's pod, a pod a
// PodDisruptionBudget protects, and a DaemonSet's pod: the Node is cordoned, the deployment's pod
// evicted while the Linode still exists, the protected pod left in place, and the Linode replaced
// only once the drain ends, which the protected pod stretches to LKE's drain timeout.
func TestRecycleDrainsTheNodeFirst(t *testing.T) {
	ctx := context.Background()
	emu, linode := startSimulator(t)
	t.Cleanup(func() { cleanUpNodes(t) })
	clusterID, poolID, old := poolWithOneNode(ctx, t, emu, linode, "recycle")

	namespace := testNamespace(t, "recycle")
	daemonSet := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, daemonSet); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, labels map[string]string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
			Spec: corev1.PodSpec{
				NodeName: old.Label, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "app", Image: "app"}},
			},
		}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		// Budgets apply to running pods only.
		waitFor(t, "pod "+name+" running", 10*time.Second, func() bool {
			current := &corev1.Pod{}
			return env.Client.Get(ctx, client.ObjectKeyFromObject(p), current) == nil && current.Status.Phase == corev1.PodRunning
		})
		return p
	}
	web := pod("web", map[string]string{"app": "web"}, nil)
	database := pod("database", map[string]string{"app": "database"}, nil)
	agent := pod("agent-x", map[string]string{"app": "agent"}, &metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: "DaemonSet", Name: daemonSet.Name, UID: daemonSet.UID, Controller: ptr.To(true),
	})
	// No disruption controller runs here, so the budget never allows an eviction.
	if err := env.Client.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "database", Namespace: namespace},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "database"}},
		},
	}); err != nil {
		t.Fatal(err)
	}

	recycled := time.Now()
	if err := linode.RecycleLKENodePool(ctx, clusterID, poolID); err != nil {
		t.Fatal(err)
	}
	gone := func(p *corev1.Pod) func() bool {
		return func() bool {
			current := &corev1.Pod{}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), current)
			return err != nil || current.DeletionTimestamp != nil
		}
	}
	waitFor(t, "the unprotected pod evicted", 5*time.Second, gone(web))
	if _, err := linode.GetInstance(ctx, old.ID); err != nil {
		t.Fatalf("the Linode went before its node was drained: %v", err)
	}
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: old.Label}, node); err != nil || !node.Spec.Unschedulable {
		t.Fatalf("node %s is not cordoned while it drains: %v", old.Label, err)
	}
	for _, p := range []*corev1.Pod{database, agent} {
		if gone(p)() {
			t.Fatalf("pod %s was removed by the drain", p.Name)
		}
	}

	waitFor(t, "the Linode replaced at the drain timeout", 10*time.Second, func() bool {
		_, err := linode.GetInstance(ctx, old.ID)
		return linodego.IsNotFound(err)
	})
	if elapsed, timeout := time.Since(recycled), emulator.DefaultDelays().Scaled(delayScale).RecycleDrainTimeout; elapsed < timeout {
		t.Fatalf("the Linode went after %v, before the drain timeout of %v, while a budget held a pod", elapsed, timeout)
	}
	waitFor(t, "the replacement node", 10*time.Second, func() bool {
		instances := emu.Instances()
		return len(instances) == 1 && instances[0].ID != old.ID && instances[0].Label != old.Label &&
			env.Client.Get(ctx, client.ObjectKey{Name: instances[0].Label}, &corev1.Node{}) == nil
	})
}

// TestRecycleReplacesADrainedNodeAtOnce: once its pods are gone, the Linode is replaced without
// waiting for LKE's drain timeout.
func TestRecycleReplacesADrainedNodeAtOnce(t *testing.T) {
	ctx := context.Background()
	emu, linode := startSimulator(t)
	t.Cleanup(func() { cleanUpNodes(t) })
	clusterID, poolID, old := poolWithOneNode(ctx, t, emu, linode, "recycle-fast")
	namespace := testNamespace(t, "recycle-fast")
	web := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName: old.Label, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "app", Image: "app"}},
		},
	}
	if err := env.Client.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pod running", 10*time.Second, func() bool {
		current := &corev1.Pod{}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(web), current) == nil && current.Status.Phase == corev1.PodRunning
	})
	recycled := time.Now()
	if err := linode.RecycleLKENodePool(ctx, clusterID, poolID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Linode replaced", 10*time.Second, func() bool {
		_, err := linode.GetInstance(ctx, old.ID)
		return linodego.IsNotFound(err)
	})
	if elapsed, timeout := time.Since(recycled), emulator.DefaultDelays().Scaled(delayScale).RecycleDrainTimeout; elapsed >= timeout {
		t.Fatalf("the drained node was replaced after %v, at the drain timeout of %v", elapsed, timeout)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(web), &corev1.Pod{}); err == nil {
		t.Fatal("the Linode went before its pod")
	}
}
