package sizing

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A burst of pods reaches core in rounds: a ReplicaSet's controller creates a Deployment's pods
// in batches, at kube-controller-manager's request rate (a few hundred pods take tens of seconds),
// while core's provisioner closes a batch after a second without new pods. Sized round by round,
// the first rounds of a burst see a small fleet and get the cheapest small plans, and the later
// ones, once the NodePool is large, the plans that keep the node count down: many more nodes
// than one plan for the whole burst, and so slower capacity and more work for everyone. The
// policy therefore counts the pods the pending pods' controllers are about to create as pending
// too, each like the pending pod of its controller; and so the pods they have created that
// kube-scheduler has not tried yet (its queue lags behind a burst): pods of the workload of a
// pod it found no node for will find none either, and reach core in a later round.

// workload is a controller that creates identical pods up to its replica count.
type workload struct {
	kind string
	types.NamespacedName
}

// workloadOf is the pod's controller when it is one whose replica count says how many pods it
// will create: a ReplicaSet (a Deployment's pods) or a StatefulSet.
func workloadOf(p *corev1.Pod) (workload, bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.APIVersion != appsv1.SchemeGroupVersion.String() || (ref.Kind != "ReplicaSet" && ref.Kind != "StatefulSet") {
		return workload{}, false
	}
	return workload{kind: ref.Kind, NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}}, true
}

// comingPods are pods a workload has yet to create, shaped like its pending pod.
type comingPods struct {
	shape *podShape
	pods  int
}

// workloadPods is what the pod listing saw of a workload: its pods not yet bound, those of them
// kube-scheduler has yet to try, and the shape of one it would provision for.
type workloadPods struct {
	unbound, awaiting int
	shape             *podShape
}

// awaitsScheduler tells whether kube-scheduler has yet to try an unbound pod: it has not marked
// it unschedulable, and the pod is not on its way out.
func awaitsScheduler(p *corev1.Pod) bool {
	if !p.DeletionTimestamp.IsZero() || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	return !slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
}

// comingPods asks each workload with a pending pod how many pods will still reach core: those
// kube-scheduler has yet to try, and those the workload will still create (its replica count
// less the pods it has). Most of the time the status it last reported, or its unbound pods,
// already account for every replica, and nothing more is read; during a burst its pods are
// counted.
func (p *Policy) comingPods(ctx context.Context, workloads map[workload]*workloadPods) ([]comingPods, error) {
	var out []comingPods
	for w, seen := range workloads {
		if seen.shape == nil {
			continue
		}
		replicas, reported, selector, uid, err := p.replicas(ctx, w)
		if err != nil {
			return nil, err
		}
		if replicas == 0 {
			continue
		}
		coming := seen.awaiting
		if replicas > max(reported, seen.unbound) {
			existing, err := p.countPods(ctx, w.Namespace, selector, uid)
			if err != nil {
				return nil, err
			}
			coming += max(replicas-existing, 0)
		}
		if coming > 0 {
			out = append(out, comingPods{shape: seen.shape, pods: coming})
		}
	}
	return out, nil
}

// replicas reads a workload's replica count, the pods its last status reported, its pod selector
// and its UID. A workload that is gone or being deleted creates nothing more: zero replicas.
func (p *Policy) replicas(ctx context.Context, w workload) (replicas, reported int, selector *metav1.LabelSelector, uid types.UID, err error) {
	var obj client.Object
	switch w.kind {
	case "ReplicaSet":
		obj = &appsv1.ReplicaSet{}
	default:
		obj = &appsv1.StatefulSet{}
	}
	if err := p.kubeClient.Get(ctx, w.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, 0, nil, "", nil
		}
		return 0, 0, nil, "", fmt.Errorf("reading %s %s: %w", w.kind, w.NamespacedName, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return 0, 0, nil, "", nil
	}
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return int(ptr.Deref(o.Spec.Replicas, 1)), int(o.Status.Replicas), o.Spec.Selector, o.UID, nil
	case *appsv1.StatefulSet:
		return int(ptr.Deref(o.Spec.Replicas, 1)), int(o.Status.Replicas), o.Spec.Selector, o.UID, nil
	}
	return 0, 0, nil, "", nil
}

// countPods counts the pods the workload controls that are not on their way out: those its
// controller counts against its replicas.
func (p *Policy) countPods(ctx context.Context, namespace string, selector *metav1.LabelSelector, owner types.UID) (int, error) {
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return 0, fmt.Errorf("reading the pod selector of workload %s: %w", owner, err)
	}
	var list corev1.PodList
	if err := p.kubeClient.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: s}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("listing the pods of workload %s: %w", owner, err)
	}
	n := 0
	for i := range list.Items {
		pod := &list.Items[i]
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.UID != owner || !pod.DeletionTimestamp.IsZero() ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		n++
	}
	return n, nil
}
