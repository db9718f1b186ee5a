package sizing

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/karpenter/pkg/utils/pod"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// pendingPod is a provisionable pod and what the simulation needs of it.
type pendingPod struct {
	key   types.NamespacedName
	shape *podShape
	// created and uid order pods of equal CPU and memory requests as core's queue does.
	created metav1.Time
	uid     types.UID
	// failed says that core tried to place the pod and could not.
	failed bool
}

// pendingDemand is what the cluster's unbound pods ask of the NodePools.
type pendingDemand struct {
	// pods are the pods core would try to provision for and has not placed; coming those their
	// workloads are about to create (coming.go says why).
	pods   []pendingPod
	coming []comingPods
	// placed sums the requests of the pods core placed on each NodeClaim that exists, by
	// NodeClaim name: they take room on nodes still starting (starting.go).
	placed map[string]corev1.ResourceList
}

// initializedNodeClaims are the names of the NodeClaims whose nodes have initialized.
func initializedNodeClaims(placements Placements) map[string]bool {
	out := map[string]bool{}
	for n := range placements.Nodes() {
		if n.NodeClaim != nil && n.Initialized() {
			out[n.NodeClaim.Name] = true
		}
	}
	return out
}

// stuckAfter is how long after core first tried to place a pod it may keep failing to before the
// pod stops counting: several of core's provisioning rounds, which last at most
// BATCH_MAX_DURATION (10 s by default) and the time core's scheduling takes. A pod the policy
// leaves to a later round goes in the next rounds (the floor offers a plan that holds a pod
// core could not place every round); one still unplaced after this long waits on something the
// simulation does not model (pod affinity to pods that do not exist, a volume, a host port), and
// counting it would keep narrowing, or through the floor widening, the plans for pods that are
// not waiting for them.
const stuckAfter = time.Minute

// pendingPods lists the pods core would try to provision for: provisionable (kube-scheduler
// found no node for them), not bound, and not already placed on a NodeClaim that still exists
// and has yet to initialize; and the pods their workloads are about to create. Pods core refuses
// to provision for (refusedByCore) and pods it has failed to place for longer than stuckAfter
// are left out. Whether a pod is provisionable, and its shape, are cached by pod UID and
// resource version, since core asks often and pods rarely change.
func (p *Policy) pendingPods(ctx context.Context, placements Placements) (pendingDemand, error) {
	ignorePreferences := ignoresPreferences(ctx)
	unbound, stored, err := p.unboundPods(ctx)
	if err != nil {
		return pendingDemand{}, err
	}
	p.listings++
	workloads := map[workload]*workloadPods{}
	out := pendingDemand{pods: make([]pendingPod, 0, len(unbound)), placed: map[string]corev1.ResourceList{}}
	initialized := initializedNodeClaims(placements)
	for _, item := range unbound {
		cached := p.cachedShape(ctx, item, stored, ignorePreferences)
		cached.listing = p.listings
		if cached.interned != nil {
			cached.interned.listing = p.listings
		}
		if cached.inWorkload {
			if workloads[cached.workload] == nil {
				workloads[cached.workload] = &workloadPods{}
			}
			workloads[cached.workload].unbound++
		}
		if !cached.provisionable {
			if cached.inWorkload && cached.awaitsScheduler {
				workloads[cached.workload].awaiting++
			}
			continue
		}
		if cached.refused {
			continue
		}
		key := cached.key
		// Core clears a pod's success time when it fails to place it, and keeps its first decision time.
		tried := placements.PodSchedulingDecisionTime(key)
		failed := !tried.IsZero() && placements.PodSchedulingSuccessTime(key).IsZero()
		if failed && p.clock.Since(tried) > stuckAfter {
			continue
		}
		// A pod core placed on a NodeClaim is no demand while the NodeClaim's node starts; once the
		// node has initialized, a pod still unschedulable did not fit there, and core places it
		// again.
		if claim := placements.PodNodeClaimMapping(key); claim != "" && placements.NodeClaimExists(claim) && !initialized[claim] {
			out.placed[claim] = resources.MergeInto(out.placed[claim], cached.shape.requests)
			continue
		}
		out.pods = append(out.pods, pendingPod{key: key, shape: cached.shape, created: cached.created, uid: cached.uid, failed: failed})
		if cached.inWorkload && workloads[cached.workload].shape == nil {
			workloads[cached.workload].shape = cached.shape
		}
	}
	for uid, cached := range p.shapes {
		if cached.listing != p.listings {
			delete(p.shapes, uid)
			delete(p.shapesByPod, cached.pod)
		}
	}
	for key, interned := range p.shapesByKey {
		if interned.listing != p.listings {
			delete(p.shapesByKey, key)
		}
	}
	if len(out.pods) == 0 {
		return out, nil
	}
	coming, err := p.comingPods(ctx, workloads)
	if err != nil {
		return pendingDemand{}, err
	}
	out.coming = coming
	return out, nil
}

