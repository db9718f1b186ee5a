// Package capacity learns from registered Nodes how much memory each Linode plan really gives a
// node, so that later launches of the plan are promised what its nodes have rather than an
// estimate.
package capacity

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// Learner records what a registered Node of a plan reports; *instancetype.DefaultProvider is one.
type Learner interface {
	UpdateCapacityFromNode(ctx context.Context, node *corev1.Node)
}

// Controller passes every Linode Node's reported capacity to the learner.
type Controller struct {
	learner Learner
}

// NewController returns a controller that teaches learner from Nodes.
func NewController(learner Learner) *Controller {
	return &Controller{learner: learner}
}

// Reconcile hands a Linode Node that names its plan to the learner.
func (c *Controller) Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error) {
	if isLinodeNodeWithPlan(node) {
		c.learner.UpdateCapacityFromNode(ctx, node)
	}
	return reconcile.Result{}, nil
}

// Register watches Linode Nodes that name their plan. Status heartbeats do not wake it: only a
// new Node, or a change of plan label or memory capacity.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("providers.instancetype.capacity").
		For(&corev1.Node{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return isLinodeNodeWithPlan(e.Object) },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return isLinodeNodeWithPlan(e.ObjectNew) && (planOf(e.ObjectOld) != planOf(e.ObjectNew) || memoryOf(e.ObjectOld) != memoryOf(e.ObjectNew))
			},
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

func isLinodeNodeWithPlan(o client.Object) bool {
	node, ok := o.(*corev1.Node)
	return ok && strings.HasPrefix(node.Spec.ProviderID, nodeprovider.ProviderIDPrefix) && planOf(node) != ""
}

func planOf(o client.Object) string { return o.GetLabels()[corev1.LabelInstanceTypeStable] }

func memoryOf(o client.Object) string {
	node, ok := o.(*corev1.Node)
	if !ok {
		return ""
	}
	memory := node.Status.Capacity[corev1.ResourceMemory]
	return memory.String()
}
