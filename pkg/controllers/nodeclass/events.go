package nodeclass

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

func readyEvent(nodeClass *v1.LinodeNodeClass) events.Event {
	return events.Event{
		InvolvedObject: nodeClass,
		Type:           corev1.EventTypeNormal,
		Reason:         "Ready",
		Message:        "LinodeNodeClass is ready: Karpenter launches nodes with it",
		DedupeValues:   []string{string(nodeClass.UID), "ready"},
	}
}

func notReadyEvent(nodeClass *v1.LinodeNodeClass, reason, message string) events.Event {
	return events.Event{
		InvolvedObject: nodeClass,
		Type:           corev1.EventTypeWarning,
		Reason:         reason,
		Message:        "LinodeNodeClass is not ready: " + message,
		DedupeValues:   []string{string(nodeClass.UID), reason, message},
	}
}

func waitingOnNodeClaimsEvent(nodeClass *v1.LinodeNodeClass, nodeClaims []string) events.Event {
	return events.Event{
		InvolvedObject: nodeClass,
		Type:           corev1.EventTypeNormal,
		Reason:         "WaitingOnNodeClaimTermination",
		Message:        fmt.Sprintf("waiting on NodeClaims %s to terminate", summarize(nodeClaims)),
		DedupeValues:   []string{string(nodeClass.UID), strings.Join(nodeClaims, ",")},
	}
}

// maxNamed is how many NodeClaims an event names before it counts the rest.
const maxNamed = 5

func summarize(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}
