// Package nomination tells kube-scheduler which node Karpenter core launched a pending pod for,
// when another pod taking its room there would leave it without a node, so that kube-scheduler
// binds the fleet core planned rather than a fragmented one.
//
// Core packs pending pods into NodeClaims and launches a node for each, but kube-scheduler binds
// the pods, to whichever node has room when it tries them, spreading them by its least-allocated
// score. Two kinds of pod lose out:
//   - A pod that only its node can hold. A node launched for one big pod (a 40-CPU pod on a
//     g6-dedicated-48, say) and some small ones comes up with the most room of the burst's nodes,
//     and kube-scheduler fills it with small pods planned elsewhere before it tries the big one; the
//     big pod goes pending again and core launches a second big node for it, which consolidation
//     removes minutes later.
//   - A pod larger, in some resource, than another pod the node would take. Ten g6-standard-6
//     planned full for pods of 250m, 500m and 1 CPU come up one after another; kube-scheduler
//     binds the pods in the order it tries them, the rooms left on the nodes end up smaller than
//     the last 1-CPU pods, and those pods need another node, which consolidation cannot remove: no
//     node's pods fit the others' scattered room.
//
// Once a node is Ready but cannot take pods yet (kube-apiserver registers a Node tainted not-ready
// until the node lifecycle controller has seen it Ready; it carries karpenter.sh/unregistered
// until core registers it), the controller sets status.nominatedNodeName on the pending pods core
// placed on its NodeClaim that are of either kind: those whose node is the only one of their kind
// with room for them (other nodes take the pod: their labels match its node selector and required
// node affinity, and it tolerates their taints; none of them, nor any NodeClaim of that kind still
// launching, has the allocatable resources for it), and those for which some other pending pod
// that the node would take, and that core placed elsewhere, asks for less of a resource. It
// nominates as many as fit beside the pods bound or nominated there already. That field is how a
// component other than kube-scheduler says where a pod is expected to go (KEP-5278):
// kube-scheduler holds a nominated pod's room on its node against other pods and tries that node
// first. kube-scheduler clears a nomination whenever it tries the pod and finds no node, as it does
// before the node's taints are lifted: the controller nominates the pod again. A node that can
// take pods as soon as it is Ready races the controller: for a few seconds after it turns Ready the
// controller still nominates the pods it has not nominated before. After that kube-scheduler has
// had its go: a pod still pending did not fit, its nomination is cleared, and it is core's to
// provision again (core does not provision for a nominated pod). The controller never replaces
// another node's nomination (preemption's or another component's).
//
// Why not every pod: a nominated pod waits for its own node where kube-scheduler would bind it to
// the first node with room, and core does not count it there (it is not provisionable), so core
// may place a later round's pods in room it believes free on that node, and those wait for yet
// more nodes. Nominating every planned pod halved the speed of a burst of 500 like pods
// (docs/instance-types.md). In a burst of like pods, whichever pod takes another's room leaves its
// own as large, so nothing is nominated; nor are the smallest pods of a mixed burst, which fit
// whatever room the others leave. For the same reason the nominations wait for Ready: that keeps
// the window in which core misjudges the node's room to the seconds between Ready and the taints'
// lifting.
package nomination

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	nodeutils "sigs.k8s.io/karpenter/pkg/utils/node"
	podutils "sigs.k8s.io/karpenter/pkg/utils/pod"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

const (
	// recheckInterval is how soon a registered node is looked at again until core initializes it:
	// core places later rounds' pods on nodes that are still starting.
	recheckInterval = 2 * time.Second
	// unclaimedFor is how long a registered node without a NodeClaim in the cache is looked at
	// again, in case the cache is behind; past it the node is not core's.
	unclaimedFor = time.Minute
	// comingUp is how long after a node turns Ready the controller still nominates pods that it
	// could take: kube-scheduler tries them as soon as it can, and a nomination that reaches it
	// first keeps the node's room for the pods core planned there.
	comingUp = 10 * time.Second
	// staleRetry is how soon a node is looked at again when a pod changed under a nomination:
	// kube-scheduler may give its room away within seconds.
	staleRetry = 200 * time.Millisecond
	// concurrentNodes is how many nodes are handled at once: a burst's nodes register together,
	// and each node's pods should be nominated before kube-scheduler gives their room away.
	concurrentNodes = 10
)

// Placements is what core's cluster state knows of its own scheduling decisions: the pods its
// last simulation placed on each NodeClaim.
type Placements interface {
	PodsMappedToNodeClaim(nodeClaimName string) []types.NamespacedName
}

