// Package node is the mutating admission webhook that closes Karpenter's registration race on LKE.
//
// Karpenter core expects a node it launched to register with the karpenter.sh/unregistered
// NoExecute taint and the NodeClaim's start-up taints, so that no pod lands on it before core has
// copied the NodeClaim's labels and taints onto it. An LKE kubelet registers with its pool's taints
// only, and LKE has no notion of start-up taints. The webhook adds both when the kubelet creates
// the Node object, so they are part of the Node from its first stored version.
//
// A Node is the webhook's business only if its name is that of a node of one of this cluster's
// pools (lke<clusterID>-<poolID>-<hex>) and a NodeClaim in the cluster launched that pool. Every
// other Node is admitted unchanged, at the cost of parsing its name. Errors admit the Node
// unchanged too: a node without the taints is what LKE would register anyway, and core still
// registers it, whereas a refused Node would never join.
package node
