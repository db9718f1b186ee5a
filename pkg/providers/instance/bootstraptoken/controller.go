package bootstraptoken

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// SweepInterval is how often every token is checked against its NodeClaim, for the deletions the
// NodeClaim watch missed (a controller restart, a cluster whose garbage collector is off).
const SweepInterval = time.Minute

// Controller deletes a NodeClaim's token as soon as its node has registered: from then on the
// kubelet has its own certificate, and the token would only be a credential left lying around.
type Controller struct {
	kube   client.Client
	issuer *Issuer
}

// NewController returns the controller.
func NewController(kube client.Client, issuer *Issuer) *Controller {
	return &Controller{kube: kube, issuer: issuer}
}

// Reconcile deletes the token of a NodeClaim whose node registered.
func (c *Controller) Reconcile(ctx context.Context, nodeClaim *karpv1.NodeClaim) (reconcile.Result, error) {
	if !done(nodeClaim) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, c.issuer.Delete(ctx, nodeClaim)
}

// done reports whether a NodeClaim needs its token no more.
func done(nodeClaim *karpv1.NodeClaim) bool {
	return nodeClaim.StatusConditions().IsTrue(karpv1.ConditionTypeRegistered) || !nodeClaim.DeletionTimestamp.IsZero()
}

// Register watches NodeClaims as they register or go.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("bootstraptoken").
		For(&karpv1.NodeClaim{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return done(e.Object.(*karpv1.NodeClaim)) },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !done(e.ObjectOld.(*karpv1.NodeClaim)) && done(e.ObjectNew.(*karpv1.NodeClaim))
			},
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

// Sweeper deletes the tokens whose NodeClaim is gone, was replaced by one of the same name, or
// has registered.
type Sweeper struct {
	kube   client.Client
	reader client.Reader
}

// NewSweeper returns the sweeper; reader lists the tokens uncached.
func NewSweeper(kube client.Client, reader client.Reader) *Sweeper {
	return &Sweeper{kube: kube, reader: reader}
}

// Reconcile checks every token this provider issued.
func (s *Sweeper) Reconcile(ctx context.Context) (reconciler.Result, error) {
	tokens := &corev1.SecretList{}
	if err := s.reader.List(ctx, tokens, client.InNamespace(Namespace), client.MatchingLabels{LabelNodeClaimToken: "true"}); err != nil {
		return reconciler.Result{}, fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	var errs []error
	for i := range tokens.Items {
		token := &tokens.Items[i]
		nodeClaim := &karpv1.NodeClaim{}
		err := s.kube.Get(ctx, types.NamespacedName{Name: token.Annotations[AnnotationNodeClaim]}, nodeClaim)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		if err == nil && issuedFor(token, nodeClaim) && !done(nodeClaim) {
			continue
		}
		if err := deleteToken(ctx, s.kube, token); err != nil {
			errs = append(errs, err)
			continue
		}
		log.FromContext(ctx).V(1).Info("deleted a bootstrap token no longer needed", "secret", token.Name, "nodeclaim", token.Annotations[AnnotationNodeClaim])
	}
	return reconciler.Result{RequeueAfter: SweepInterval}, errors.Join(errs...)
}

// Register runs the sweeper as a singleton.
func (s *Sweeper) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("bootstraptoken.sweep").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(s))
}
