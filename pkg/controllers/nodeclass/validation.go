package nodeclass

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// LaunchRejectionRetry is how long a launch rejection stops launches with a class that has not
// changed: Linode may have refused a setting for a passing reason (a firewall being updated, say),
// so launches are tried again then, and a spec change lifts the rejection at once.
const LaunchRejectionRetry = 10 * time.Minute

// validation sets ValidationSucceeded from the mode's validators. A launch rejection recorded by
// the cloud provider stands until the spec changes or LaunchRejectionRetry passes.
type validation struct {
	validators []Validator
}

func (v *validation) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if nodeClass.LaunchRejected() {
		rejected := nodeClass.StatusConditions().Get(v1.ConditionTypeValidationSucceeded).LastTransitionTime.Time
		if wait := LaunchRejectionRetry - time.Since(rejected); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
	}
	var errs []error
	for _, validator := range v.validators {
		reason, message, err := validator.Validate(ctx, nodeClass)
		if err != nil {
			// The last answer stands until the API answers again.
			errs = append(errs, err)
			continue
		}
		if reason != "" {
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeValidationSucceeded, reason, message)
			return reconcile.Result{}, nil
		}
	}
	if len(errs) > 0 {
		return reconcile.Result{}, errors.Join(errs...)
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeValidationSucceeded)
	return reconcile.Result{}, nil
}
