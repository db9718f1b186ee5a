// Package sizing chooses which Linode plans Karpenter core may launch for a NodePool's pending
// pods, so that the fleet it launches costs close to the least Linode's price list allows.
//
// Core packs pending pods into as few NodeClaims as the largest available plan allows (a
// NodeClaim keeps taking pods while any of its remaining plans holds them all, and a new pod goes
// to the in-flight NodeClaim with the fewest pods), and Create launches the cheapest plan that
// holds each NodeClaim. On Linode a big plan costs more per vCPU or GiB than a mid-sized one, so
// big bundles are expensive. The policy works where core asks for plans, GetInstanceTypes: it
// simulates core's packing for the NodePool's pending pods with each price ceiling (only plans up
// to that price available), and marks the offerings of plans above the chosen ceiling
// unavailable. It lists every plan all the same, which keeps core's other contracts:
//
//   - consolidation prices a node with InstanceType.OfferingPrice, and drift's instance type
//     check asks for a compatible offering, not an available one: a node on a plan above the
//     ceiling stays priceable and does not drift;
//   - Create does not consult the policy: a NodeClaim made in one round launches even if the
//     ceiling moved since;
//   - core's disruption controller is offered every plan (its calls carry its controller name):
//     its simulations reschedule the pods of the nodes it would remove, not the pending pods the
//     ceiling was chosen for, and it only ever replaces nodes with strictly cheaper ones, so
//     consolidation can replace a node with any cheaper plan the NodePool allows and cannot
//     flip-flop with the policy.
//
// Pods that cannot make a ceiling useful do not count: those no plan holds, those core's
// provisioner refuses (refusedByCore), and those core has failed to place for longer than
// stuckAfter, which wait on something the simulation does not model.
//
// Pods that no plan under the ceiling holds are left for a later provisioning round (core retries
// pending pods), when the pods core placed on NodeClaims that still exist no longer count: the
// demand is the NodePool's provisionable pods that core has not placed (state.Cluster's pod to
// NodeClaim mapping), or placed on a NodeClaim whose node has initialized without kube-scheduler
// binding them there: core places those again. A pod core tried to place and could not sets a floor
// under the next ceiling, so every round places at least one deferred pod.
//
// A burst counts as a whole: the pods that the pending pods' ReplicaSets and StatefulSets have
// yet to create, or have created and kube-scheduler has yet to try, count as pending too
// (coming.go), so that the first rounds of a burst, which reach core before most of its pods
// do, are sized for all of it. Until they reach core, plans cheaper than the ceiling are not
// offered either (demand.burstFloor says why): none cheaper than the ceiling the arriving pods
// would get on their own, which is lower than the round's when a big pod raised it
// (decision.burstCeiling).
//
// Core places a round's pods on the nodes it launched before and that are still starting before
// it opens new NodeClaims, so the simulation does too, and prices only the new nodes
// (starting.go): a burst's last round, sized as if all its pods needed new nodes, gets plans for
// a demand bigger than what core launches for.
//
// A ceiling offers every plan at its price, or one of them alone: plans of one price can differ in
// shape (g6-dedicated-32 and g6-standard-20 both cost $0.864/h, for 32 vCPUs and 64 GB or 20 and
// 96 GB), and core, which keeps adding pods to a NodeClaim while any offered plan holds them all,
// can fill NodeClaims to a shape that only one of them holds, and holds badly. Each plan alone is
// simulated too, where every pod of the round still runs on some plan offered.
//
// Which ceiling: the one whose simulated fleet, this round's and the later rounds' for deferred
// pods, is cheapest; when that fleet would give the NodePool more than Tradeoff.LargeFleetNodes
// nodes, the one with the fewest nodes among those at most Tradeoff.Tolerance dearer and worth
// it (worthFewerNodes: no dearer than the nodes it saves cost in the cheapest fleet). A NodePool
// that was large on its own stays large for ten minutes, so that a burst's last rounds, which
// alone may not make it large, get the plans its first rounds got. The simulation takes the pods
// in the order core's queue takes them (inQueueOrder: pods of equal requests interleave as they
// were created) and orders its NodeClaims as core does (coremodel.go), and so predicts core's
// fleet to the cent where core places the pods in one round.
//
// Core's scheduler places a round's pods for every NodePool in one pass, and a pod goes onto any
// NodePool's starting node or in-flight NodeClaim that takes it before its own NodePool opens a
// NodeClaim (joint.go). Each NodePool's ceiling is chosen for its own pods; the fleet it expects
// is that of one simulation of the round over every NodePool, each at its own ceiling.
//
// Core asks often (every provisioning round, every disruption pass, per consolidation
// candidate), so pending pods are grouped by shape with cached shapes, and the answer is memoised
// until the pending pods, the DaemonSets, the NodePools or the instance types change.
package sizing
