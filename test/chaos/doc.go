// Package chaos is the fault matrix (`make chaos`, and its short version in the quick run): for
// each fault, a new local cluster, a workload that scales down and up through the fault, then a
// wait for recovery, and a table of what the fault cost a user: pods never running, pods evicted
// without a drain, Linodes leaked, duplicate nodes, minutes to recover. Faults of Linode's API are
// the emulator's fault injection; the rest act on the real processes and objects of the local
// cluster (kube-apiserver restarted, the controller or its leader killed, the webhook's endpoint
// held not ready, LKE recycles, NodeClaims removed without their finalizers). The shared-account
// scenario (sharedaccount.go) runs three clusters on one emulator account instead, and counts
// each controller's writes to Linodes and pools that are not its cluster's.
package chaos
