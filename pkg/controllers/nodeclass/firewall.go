package nodeclass

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// ReasonFirewallNotFound says the firewall the class names does not exist in the account.
const ReasonFirewallNotFound = "FirewallNotFound"

// firewall resolves spec.firewallID, and the firewallID of each interface where the mode applies
// interfaces: a node cannot launch behind a firewall that does not exist.
type firewall struct {
	api  API
	mode mode.Mode
}

func (f *firewall) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	if id := nodeClass.Spec.FirewallID; id != nil {
		found, err := f.resolve(ctx, nodeClass, *id, "", "firewallID")
		if err != nil || !found {
			return reconcile.Result{}, err
		}
	} else {
		nodeClass.Status.Firewall = nil
	}
	if v1.FieldAppliesIn("interfaces", f.mode) {
		for i, iface := range nodeClass.Spec.Interfaces {
			if iface.FirewallID == nil {
				continue
			}
			found, err := f.resolve(ctx, nodeClass, *iface.FirewallID, fmt.Sprintf(" of interfaces[%d]", i), fmt.Sprintf("interfaces[%d].firewallID", i))
			if err != nil || !found {
				return reconcile.Result{}, err
			}
		}
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeFirewallReady)
	return reconcile.Result{}, nil
}

// resolve reads the firewall that field names (of is which interface's, if any), records
// spec.firewallID's in the status, and reports whether it exists; when it does not,
// FirewallReady says so, naming the field.
func (f *firewall) resolve(ctx context.Context, nodeClass *v1.LinodeNodeClass, id int, of, field string) (bool, error) {
	found, err := f.api.GetFirewall(ctx, id)
	if err != nil {
		if linode.IsNotFound(err) {
			if field == "firewallID" {
				nodeClass.Status.Firewall = nil
			}
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeFirewallReady, ReasonFirewallNotFound,
				fmt.Sprintf("firewall %d%s does not exist in this Linode account: create it or change %s", id, of, field))
			return false, nil
		}
		// The last answer stands until the API answers again.
		return false, fmt.Errorf("reading firewall %d%s: %w", id, of, err)
	}
	if field == "firewallID" {
		nodeClass.Status.Firewall = &v1.ResolvedFirewall{ID: found.ID, Label: found.Label}
	}
	return true, nil
}
