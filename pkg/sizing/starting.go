package sizing

import (
	"fmt"
	"hash"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// Core places a round's pods on the nodes it already launched before it opens new NodeClaims.
// Kube-scheduler has tried the initialized nodes (a pending pod fits none of them), but not the
// nodes still starting, which often have room: the last NodeClaim of a burst's earlier round is
// rarely full. Sized without that room, a burst's later round looks bigger than what core
// launches for it, and gets the plans that suit the bigger demand: a web tier's last 45 pods,
// of which a third fit on a starting node, got seven small plans instead of three mid-sized
// ones that hold the rest exactly. So the simulation fills the NodePool's starting nodes first,
// as core does, and prices only the new nodes.

// startingNode is a node of the NodePool that core launched and that has not initialized yet.
type startingNode struct {
	name string
	plan string
	// free is what it has left for pods: its allocatable less the pods bound to it and those core
	// placed on it that are still pending; daemons the DaemonSet pods' requests bound to it.
	free, daemons corev1.ResourceList
}

// startingNodes lists the NodePool's starting nodes, by name as core tries them, given the
// requests of the pending pods core placed on each NodeClaim (by NodeClaim name).
func startingNodes(placements Placements, nodePool string, placed map[string]corev1.ResourceList) []startingNode {
	var out []startingNode
	for n := range placements.Nodes() {
		if n.NodeClaim == nil || n.Initialized() || n.MarkedForDeletion() || n.Labels()[karpv1.NodePoolLabelKey] != nodePool {
			continue
		}
		plan := n.Labels()[corev1.LabelInstanceTypeStable]
		if plan == "" {
			continue
		}
		out = append(out, startingNode{
			name:    n.Name(),
			plan:    plan,
			free:    resources.Subtract(n.Available(), placed[n.NodeClaim.Name]),
			daemons: n.DaemonSetRequests(),
		})
	}
	slices.SortFunc(out, func(a, b startingNode) int { return strings.Compare(a.name, b.name) })
	return out
}

// hashStartingNodes adds what the answer depends on of the starting nodes to h.
func hashStartingNodes(h hash.Hash64, nodes []startingNode) {
	for _, n := range nodes {
		fmt.Fprintf(h, "%s/%s", n.name, n.plan)
		for _, list := range []corev1.ResourceList{n.free, n.daemons} {
			for _, name := range slices.Sorted(maps.Keys(list)) {
				quantity := list[name]
				fmt.Fprintf(h, ",%s=%d", name, quantity.MilliValue())
			}
			fmt.Fprint(h, ";")
		}
	}
}
