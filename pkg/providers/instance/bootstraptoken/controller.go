package bootstraptoken

import (
	"context"
	"errors"
	"time"

	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
)

// Controller issues a token for each NodeClaim of a LinodeNodeClass as it is created, and deletes
// it as soon as the node has registered: from then on the kubelet has its own certificate, and the
// token would only be a credential left lying around. Nothing lists tokens, which would take
// reading every Secret of kube-system: a restarted component sees every NodeClaim again as it
// starts, the garbage collector deletes the tokens of NodeClaims deleted (their owner), and an
// expired token is refused by kube-apiserver and deleted by kube-controller-manager's tokencleaner.
type Controller struct {
	kube   client.Client
	issuer *Issuer
}

// NewController returns the controller.
func NewController(kube client.Client, issuer *Issuer) *Controller {
	return &Controller{kube: kube, issuer: issuer}
}

// Reconcile issues the token of a NodeClaim still launching, and deletes that of one whose node
// registered or that is going.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *karpv1.NodeClaim) (reconcile.Result, error) {
	if !ofLinode(nodeClaim) {
		return reconcile.Result{}, nil
	}
	if done(nodeClaim) {
		return reconcile.Result{}, c.issuer.Delete(ctx, nodeClaim)
	}
	err := c.issuer.Issue(ctx, nodeClaim)
	if taken := (*IDTakenError)(nil); errors.As(err, &taken) {
		// The controller does not launch the NodeClaim while the id is taken; should the holder
		// be done first, the token is issued then.
		return reconcile.Result{RequeueAfter: idTakenRetry}, nil
	}
	return reconcile.Result{}, err
}

// idTakenRetry is how often a NodeClaim whose token id another NodeClaim holds looks again.
const idTakenRetry = 10 * time.Second

// ofLinode reports whether a NodeClaim is launched by this provider, as a Linode that joins with
// a token.
func ofLinode(nodeClaim *karpv1.NodeClaim) bool {
	return nodeClaim.Spec.NodeClassRef != nil && nodeClaim.Spec.NodeClassRef.Group == apis.Group
}

// done reports whether a NodeClaim needs its token no more.
func done(nodeClaim *karpv1.NodeClaim) bool {
	return nodeClaim.StatusConditions().IsTrue(karpv1.ConditionTypeRegistered) || !nodeClaim.DeletionTimestamp.IsZero()
}

// Register watches NodeClaims as they come, register or go.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("bootstraptoken").
		For(&karpv1.NodeClaim{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return true },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !done(e.ObjectOld.(*karpv1.NodeClaim)) && done(e.ObjectNew.(*karpv1.NodeClaim))
			},
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}
