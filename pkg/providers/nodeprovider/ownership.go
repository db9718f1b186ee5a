package nodeprovider

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/events"
)

// A Linode account is shared: other clusters' Karpenter (in either mode), LKE clusters, and
// machines of no cluster at all live beside this cluster's nodes, and whoever may write a
// NodeClaim's status can point it at any of them. So nothing is deleted, drained, adopted or
// rebooted on the word of a provider ID alone. A Linode (or LKE pool) is this cluster's when it
// carries this cluster's identity: in LKE mode it is a pool of the cluster the controller manages
// (the API path says so) with a tag of ours; in instance mode it carries this cluster's ownership
// tag (ClusterTag of the kube-system namespace's UID), or, that tag removed by hand, a NodeClaim's
// tag and no cluster's ownership tag, and it is not an LKE node. It is a NodeClaim's when, besides,
// the NodeClaim tag it carries is that NodeClaim's (BelongsTo).

// IsOwnershipTag reports whether the tag marks a resource as a cluster's: this cluster's, or
// another's Karpenter, in either mode.
func IsOwnershipTag(tag string) bool {
	return strings.HasPrefix(tag, TagKeyCluster+"=") || strings.HasPrefix(tag, TagKeyLKECluster+"=")
}

// IsNodeClaimTag reports whether the tag names a NodeClaim.
func IsNodeClaimTag(tag string) bool { return strings.HasPrefix(tag, TagKeyNodeClaim+"=") }

// SoleNodeClaimTag is the one NodeClaim tag among tags; empty when there is none, or more than
// one, which no launch writes and which names no NodeClaim for certain.
func SoleNodeClaimTag(tags []string) string {
	var found string
	for _, tag := range tags {
		if !IsNodeClaimTag(tag) {
			continue
		}
		if found != "" && found != tag {
			return ""
		}
		found = tag
	}
	return found
}

// BelongsTo returns nil when the node is the NodeClaim's: the NodeClaim tag it carries names the
// NodeClaim. Otherwise it returns a ForeignNodeError saying whose it is. A NodeClaim may record
// any provider ID, another NodeClaim's included; only the node's own tag says which NodeClaim it
// was launched for (or, in LKE mode, handed over to by adoption).
func (n *Node) BelongsTo(nodeClaimName string) error {
	want := NodeClaimTag(nodeClaimName)
	if n.NodeClaimTag == want {
		return nil
	}
	var reason string
	switch {
	case n.NodeClaimTag != "":
		reason = fmt.Sprintf("it carries the tag %s of another NodeClaim, not %s's", n.NodeClaimTag, nodeClaimName)
	case slices.ContainsFunc(n.Tags, IsNodeClaimTag):
		reason = fmt.Sprintf("it carries the tags of several NodeClaims (%s), so it is not NodeClaim %s's for certain",
			strings.Join(slices.DeleteFunc(slices.Clone(n.Tags), func(tag string) bool { return !IsNodeClaimTag(tag) }), ", "), nodeClaimName)
	default:
		reason = fmt.Sprintf("it carries no NodeClaim's tag, so nothing says it is NodeClaim %s's", nodeClaimName)
	}
	return NewForeignNodeError(n.InstanceID, n.Label, reason)
}

// ReasonLinodeNotOwned is the reason of the event that says the controller would not act on a
// Linode that is not proven this cluster's, or the NodeClaim's.
const ReasonLinodeNotOwned = "LinodeNotOwned"

// RefusalEvent tells, on the object (the NodeClaim, or a Node no NodeClaim accounts for), that the
// controller refused to act on a Linode (action: "deleting", "rebooting", "replacing the node of",
// "adopting") and why.
func RefusalEvent(object client.Object, action string, foreign *ForeignNodeError) events.Event {
	return events.Event{
		InvolvedObject: object,
		Type:           corev1.EventTypeWarning,
		Reason:         ReasonLinodeNotOwned,
		Message:        fmt.Sprintf("Not %s %s: %s", action, DescribeLinode(foreign.InstanceID, foreign.Label), foreign.Reason),
		DedupeValues:   []string{string(object.GetUID()), action, strconv.Itoa(foreign.InstanceID)},
	}
}
