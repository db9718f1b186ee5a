package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linode/linodego"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/utils/result"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// revalidateInterval is how often a class is checked again without a change of its own: a
// firewall can be deleted behind Karpenter's back.
const revalidateInterval = 5 * time.Minute

// conflictRetry is how soon a class is resolved again when its status changed under the
// controller (a launch rejection recorded meanwhile): at once, but not in a tight loop.
const conflictRetry = time.Second

// API is the part of the Linode API the mode-neutral resolvers read.
type API interface {
	GetFirewall(ctx context.Context, firewallID int) (*linodego.Firewall, error)
}

// Resolver resolves one part of a class's spec: it sets that part's condition, and the object
// the part resolves to, in the class's status.
type Resolver interface {
	Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error)
}

// Validator checks settings that resolve to no object against the cluster and the API. The
// ValidationSucceeded condition reports the first problem a validator finds.
type Validator interface {
	// Validate returns the reason and message of what is wrong with the class, or an empty
	// reason when nothing is.
	Validate(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reason, message string, err error)
}

// Controller reconciles LinodeNodeClasses.
type Controller struct {
	kubeClient client.Client
	recorder   events.Recorder
	token      TokenStatus
	resolvers  []Resolver
}

// NewController returns the controller for the running mode. Every mode's classes get the
// firewall resolved, the validators run, the API's verdict on the token reported (token may be
// nil when nothing watches it), and the conditions of fields the mode ignores reported as not
// applicable; resolvers are what the mode resolves on top, e.g. the image in instance mode.
func NewController(kubeClient client.Client, recorder events.Recorder, api API, token TokenStatus, running mode.Mode, resolvers []Resolver, validators []Validator) *Controller {
	if token == nil {
		token = acceptedToken{}
	}
	return &Controller{
		kubeClient: kubeClient,
		recorder:   recorder,
		token:      token,
		resolvers: append([]Resolver{&firewall{api: api, mode: running}, &validation{validators: validators}, authorization{token: token},
			notApplicable{mode: running}}, resolvers...),
	}
}

// Reconcile resolves the class and reports on it, or lets it go once nothing uses it.
func (c *Controller) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if !nodeClass.DeletionTimestamp.IsZero() {
		return c.finalize(ctx, nodeClass)
	}
	if !controllerutil.ContainsFinalizer(nodeClass, v1.TerminationFinalizer) {
		stored := nodeClass.DeepCopy()
		controllerutil.AddFinalizer(nodeClass, v1.TerminationFinalizer)
		if err := c.kubeClient.Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	stored := nodeClass.DeepCopy()
	wasReady := stored.StatusConditions().Root().IsTrue()
	results := []reconcile.Result{{RequeueAfter: revalidateInterval}}
	var errs []error
	for _, r := range c.resolvers {
		res, err := r.Reconcile(ctx, nodeClass)
		results = append(results, res)
		errs = append(errs, err)
	}
	nodeClass.ExplainReadiness()
	if !equality.Semantic.DeepEqual(stored.Status, nodeClass.Status) {
		// The lock keeps a launch rejection recorded meanwhile from being overwritten.
		if err := c.kubeClient.Status().Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: conflictRetry}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	c.publishReadiness(nodeClass, wasReady)
	return result.Min(results...), errors.Join(errs...)
}

// publishReadiness tells the operator when the class becomes usable, and why it is not while it
// is not; the recorder drops repeats of the same reason and message.
func (c *Controller) publishReadiness(nodeClass *v1.LinodeNodeClass, wasReady bool) {
	ready := nodeClass.StatusConditions().Root()
	switch {
	case ready.IsTrue() && !wasReady:
		c.recorder.Publish(readyEvent(nodeClass))
	case ready.IsFalse():
		c.recorder.Publish(notReadyEvent(nodeClass, ready.Reason, ready.Message))
	}
}

// finalize releases the class once no NodeClaim refers to it: core needs the class to delete a
// NodeClaim's node.
func (c *Controller) finalize(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(nodeClass, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, nodeClaims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	var users []string
	for i := range nodeClaims.Items {
		if v1.NodeClassName(&nodeClaims.Items[i]) == nodeClass.Name {
			users = append(users, nodeClaims.Items[i].Name)
		}
	}
	if len(users) > 0 {
		c.recorder.Publish(waitingOnNodeClaimsEvent(nodeClass, users))
		// Deleted NodeClaims wake the controller; the requeue is a safety net.
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}
	stored := nodeClass.DeepCopy()
	controllerutil.RemoveFinalizer(nodeClass, v1.TerminationFinalizer)
	if err := c.kubeClient.Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// Register watches classes, the deletions of NodeClaims of classes that wait on them, and the
// API's verdict on the token, which every class reports.
func (c *Controller) Register(ctx context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("nodeclass").
		For(&v1.LinodeNodeClass{}).
		WatchesRawSource(source.Channel(c.tokenVerdicts(ctx), handler.EnqueueRequestsFromMapFunc(c.allNodeClasses))).
		Watches(&karpv1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(c.terminatingNodeClassOf), builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return true },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

// tokenVerdicts sends an event whenever the API's verdict on the token changes, until ctx is done.
func (c *Controller) tokenVerdicts(ctx context.Context) <-chan event.GenericEvent {
	verdicts := make(chan event.GenericEvent)
	go func() {
		defer close(verdicts)
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.token.Changed():
			}
			select {
			case <-ctx.Done():
				return
			case verdicts <- event.GenericEvent{Object: &v1.LinodeNodeClass{}}:
			}
		}
	}()
	return verdicts
}

// allNodeClasses are every class, for a change that concerns them all.
func (c *Controller) allNodeClasses(ctx context.Context, _ client.Object) []reconcile.Request {
	nodeClasses := &v1.LinodeNodeClassList{}
	if err := c.kubeClient.List(ctx, nodeClasses); err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(nodeClasses.Items))
	for i := range nodeClasses.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&nodeClasses.Items[i])})
	}
	return requests
}

// terminatingNodeClassOf is the class of a deleted NodeClaim if that class is waiting to be
// deleted; classes in use need no API calls for a NodeClaim's departure.
func (c *Controller) terminatingNodeClassOf(ctx context.Context, o client.Object) []reconcile.Request {
	nodeClaim, ok := o.(*karpv1.NodeClaim)
	if !ok || v1.NodeClassName(nodeClaim) == "" {
		return nil
	}
	nodeClass := &v1.LinodeNodeClass{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: v1.NodeClassName(nodeClaim)}, nodeClass); err != nil || nodeClass.DeletionTimestamp.IsZero() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(nodeClass)}}
}
