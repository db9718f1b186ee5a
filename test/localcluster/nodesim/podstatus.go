package nodesim

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// PodStatusSyncPeriod is how often the simulator puts back the readiness of running pods, as a
// kubelet's status manager compares the pod statuses it reports with the apiserver's (every 10 s).
const PodStatusSyncPeriod = 10 * time.Second

// syncStatuses plays the parts of kubelet and of the node lifecycle controller that kwok leaves
// out, every PodStatusSyncPeriod.
func (s *Simulator) syncStatuses(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		nodes := &corev1.NodeList{}
		if err := s.kube.List(ctx, nodes); err != nil {
			if ctx.Err() == nil {
				log.FromContext(ctx).Error(err, "node simulator: listing nodes")
			}
			return
		}
		s.keepSilentNodesUnknown(ctx, nodes.Items)
		if err := s.readyRunningPods(ctx, nodes.Items); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "node simulator: putting back the readiness of running pods")
		}
	}, PodStatusSyncPeriod)
}

// keepSilentNodesUnknown marks Ready Unknown again on the Nodes of Linodes that are down. kwok
// may have written Ready True after the simulator marked one: it initialises a Node it has just
// seen, and it stops only once its cache shows the annotation, so a Linode that stops moments
// after its node registered could otherwise look Ready for good.
func (s *Simulator) keepSilentNodesUnknown(ctx context.Context, nodes []corev1.Node) {
	for i := range nodes {
		node := &nodes[i]
		if node.Annotations[AnnotationKwokStatus] != "custom" || !conditionTrue(node.Status.Conditions, corev1.NodeReady) {
			continue
		}
		if err := s.kubeletDown(ctx, node.Name, time.Now()); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "node simulator: marking a silent node not ready", "node", node.Name)
		}
	}
}

// readyRunningPods plays the part of the kubelet that kwok leaves out. While a Node is not Ready
// (its leases could not be renewed, e.g. while kube-apiserver restarted), the node lifecycle
// controller marks its pods not Ready; once the Node is Ready again, its kubelet reports them
// Ready again. kwok readies a pod only on its way from Pending, so without this the pods would
// stay not Ready for good. The Nodes of a Linode that is down (AnnotationKwokStatus) keep their
// pods not Ready, as a silent kubelet would.
func (s *Simulator) readyRunningPods(ctx context.Context, nodes []corev1.Node) error {
	reporting := map[string]bool{}
	for i := range nodes {
		node := &nodes[i]
		if node.Annotations[AnnotationKwokNode] == "fake" && node.Annotations[AnnotationKwokStatus] != "custom" && conditionTrue(node.Status.Conditions, corev1.NodeReady) {
			reporting[node.Name] = true
		}
	}
	if len(reporting) == 0 {
		return nil
	}
	pods := &corev1.PodList{}
	if err := s.kube.List(ctx, pods, client.MatchingFields{"status.phase": string(corev1.PodRunning)}); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !reporting[pod.Spec.NodeName] || !pod.DeletionTimestamp.IsZero() || PodReady(pod) {
			continue
		}
		stored := pod.DeepCopy()
		now := metav1.Now()
		for j := range pod.Status.Conditions {
			if condition := &pod.Status.Conditions[j]; condition.Type == corev1.PodReady || condition.Type == corev1.ContainersReady {
				condition.Status, condition.LastTransitionTime, condition.Reason, condition.Message = corev1.ConditionTrue, now, "", ""
			}
		}
		for j := range pod.Status.ContainerStatuses {
			pod.Status.ContainerStatuses[j].Ready = true
		}
		if err := s.kube.Status().Patch(ctx, pod, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			log.FromContext(ctx).Error(err, "node simulator: readying a running pod", "pod", client.ObjectKeyFromObject(pod))
		}
	}
	return nil
}

func conditionTrue(conditions []corev1.NodeCondition, kind corev1.NodeConditionType) bool {
	return slices.ContainsFunc(conditions, func(c corev1.NodeCondition) bool { return c.Type == kind && c.Status == corev1.ConditionTrue })
}

// PodReady tells whether the pod's Ready condition is True: whether its kubelet reports it ready to
// serve.
func PodReady(pod *corev1.Pod) bool {
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodReady {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}
