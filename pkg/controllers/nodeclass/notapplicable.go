package nodeclass

import (
	"context"
	"fmt"
	"strings"

	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// ReasonNotApplicable: the fields a condition reports on apply in another mode; the running
// mode ignores them.
const ReasonNotApplicable = "NotApplicable"

// notApplicable marks the conditions of the fields the running mode ignores as true, saying so,
// and forgets what they once resolved to (the controller may have run in another mode).
type notApplicable struct {
	mode mode.Mode
}

func (n notApplicable) Reconcile(_ context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	for _, condition := range v1.NotApplicableConditions(n.mode) {
		forgetResolved(&nodeClass.Status, condition.Type)
		verb := "apply"
		if len(condition.Fields) == 1 {
			verb = "applies"
		}
		nodeClass.StatusConditions().SetTrueWithReason(condition.Type, ReasonNotApplicable, fmt.Sprintf("%s %s in %s mode only, and the controller runs in %s mode",
			strings.Join(condition.Fields, " and "), verb, strings.Join(lo.Map(condition.Modes, func(m mode.Mode, _ int) string { return string(m) }), " and "), n.mode))
	}
	return reconcile.Result{}, nil
}

// forgetResolved clears the object the condition's fields resolved to.
func forgetResolved(status *v1.LinodeNodeClassStatus, conditionType string) {
	switch conditionType {
	case v1.ConditionTypeImageReady:
		status.Image = nil
	case v1.ConditionTypeSubnetReady:
		status.Subnet = nil
	case v1.ConditionTypePlacementGroupReady:
		status.PlacementGroup = nil
	}
}
