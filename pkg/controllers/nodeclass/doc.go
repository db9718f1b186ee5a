// Package nodeclass keeps each LinodeNodeClass's status true to the Linode account and the
// cluster: one small resolver per part of the spec sets that part's condition (and resolved
// object), the Ready condition says in words what is wrong, and a finalizer keeps the class until
// no NodeClaim uses it.
//
// The package is mode-neutral: it resolves the firewall, runs the validators the running mode
// brings (LKE's tier rules live in pkg/providers/lke), keeps a launch rejection until the spec
// changes, and reports the conditions of the fields the mode ignores as not applicable (the table
// of fields and modes is in pkg/apis/v1). What a mode resolves on top comes as resolvers.
//
// HashController, beside it, re-stamps NodeClaims whose drift hash an older version of the
// hashing computed, so that a release that changes the hashing replaces no node.
//
// Karpenter core launches only for a Ready NodeClass, so a class that cannot work (a firewall that
// does not exist, an Enterprise-only field on a standard cluster, a launch Linode refused) stops
// launches with a reason an operator can read on the class, instead of failing every launch.
package nodeclass
