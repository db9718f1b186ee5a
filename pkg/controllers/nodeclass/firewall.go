package nodeclass

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// ReasonFirewallNotFound says the firewall the class names does not exist in the account.
const ReasonFirewallNotFound = "FirewallNotFound"

// firewall resolves spec.firewallID.
type firewall struct {
	api API
}

func (f *firewall) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if nodeClass.Spec.FirewallID == nil {
		nodeClass.Status.Firewall = nil
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeFirewallReady)
		return reconcile.Result{}, nil
	}
	id := *nodeClass.Spec.FirewallID
	found, err := f.api.GetFirewall(ctx, id)
	if err != nil {
		if linode.IsNotFound(err) {
			nodeClass.Status.Firewall = nil
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeFirewallReady, ReasonFirewallNotFound,
				fmt.Sprintf("firewall %d does not exist in this Linode account: create it or change firewallID", id))
			return reconcile.Result{}, nil
		}
		// The last answer stands until the API answers again.
		return reconcile.Result{}, fmt.Errorf("reading firewall %d: %w", id, err)
	}
	nodeClass.Status.Firewall = &v1.ResolvedFirewall{ID: found.ID, Label: found.Label}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeFirewallReady)
	return reconcile.Result{}, nil
}