// cachedShape is what the policy reads of the unbound pod, worked out again only when the pod
// changed (its resource version) or the preference policy did. A pod the informer's store holds
// (stored) is found by its address first: the store replaces a pod it updates, and the cache
// keeps the pod it read, so the same address is the same pod, and reading it is not needed at
// all; thousands of pods read field by field cost more than the rest of an unchanged call.
func (p *Policy) cachedShape(ctx context.Context, item *corev1.Pod, stored, ignorePreferences bool) *cachedShape {
	if stored {
		if cached, ok := p.shapesByPod[item]; ok && cached.ignorePreferences == ignorePreferences {
			return cached
		}
	}
	cached := p.shapes[item.UID]
	if cached == nil || cached.resourceVersion != item.ResourceVersion || cached.ignorePreferences != ignorePreferences {
		cached = &cachedShape{
			resourceVersion: item.ResourceVersion, ignorePreferences: ignorePreferences, provisionable: pod.IsProvisionable(item),
			key: types.NamespacedName{Namespace: strings.Clone(item.Namespace), Name: strings.Clone(item.Name)}, created: item.CreationTimestamp, uid: item.UID,
			awaitsScheduler: awaitsScheduler(item),
		}
		cached.workload, cached.inWorkload = workloadOf(item)
		if cached.provisionable {
			cached.interned, cached.refused = p.internShape(shapeOf(item, ignorePreferences)), refusedByCore(ctx, item)
			cached.shape = cached.interned.shape
		}
		if previous := p.shapes[item.UID]; previous != nil {
			delete(p.shapesByPod, previous.pod)
		}
		p.shapes[item.UID] = cached
	}
	if stored && cached.pod != item {
		delete(p.shapesByPod, cached.pod)
		cached.pod = item
		p.shapesByPod[item] = cached
	}
	return cached
}

// internShape is the shape of the pending pods with the same key as s: s, unless one is known.
// The pods of a workload then share one shape, which groupPending tells apart by address.
func (p *Policy) internShape(s *podShape) *internedShape {
	interned, ok := p.shapesByKey[s.key]
	if !ok {
		interned = &internedShape{shape: s}
		p.shapesByKey[s.key] = interned
	}
	return interned
}

// internedShape is a shape of pending pods, and the last listing of pending pods that held a pod
// of it.
type internedShape struct {
	shape   *podShape
	listing uint64
}

type cachedShape struct {
	resourceVersion   string
	ignorePreferences bool
	// provisionable says that kube-scheduler found no node for the pod and that core would try
	// to provision for it (pod.IsProvisionable); only then does it have a shape.
	provisionable bool
	shape         *podShape
	interned      *internedShape
	// refused says that core's provisioner ignores the pod (refusedByCore).
	refused bool
	// listing is the last listing of pending pods that held the pod.
	listing uint64
	// key, created and uid are the pod's; workload its controller, when inWorkload; and
	// awaitsScheduler whether kube-scheduler has yet to try it. key is a copy, kept beside the
	// other cached pods' keys: core's cluster state hashes the key of every pending pod on every
	// call, and the pods' own strings lie scattered over the heap, one cache miss each.
	key                         types.NamespacedName
	created                     metav1.Time
	uid                         types.UID
	workload                    workload
	inWorkload, awaitsScheduler bool
	// pod is the informer's store's pod it was last found as, when read from the store.
	pod *corev1.Pod
}
