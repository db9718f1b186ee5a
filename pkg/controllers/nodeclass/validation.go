package nodeclass

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// validation sets ValidationSucceeded from the mode's validators. A launch rejection recorded by
// the cloud provider stands until the spec changes, since only a change can make Linode accept
// the launch.
type validation struct {
	validators []Validator
}

func (v *validation) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if nodeClass.LaunchRejected() {
		return reconcile.Result{}, nil
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
