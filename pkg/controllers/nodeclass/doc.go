// Package nodeclass keeps each LinodeNodeClass's status true to the Linode account and the
// cluster: one small resolver per part of the spec sets that part's condition (and resolved
// object), the Ready condition says in words what is wrong, and a finalizer keeps the class until
// no NodeClaim uses it.
//
// Karpenter core launches only for a Ready NodeClass, so a class that cannot work (a firewall that
// does not exist, an Enterprise-only field on a standard cluster, a launch Linode refused) stops
// launches with a reason an operator can read on the class, instead of failing every launch.
package nodeclass
