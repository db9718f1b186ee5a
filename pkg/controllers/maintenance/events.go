package maintenance

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
)

// decisionEvents are the Kubernetes events of a decision: on the NodeClaim, and on its Node when
// there is one.
func decisionEvents(nodeClaim *karpv1.NodeClaim, node *corev1.Node, decision Decision, cause, message string) []events.Event {
	eventType := corev1.EventTypeWarning
	if decision == NoAction || decision == Withdrawn || decision == Wait {
		eventType = corev1.EventTypeNormal
	}
	reason := reasons[decision]
	out := []events.Event{{
		InvolvedObject: nodeClaim, Type: eventType, Reason: reason, Message: message,
		DedupeValues: []string{string(nodeClaim.UID), cause, message}, DedupeTimeout: time.Hour,
	}}
	if node != nil {
		out = append(out, events.Event{
			InvolvedObject: node, Type: eventType, Reason: reason, Message: message,
			DedupeValues: []string{string(node.UID), cause, message}, DedupeTimeout: time.Hour,
		})
	}
	return out
}

// reasons are the events' reasons, by decision.
var reasons = map[Decision]string{
	ReplaceBeforeWindow: "LinodeMaintenanceScheduled",
	Wait:                "LinodeMaintenanceScheduled",
	NoAction:            "LinodeLiveMigrationScheduled",
	Withdrawn:           "LinodeMaintenanceWithdrawn",
	ReplaceNow:          "LinodeDown",
	ReplaceDraining:     "LinodeRestartedUnexpectedly",
	RepairBlocked:       "LinodeRepairBlocked",
}

// blockedMessage says why a node Linode took down, for what, is not replaced.
func blockedMessage(what string) string {
	return fmt.Sprintf("This node's Linode is or was down (%s), but its %s annotation vetoes replacing it: remove the annotation to let Karpenter replace it", what, karpv1.DoNotRepairAnnotationKey)
}

func maintenanceMessage(decision Decision, m entry, leadTime time.Duration) string {
	when := m.start.UTC().Format(time.RFC3339)
	switch decision {
	case ReplaceBeforeWindow:
		return fmt.Sprintf("Linode maintenance (%s) takes this node's Linode down at %s: replacing the node before then", m.maintenanceType, when)
	case Wait:
		return fmt.Sprintf("Linode maintenance (%s) takes this node's Linode down at %s: the node will be replaced from %s, the maintenance lead time (%v) before",
			m.maintenanceType, when, m.start.Add(-leadTime).UTC().Format(time.RFC3339), leadTime)
	case NoAction:
		return fmt.Sprintf("Linode maintenance (%s) at %s moves this node's Linode to another host while it runs: nothing to do", m.maintenanceType, when)
	case ReplaceNow:
		return fmt.Sprintf("Linode maintenance (%s) that takes this node's Linode down has started (%s) before the node was replaced: replacing it now", m.maintenanceType, when)
	}
	return ""
}
