package nodeclass

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// ReasonTokenRefused is the reason of a false APIAuthorized condition.
const ReasonTokenRefused = "TokenRefused"

// refusedTokenRecheck is how soon a class is looked at again while the API refuses the token, in
// case a change of the verdict went unnoticed.
const refusedTokenRecheck = 30 * time.Second

// TokenStatus is what the Linode API last said about the controller's token.
type TokenStatus interface {
	// Refused reports whether the API refuses the token, and why.
	Refused() (bool, string)
	// Changed is closed when the verdict next changes.
	Changed() <-chan struct{}
}

// authorization sets APIAuthorized: false while the API refuses the token, so that the class,
// and its NodePools, say why nothing launches.
type authorization struct {
	token TokenStatus
}

func (a authorization) Reconcile(_ context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if refused, reason := a.token.Refused(); refused {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeAPIAuthorized, ReasonTokenRefused, reason)
		return reconcile.Result{RequeueAfter: refusedTokenRecheck}, nil
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeAPIAuthorized)
	return reconcile.Result{}, nil
}

// acceptedToken is the status of a token nothing watches: the API's answers tell each caller.
type acceptedToken struct{}

func (acceptedToken) Refused() (bool, string)  { return false, "" }
func (acceptedToken) Changed() <-chan struct{} { return nil }
