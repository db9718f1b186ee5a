// Package mode names the ways the provider launches nodes. It imports nothing of the project:
// the API types, the settings and the providers all speak of modes, and pkg/operator builds the
// mode a name stands for.
package mode

// Mode is how the provider launches nodes; KARPENTER_MODE names it.
type Mode string

const (
	// LKE launches each node as a single-node pool of a managed LKE cluster.
	LKE Mode = "lke"
	// Instance launches plain Linodes that join a self-managed cluster.
	Instance Mode = "instance"
)

// All are the modes, in the order the settings list them.
var All = []Mode{LKE, Instance}