// Controller nominates pending pods that would lose out if another pod took their room to the
// registered node of the NodeClaim core placed them on.
type Controller struct {
	kubeClient client.Client
	placements Placements
	clock      clock.Clock

	mu sync.Mutex
	// nominated are the pods nominated to a node still coming up, by UID: the node's name.
	nominated map[types.UID]string
}

// NewController returns the controller.
func NewController(kubeClient client.Client, placements Placements, clk clock.Clock) *Controller {
	return &Controller{kubeClient: kubeClient, placements: placements, clock: clk, nominated: map[types.UID]string{}}
}

// Reconcile nominates the node to the pending pods core placed on its NodeClaim that it cannot
// take yet and that no other node could hold or a smaller pod could displace, and looks again
// until core has initialized the node.
func (c *Controller) Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error) {
	if !node.DeletionTimestamp.IsZero() {
		c.forget(node.Name)
		return reconcile.Result{}, nil
	}
	nodeClaim, err := nodeutils.NodeClaimForNode(ctx, c.kubeClient, node)
	switch {
	case nodeutils.IsNodeClaimNotFoundError(err):
		if c.clock.Since(node.CreationTimestamp.Time) < unclaimedFor {
			return reconcile.Result{RequeueAfter: recheckInterval}, nil
		}
		return reconcile.Result{}, nil
	case nodeutils.IsDuplicateNodeClaimError(err):
		// Core's own controllers sort that out; until then no NodeClaim's plan is the node's.
		return reconcile.Result{RequeueAfter: recheckInterval}, nil
	case err != nil:
		return reconcile.Result{}, err
	}
	up := isReady(node) && !node.Spec.Unschedulable && len(node.Spec.Taints) == 0
	if !nodeClaim.DeletionTimestamp.IsZero() || nodeClaim.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized) || (up && !c.justUp(node)) {
		// kube-scheduler has had its go at the node's pods.
		c.forget(node.Name)
		return reconcile.Result{}, nil
	}
	if !isReady(node) {
		// Core does not count nominated pods on the node they are nominated to, and would place a
		// later round's pods there too: the nominations wait until the node is about to take pods.
		return reconcile.Result{RequeueAfter: recheckInterval}, nil
	}
	planned := c.placements.PodsMappedToNodeClaim(nodeClaim.Name)
	candidates, err := c.candidates(ctx, node, planned)
	if err != nil || len(candidates) == 0 {
		return reconcile.Result{RequeueAfter: recheckInterval}, err
	}
	others, err := c.otherNodes(ctx, node, nodeClaim)
	if err != nil {
		return reconcile.Result{}, err
	}
	bound, pending, err := c.podsOf(ctx, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	room := roomLeft(node, bound, pending)
	smallest := smallestElsewhere(node, pending, sets.New(planned...))
	requeueAfter := recheckInterval
	for _, candidate := range candidates {
		requests := resources.RequestsForPods(candidate.pod)
		atRisk := onlyHere(others, candidate.pod, requests) || displaceable(requests, smallest)
		if !atRisk || !resources.Fits(requests, room) {
			continue
		}
		nominated, err := c.nominate(ctx, candidate.pod, node.Name)
		if err != nil {
			return reconcile.Result{}, err
		}
		// A pod that changed since the cache was read may have been bound here: its room is not
		// counted on, and it is tried again as soon as the cache has caught up.
		room = resources.Subtract(room, requests)
		if !nominated {
			requeueAfter = staleRetry
			continue
		}
		podsNominated.Inc(map[string]string{nodeUpLabel.Name: strconv.FormatBool(candidate.racing)})
		c.remember(candidate.pod.UID, node.Name)
	}
	return reconcile.Result{RequeueAfter: requeueAfter}, nil
}

type candidate struct {
	pod *corev1.Pod
	// racing says that the node can take the pod already: kube-scheduler is trying it there.
	racing bool
}

// candidates are the pending pods core placed on the node's NodeClaim that are not nominated: those
// the node cannot take yet and, just after it turned Ready, those never nominated to it. A pod
// nominated before is pending without its nomination because kube-scheduler cleared it: once the
// node can take the pod that means it does not fit, and nominating it again would hide it from core
// until kube-scheduler next tries it.
func (c *Controller) candidates(ctx context.Context, node *corev1.Node, planned []types.NamespacedName) ([]candidate, error) {
	var out []candidate
	for _, key := range planned {
		pod := &corev1.Pod{}
		if err := c.kubeClient.Get(ctx, key, pod); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if pod.Spec.NodeName != "" || !pod.DeletionTimestamp.IsZero() || pod.Status.NominatedNodeName != "" {
			continue
		}
		racing := canTake(node, pod)
		if racing && (!c.justUp(node) || c.nominatedBefore(pod.UID, node.Name)) {
			continue
		}
		out = append(out, candidate{pod: pod, racing: racing})
	}
	return out, nil
}

