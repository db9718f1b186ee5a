package nodesim

import (
	"context"
	"errors"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// notReadyMessage is what kubelet says while its node's network plugin has not started.
const notReadyMessage = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// notReadyHold is the Nodes registered while the simulator holds new Nodes not Ready.
type notReadyHold struct {
	mu    sync.Mutex
	on    bool
	nodes []string
}

// HoldNotReady makes every Node registered from now on, in either mode, stay not Ready, as the
// kubelet of a node whose network plugin never starts reports it: Ready=False, and kwok leaves
// its status alone. ReleaseNotReady ends the hold.
func (s *Simulator) HoldNotReady() {
	s.notReady.mu.Lock()
	defer s.notReady.mu.Unlock()
	s.notReady.on = true
}

// ReleaseNotReady ends HoldNotReady and hands the Nodes it held to kwok, which makes them Ready,
// as their network plugin would once it started. It returns the names of the Nodes it held.
func (s *Simulator) ReleaseNotReady(ctx context.Context) ([]string, error) {
	s.notReady.mu.Lock()
	held := s.notReady.nodes
	s.notReady.on, s.notReady.nodes = false, nil
	s.notReady.mu.Unlock()
	var errs []error
	for _, name := range held {
		errs = append(errs, retry(ctx, func() error { return s.kubeletBack(ctx, name) }))
	}
	return held, errors.Join(errs...)
}

// holdNotReady marks a Node about to register not Ready, while the hold is on.
func (s *Simulator) holdNotReady(node *corev1.Node) {
	s.notReady.mu.Lock()
	defer s.notReady.mu.Unlock()
	if !s.notReady.on {
		return
	}
	s.notReady.nodes = append(s.notReady.nodes, node.Name)
	metav1.SetMetaDataAnnotation(&node.ObjectMeta, AnnotationKwokStatus, "custom")
	now := metav1.Now()
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: notReadyMessage,
		LastHeartbeatTime: now, LastTransitionTime: now,
	})
}

// NodesHeldNotReady counts the Nodes of Linodes that still exist registered under the hold.
func (s *Simulator) NodesHeldNotReady(ctx context.Context) (int, error) {
	s.notReady.mu.Lock()
	held := append([]string(nil), s.notReady.nodes...)
	s.notReady.mu.Unlock()
	count := 0
	for _, name := range held {
		if err := s.kube.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{}); err == nil {
			count++
		} else if client.IgnoreNotFound(err) != nil {
			return 0, err
		}
	}
	return count, nil
}
