// Package alphafields shows, on each LinodeNodeClass written as v1alpha1, the alpha fields that
// have no effect in v1 (an osDisk.diskID stored before v1alpha1 refused it, ipv6Options that
// enable nothing, ...): the conversion keeps them in an annotation so that v1alpha1 clients read
// back what they wrote, but they have no effect on the nodes, and an operator must see that
// rather than find out later.
//
// The condition does not hold the class back: the alpha provider did not apply these fields
// either (they were instance-mode fields of an instance mode that did not launch nodes), so a
// class that worked before the upgrade keeps working.
package alphafields

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/apis/v1alpha1"
)

// ConditionType is True, with the fields in its message, while the class carries v1alpha1 fields
// that v1 cannot apply; it is absent otherwise.
const ConditionType = "V1Alpha1FieldsIgnored"

// Reason of the condition.
const Reason = "NoV1Equivalent"

// replacements say what to use instead, for the fields that have a v1 counterpart of another shape.
var replacements = map[string]string{
	"spec.ipv6Options": "enableSLAAC or enableRanges give the VPC interface IPv6, as spec.interfaces[].vpc.ipv6 does",
}

// conflictRetry is how soon a class is looked at again when its status changed meanwhile.
const conflictRetry = time.Second

// Controller keeps the condition of every LinodeNodeClass.
type Controller struct {
	kubeClient client.Client
	recorder   events.Recorder
}

// NewController returns the controller.
func NewController(kubeClient client.Client, recorder events.Recorder) *Controller {
	return &Controller{kubeClient: kubeClient, recorder: recorder}
}

// Register watches classes whose annotations or spec change: the condition depends on nothing else.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("nodeclass.alphafields").
		For(&v1.LinodeNodeClass{}, builder.WithPredicates(predicate.Or(predicate.AnnotationChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

// Reconcile sets or clears the condition.
func (c *Controller) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if !nodeClass.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	fields := v1alpha1.UnmappedFields(nodeClass)
	stored := nodeClass.DeepCopy()
	if len(fields) == 0 {
		nodeClass.Status.Conditions = slices.DeleteFunc(nodeClass.Status.Conditions, func(condition status.Condition) bool {
			return condition.Type == ConditionType
		})
	} else {
		setCondition(nodeClass, status.Condition{
			Type: ConditionType, Status: metav1.ConditionTrue, Reason: Reason, Message: message(fields),
		})
	}
	if equality.Semantic.DeepEqual(stored.Status, nodeClass.Status) {
		return reconcile.Result{}, nil
	}
	// The lock keeps the nodeclass controller's conditions, written meanwhile, from being overwritten.
	if err := c.kubeClient.Status().Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if len(fields) > 0 {
		c.recorder.Publish(events.Event{
			InvolvedObject: nodeClass,
			Type:           corev1.EventTypeWarning,
			Reason:         Reason,
			Message:        message(fields),
			DedupeValues:   []string{string(nodeClass.UID), strings.Join(fields, ",")},
		})
	}
	return reconcile.Result{}, nil
}

func message(fields []string) string {
	var hints []string
	for _, field := range fields {
		if hint, ok := replacements[field]; ok {
			hints = append(hints, field+": "+hint)
		}
	}
	text := fmt.Sprintf("%s of karpenter.k8s.linode/v1alpha1 have no v1 equivalent and do not apply; they are kept in annotation %s for v1alpha1 clients (docs/migrating.md)",
		strings.Join(fields, ", "), v1alpha1.AnnotationV1Alpha1Fields)
	if len(hints) > 0 {
		text += "; " + strings.Join(hints, "; ")
	}
	return text
}

// setCondition sets the condition without operatorpkg's ConditionSet.Set, which would also
// recompute Ready and overwrite the explanation the nodeclass controller gives for it.
func setCondition(nodeClass *v1.LinodeNodeClass, condition status.Condition) {
	condition.ObservedGeneration = nodeClass.Generation
	condition.LastTransitionTime = metav1.Now()
	for i, existing := range nodeClass.Status.Conditions {
		if existing.Type != condition.Type {
			continue
		}
		if existing.Status == condition.Status {
			condition.LastTransitionTime = existing.LastTransitionTime
		}
		nodeClass.Status.Conditions[i] = condition
		return
	}
	nodeClass.Status.Conditions = append(nodeClass.Status.Conditions, condition)
}