// otherNode is a node, or a launching NodeClaim, other than the one whose pods are nominated.
type otherNode struct {
	allocatable corev1.ResourceList
	taints      scheduling.Taints
	labels      map[string]string
	// requirements are the labels as requirements, built when a pod tolerates the node.
	requirements scheduling.Requirements
}

// otherNodes are the nodes other than node that pods could go to: every schedulable node, and
// every other NodeClaim launched whose Node does not exist yet.
func (c *Controller) otherNodes(ctx context.Context, node *corev1.Node, own *karpv1.NodeClaim) ([]*otherNode, error) {
	var nodes corev1.NodeList
	var nodeClaims karpv1.NodeClaimList
	// The lists are only read.
	if err := c.kubeClient.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	if err := c.kubeClient.List(ctx, &nodeClaims, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	var others []*otherNode
	registered := map[string]bool{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		registered[n.Spec.ProviderID] = true
		if n.Name == node.Name || !n.DeletionTimestamp.IsZero() || n.Spec.Unschedulable {
			continue
		}
		others = append(others, &otherNode{allocatable: n.Status.Allocatable, taints: lastingTaints(n), labels: n.Labels})
	}
	for i := range nodeClaims.Items {
		nc := &nodeClaims.Items[i]
		if nc.Name == own.Name || registered[nc.Status.ProviderID] || !nc.DeletionTimestamp.IsZero() || len(nc.Status.Allocatable) == 0 {
			continue
		}
		others = append(others, &otherNode{allocatable: nc.Status.Allocatable, taints: nc.Spec.Taints, labels: nc.Labels})
	}
	return others, nil
}

// lastingTaints are the node's taints less the not-ready and unregistered ones, which a starting
// node sheds once it is up.
func lastingTaints(node *corev1.Node) scheduling.Taints {
	return slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return scheduling.IsKnownEphemeralTaint(&t) })
}

// onlyHere tells whether the pod's node is the only one of its kind that has room for the pod's
// requests: other nodes take it (their labels match its node selector and required node affinity,
// and it tolerates their taints), and none of them has the allocatable resources for it. Where no
// other node takes the pod, the node is alone among its kind, and the pods that could take its room
// are the ones core planned there.
func onlyHere(others []*otherNode, pod *corev1.Pod, requests corev1.ResourceList) bool {
	podRequirements := scheduling.NewStrictPodRequirements(pod)
	takenElsewhere := false
	for _, n := range others {
		if n.taints.ToleratesPod(pod) != nil {
			continue
		}
		if n.requirements == nil {
			n.requirements = scheduling.NewLabelRequirements(n.labels)
		}
		if n.requirements.Compatible(podRequirements) != nil {
			continue
		}
		if resources.Fits(requests, n.allocatable) {
			return false
		}
		takenElsewhere = true
	}
	return takenElsewhere
}

// podsOf lists the pods bound to the node that hold its resources, and every pending pod.
func (c *Controller) podsOf(ctx context.Context, node *corev1.Node) (bound, pending []*corev1.Pod, err error) {
	var boundList, pendingList corev1.PodList
	// The lists are only read.
	if err := c.kubeClient.List(ctx, &boundList, client.MatchingFields{"spec.nodeName": node.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing the pods of node %s: %w", node.Name, err)
	}
	if err := c.kubeClient.List(ctx, &pendingList, client.MatchingFields{"spec.nodeName": ""}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing pending pods: %w", err)
	}
	for i := range boundList.Items {
		if p := &boundList.Items[i]; p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			bound = append(bound, p)
		}
	}
	for i := range pendingList.Items {
		if p := &pendingList.Items[i]; p.DeletionTimestamp.IsZero() {
			pending = append(pending, p)
		}
	}
	return bound, pending, nil
}

// roomLeft is what the node has left for pods: its allocatable resources less the requests of the
// pods bound or nominated to it.
func roomLeft(node *corev1.Node, bound, pending []*corev1.Pod) corev1.ResourceList {
	taking := slices.Clone(bound)
	for _, p := range pending {
		if p.Status.NominatedNodeName == node.Name {
			taking = append(taking, p)
		}
	}
	return resources.Subtract(node.Status.Allocatable, resources.RequestsForPods(taking...))
}

