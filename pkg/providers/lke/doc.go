// Package lke launches Karpenter's nodes as node pools of a managed LKE cluster: one
// single-node pool per NodeClaim, tagged so that the provider recognises its own pools and a
// retried launch finds the pool an interrupted one created.
//
// Every read of the cluster's pools goes through one paginated listing, shared for a few seconds
// by all callers and kept coherent with the provider's own creates and deletes, so that finding
// N nodes costs one call per page of 500 pools rather than N calls.
package lke
