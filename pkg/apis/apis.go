// Package apis holds the provider's API group. The types are in v1; the CRDs generated from them
// are in crds.
package apis

// Group is the API group of the provider's own resources and the domain of its labels.
const Group = "karpenter.k8s.linode"