// smallestElsewhere is, for each resource, the least that any pending pod asks for which the node
// will take once it is up and which core did not place on its NodeClaim: the pods kube-scheduler
// may bind there before those core planned. A resource missing from it, or from a pod's requests,
// counts as zero; it is nil when there is no such pod. Nominated pods wait for their own node, and
// DaemonSet pods are in the room core planned.
func smallestElsewhere(node *corev1.Node, pending []*corev1.Pod, plannedHere sets.Set[types.NamespacedName]) corev1.ResourceList {
	taints := lastingTaints(node)
	labels := scheduling.NewLabelRequirements(node.Labels)
	var smallest corev1.ResourceList
	for _, p := range pending {
		if p.Status.NominatedNodeName != "" || podutils.IsOwnedByDaemonSet(p) || plannedHere.Has(client.ObjectKeyFromObject(p)) {
			continue
		}
		requests := resources.RequestsForPods(p)
		// Most of a burst asks for no less than a pod before it: those are not worth matching
		// against the node.
		if smallest != nil && !asksForLess(requests, smallest) {
			continue
		}
		if taints.ToleratesPod(p) != nil || labels.Compatible(scheduling.NewStrictPodRequirements(p)) != nil {
			continue
		}
		if smallest == nil {
			smallest = requests
			continue
		}
		for name, least := range smallest {
			if quantity := requests[name]; quantity.Cmp(least) < 0 {
				smallest[name] = quantity
			}
		}
	}
	return smallest
}

// asksForLess tells whether requests ask for less of any resource in than.
func asksForLess(requests, than corev1.ResourceList) bool {
	for name, quantity := range than {
		if requested := requests[name]; requested.Cmp(quantity) < 0 {
			return true
		}
	}
	return false
}

// displaceable tells whether a pod asking for requests can lose its room on its node for good:
// some pod kube-scheduler may bind there first asks for less of a resource, so the room that pod
// leaves on the node core planned it for may be too small for this one. Where every such pod asks
// for at least as much of everything (a burst of like pods), whichever pod takes the room leaves
// room as large elsewhere, and the pod waits for no particular node.
func displaceable(requests, smallest corev1.ResourceList) bool {
	return smallest != nil && asksForLess(smallest, requests)
}

// nominate sets the pod's nominated node, and tells whether it did: not if the pod changed or
// went since the cache was read.
func (c *Controller) nominate(ctx context.Context, pod *corev1.Pod, nodeName string) (bool, error) {
	stored := pod.DeepCopy()
	pod.Status.NominatedNodeName = nodeName
	// The lock keeps the nomination off a pod kube-scheduler bound since the cache was read.
	if err := c.kubeClient.Status().Patch(ctx, pod, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("nominating node %s for pod %s: %w", nodeName, client.ObjectKeyFromObject(pod), err)
	}
	log.FromContext(ctx).Info("nominated node for pod", "Pod", client.ObjectKeyFromObject(pod), "Node", nodeName)
	return true, nil
}

// justUp tells whether the node turned Ready within the last comingUp.
func (c *Controller) justUp(node *corev1.Node) bool {
	for _, condition := range node.Status.Conditions {
		if condition.Type == corev1.NodeReady && condition.Status == corev1.ConditionTrue {
			return c.clock.Since(condition.LastTransitionTime.Time) < comingUp
		}
	}
	return false
}

func (c *Controller) nominatedBefore(uid types.UID, nodeName string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nominated[uid] == nodeName
}

// remember records a nomination; the record goes once the node has come up.
func (c *Controller) remember(uid types.UID, nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nominated[uid] = nodeName
}

// forget drops the records of nominations to the node.
func (c *Controller) forget(nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, node := range c.nominated {
		if node == nodeName {
			delete(c.nominated, uid)
		}
	}
}

// canTake tells whether kube-scheduler could bind the pod to the node, room aside: the node is
// Ready and schedulable, and the pod tolerates its taints.
func canTake(node *corev1.Node, pod *corev1.Pod) bool {
	return isReady(node) && !node.Spec.Unschedulable && scheduling.Taints(node.Spec.Taints).ToleratesPod(pod) == nil
}

// Register watches nodes as they register and come up, and pods whose nomination kube-scheduler
// cleared, to nominate them again while their node cannot take them.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("nomination").
		For(&corev1.Node{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				before, after := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
				return isReady(before) != isReady(after) || before.Spec.Unschedulable != after.Spec.Unschedulable || len(before.Spec.Taints) != len(after.Spec.Taints)
			},
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Watches(&corev1.Pod{}, handler.Funcs{
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				before, after := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
				if before.Status.NominatedNodeName != "" && after.Status.NominatedNodeName == "" && after.Spec.NodeName == "" {
					queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: before.Status.NominatedNodeName}})
				}
			},
		}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrentNodes}).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

func isReady(node *corev1.Node) bool {
	for _, condition := range node.Status.Conditions {
		if condition.Type == corev1.NodeReady {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}
