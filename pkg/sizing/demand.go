package sizing

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/pod"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// podShape is what the simulation needs of a pending pod; identical pods share a key.
type podShape struct {
	key      string
	requests corev1.ResourceList
	// cpu and memory, in millis, order pods as Karpenter core's scheduling queue orders them.
	cpu, memory  int64
	requirements scheduling.Requirements
	tolerations  []corev1.Toleration
	perNode      int
	group        string
	// levels are the ways core's scheduler tries to place the pod, in its order (shapeLevel);
	// requirements, perNode and group are the first's.
	levels []shapeLevel
	// level is which of the levels this shape is placed by, and constraints identifies what
	// decides the plans and NodePools its pods may run on, whatever they request: the
	// requirements of each level and the tolerations. Thousands of pods of different sizes mostly
	// share them, and what they decide is worked out once for all of them.
	level       int
	constraints string
}

// shapeLevel is one way core's scheduler tries to place a pod: with each of its OR'd required
// node selector terms in turn and, under its Respect preference policy, its preferences as if
// required (the heaviest preferred node affinity term, preferred anti-affinity and ScheduleAnyway
// spreads over hostnames), then without its preferred node affinity. Core moves to the next way
// only when no NodeClaim and no NodePool takes the pod the way before.
type shapeLevel struct {
	requirements scheduling.Requirements
	perNode      int
	group        string
	// key is the requirements' text, which identifies them.
	key string
}

// shapeOf describes a pod as core's scheduler sees it under its preference policy: Respect,
// unless ignorePreferences. A zone spread means nothing on Linode, whose region is its only zone.
func shapeOf(p *corev1.Pod, ignorePreferences bool) *podShape {
	s := &podShape{
		requests:    resources.RequestsForPods(p),
		tolerations: p.Spec.Tolerations,
	}
	s.cpu, s.memory = s.requests.Cpu().MilliValue(), s.requests.Memory().MilliValue()
	var terms []corev1.NodeSelectorTerm
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	level := func(p *corev1.Pod, respect bool) shapeLevel {
		l := shapeLevel{requirements: scheduling.NewStrictPodRequirements(p)}
		if respect {
			l.requirements = scheduling.NewPodRequirements(p)
		}
		l.perNode, l.group = spreadOverHostnames(p, respect)
		return l
	}
	for i := range max(1, len(terms)) {
		s.levels = append(s.levels, level(withTerms(p, terms, i), !ignorePreferences))
	}
	if !ignorePreferences && scheduling.HasPreferredNodeAffinity(p) {
		// Core relaxes preferred pod affinity and anti-affinity before preferred node affinity,
		// and ScheduleAnyway spreads after.
		relaxed := withTerms(p, terms, max(0, len(terms)-1))
		relaxed.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = nil
		if a := relaxed.Spec.Affinity.PodAntiAffinity; a != nil {
			relaxed.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: a.RequiredDuringSchedulingIgnoredDuringExecution}
		}
		s.levels = append(s.levels, level(relaxed, true))
	}
	s.requirements, s.perNode, s.group = s.levels[0].requirements, s.levels[0].perNode, s.levels[0].group
	var key, constraints strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s.requests)) {
		quantity := s.requests[name]
		fmt.Fprintf(&key, "%s=%s,", name, quantity.String())
	}
	for i := range s.levels {
		l := &s.levels[i]
		l.key = l.requirements.String()
		fmt.Fprintf(&constraints, "|%s|", l.key)
		if l.perNode > 0 {
			fmt.Fprintf(&constraints, "%d/%s", l.perNode, l.group)
		}
	}
	for _, t := range s.tolerations {
		fmt.Fprintf(&constraints, "%s:%s:%s:%s,", t.Key, t.Operator, t.Value, t.Effect)
	}
	s.constraints = constraints.String()
	key.WriteString(s.constraints)
	s.key = key.String()
	return s
}

// at is the shape placed its level'th way.
func (s *podShape) at(level int) *podShape {
	if level == 0 {
		return s
	}
	out := *s
	l := s.levels[level]
	out.requirements, out.perNode, out.group = l.requirements, l.perNode, l.group
	out.key = fmt.Sprintf("%s@%d", s.key, level)
	out.level, out.constraints = level, fmt.Sprintf("%s@%d", s.constraints, level)
	return &out
}

// withTerms is the pod with its required node selector terms from the first'th on; the pod
// itself when it has none. Its affinity is a copy.
func withTerms(p *corev1.Pod, terms []corev1.NodeSelectorTerm, first int) *corev1.Pod {
	if len(terms) == 0 && (p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil) {
		return p
	}
	out := *p
	affinity := *p.Spec.Affinity
	nodeAffinity := *affinity.NodeAffinity
	if len(terms) > 0 {
		nodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms[first:]}
	}
	affinity.NodeAffinity = &nodeAffinity
	out.Spec.Affinity = &affinity
	return &out
}

// spreadOverHostnames is the most pods of a group that core puts on one new node: a hostname
// topology spread that must be satisfied (or, when core respects preferences, any) and selects
// the pod itself allows maxSkew (core counts a new node's domain from zero), and anti-affinity
// to itself over hostnames, required (or, respecting preferences, preferred), allows one. group
// names the pods counted together, 0 means no limit.
func spreadOverHostnames(p *corev1.Pod, respectPreferences bool) (perNode int, group string) {
	own := labels.Set(p.Labels)
	for _, tsc := range p.Spec.TopologySpreadConstraints {
		if tsc.TopologyKey != corev1.LabelHostname || (tsc.WhenUnsatisfiable != corev1.DoNotSchedule && !respectPreferences) || !selects(tsc.LabelSelector, own) {
			continue
		}
		if perNode == 0 || int(tsc.MaxSkew) < perNode {
			perNode, group = int(tsc.MaxSkew), p.Namespace+"/spread/"+metav1.FormatLabelSelector(tsc.LabelSelector)
		}
	}
	if p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil {
		terms := p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		if respectPreferences {
			for _, weighted := range p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(slices.Clip(terms), weighted.PodAffinityTerm)
			}
		}
		for _, term := range terms {
			if term.TopologyKey == corev1.LabelHostname && selects(term.LabelSelector, own) &&
				(len(term.Namespaces) == 0 || slices.Contains(term.Namespaces, p.Namespace)) {
				return 1, p.Namespace + "/anti/" + metav1.FormatLabelSelector(term.LabelSelector)
			}
		}
	}
	return perNode, group
}

func selects(selector *metav1.LabelSelector, set labels.Set) bool {
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && !s.Empty() && s.Matches(set)
}

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

// UnboundPodsIndex names the index ReadFromInformers adds to the pod informer; unboundPodsKey is
// its one key, that of the pods no node is bound to.
const (
	UnboundPodsIndex = "karpenter.k8s.linode/sizing-unbound"
	unboundPodsKey   = "unbound"
)

// ReadFromInformers has the policy read the unbound pods, and the NodePools' NodeClaims,
// straight from the informers of the cache that serves kubeClient's reads (the manager's),
// through indexes of its own. A listing, even without deep copies, copies every object into a
// new slice: megabytes per call with thousands of pods pending, and hundreds of kilobytes with
// hundreds of nodes, which core asks for several times a round. Caches whose informers have no
// index of their own to read (a multi-namespace cache) are listed as before.
func (p *Policy) ReadFromInformers(ctx context.Context, informers crcache.Informers) error {
	pods, err := indexedStore(ctx, informers, &corev1.Pod{}, toolscache.Indexers{UnboundPodsIndex: indexUnbound})
	if err != nil {
		return fmt.Errorf("indexing unbound pods: %w", err)
	}
	if pods != nil {
		p.podIndex.Store(pods)
	}
	nodeClaims, err := indexedStore(ctx, informers, &karpv1.NodeClaim{}, toolscache.Indexers{NodePoolNodeClaimsIndex: indexNodePool})
	if err != nil {
		return fmt.Errorf("indexing NodeClaims by NodePool: %w", err)
	}
	if nodeClaims != nil {
		p.nodeClaimIndex.Store(nodeClaims)
	}
	return nil
}

// indexedStore adds the indexers to the informer of obj's kind and returns its store, or nil when
// the informer has no store of its own to read.
func indexedStore(ctx context.Context, informers crcache.Informers, obj client.Object, indexers toolscache.Indexers) (*informerStore, error) {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	indexed, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, nil
	}
	if err := informer.AddIndexers(indexers); err != nil {
		return nil, err
	}
	return &informerStore{Indexer: indexed.GetIndexer(), synced: informer.HasSynced}, nil
}

// informerStore is an informer's store, and whether it has synced: until then, listing through
// the cache waits for it.
type informerStore struct {
	toolscache.Indexer
	synced func() bool
}

// NodePoolNodeClaimsIndex names the index ReadFromInformers adds to the NodeClaim informer:
// NodeClaims by the NodePool their label names.
const NodePoolNodeClaimsIndex = "karpenter.k8s.linode/sizing-nodepool"

func indexNodePool(obj any) ([]string, error) {
	if nodeClaim, ok := obj.(*karpv1.NodeClaim); ok {
		if nodePool, ok := nodeClaim.Labels[karpv1.NodePoolLabelKey]; ok {
			return []string{nodePool}, nil
		}
	}
	return nil, nil
}

func indexUnbound(obj any) ([]string, error) {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName == "" {
		return []string{unboundPodsKey}, nil
	}
	return nil, nil
}

// unboundPods are the pods no node is bound to, as the cache holds them: they are only read.
// stored says that they are the informer's store's own pods, not copies.
func (p *Policy) unboundPods(ctx context.Context) (pods []*corev1.Pod, stored bool, err error) {
	if index := p.podIndex.Load(); index != nil && index.synced() {
		objects, err := index.ByIndex(UnboundPodsIndex, unboundPodsKey)
		if err != nil {
			return nil, false, fmt.Errorf("reading pending pods: %w", err)
		}
		pods := make([]*corev1.Pod, 0, len(objects))
		for _, o := range objects {
			if pod, ok := o.(*corev1.Pod); ok {
				pods = append(pods, pod)
			}
		}
		return pods, true, nil
	}
	var list corev1.PodList
	// The manager's cache indexes pods by node name, as core's own listing of pending pods uses.
	if err := p.kubeClient.List(ctx, &list, client.MatchingFields{"spec.nodeName": ""}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, fmt.Errorf("listing pending pods: %w", err)
	}
	pods = make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, false, nil
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

// ignoresPreferences says whether core's scheduler runs with its Ignore preference policy; it
// respects preferences when its settings are not in the context, as by default.
func ignoresPreferences(ctx context.Context) (ignore bool) {
	defer func() {
		if recover() != nil {
			ignore = false
		}
	}()
	return coreoptions.FromContext(ctx).PreferencePolicy == coreoptions.PreferencePolicyIgnore
}

// refusedByCore says whether core's provisioner refuses the pod whatever the NodePools offer, as
// its Provisioner.Validate does for node selectors and required node affinity: a term with
// matchFields, or a requirement no NodeClaim could carry (a restricted label such as
// kubernetes.io/hostname, a malformed one). The simulation reads neither, and would count the
// pod as demand for as long as it exists.
func refusedByCore(ctx context.Context, p *corev1.Pod) bool {
	terms := make([]corev1.NodeSelectorTerm, 0, len(p.Spec.NodeSelector))
	for key, value := range p.Spec.NodeSelector {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}})
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = append(terms, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms...)
	}
	for _, term := range terms {
		if term.MatchFields != nil {
			return true
		}
		for _, r := range term.MatchExpressions {
			if karpv1.ValidateRequirement(ctx, karpv1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values}) != nil {
				return true
			}
		}
	}
	return false
}

// podGroup is the NodePool's pending pods of one shape.
type podGroup struct {
	shape *podShape
	// pods counts the pending pods and those coming; coming only the latter.
	pods, coming int
	// deferred says that core tried to place some of the pods and could not.
	deferred bool
	// elsewhere says that, should this NodePool's plans offered not hold the pods, core would
	// place them another way this round (rankedNodePools.place), so they cannot be left to a
	// later round.
	elsewhere bool
	// members are the group's pending pods, without those coming.
	members []*pendingPod
}

// rankedNodePool is a NodePool core's scheduler may give new NodeClaims to.
type rankedNodePool struct {
	name     string
	nodePool *karpv1.NodePool
	template *corescheduling.NodeClaimTemplate
	taints   scheduling.Taints
}

// rankedNodePools are the NodePools in the order core tries them for a pod no NodeClaim takes:
// highest weight first. Which of them takes a pod, and which way (shapeLevel), is decided by
// every plan they allow; a ceiling must then keep the pods where they are placed.
type rankedNodePools struct {
	pools         []rankedNodePool
	instanceTypes []*cloudprovider.InstanceType
	daemons       []*corev1.Pod
	rooms         map[[2]int]corev1.ResourceList
	placements    map[string]placement
	// allowed are the instance types (indices) a new NodeClaim of a NodePool may launch for pods
	// of some constraints (podShape.constraints) placed some way, whatever they request.
	allowed map[allowedKey][]int
}

type allowedKey struct {
	pool, level int
	constraints string
}

// placement is where core's scheduler places pods of a shape: the NodePool (an index, -1 when
// none takes them), the way (an index into the shape's levels), and whether another NodePool or
// way would take them were that one's plans withheld.
type placement struct {
	pool, level int
	elsewhere   bool
}

// place finds where core places pods of the shape: the first way, in its order, for which a
// NodePool takes them, and the first such NodePool in weight order.
func (r *rankedNodePools) place(s *podShape) placement {
	if found, ok := r.placements[s.key]; ok {
		return found
	}
	found := placement{pool: -1}
	for level := range s.levels {
		for pool := range r.pools {
			if !r.takes(pool, s, level) {
				continue
			}
			if found.pool >= 0 {
				found.elsewhere = true
				break
			}
			found.pool, found.level = pool, level
		}
		if found.elsewhere {
			break
		}
	}
	r.placements[s.key] = found
	return found
}

// takes says whether a new NodeClaim of the NodePool could hold a pod of the shape placed its
// level'th way, on some plan with room for it after the DaemonSets.
func (r *rankedNodePools) takes(pool int, s *podShape, level int) bool {
	for _, i := range r.allowedFor(pool, s, level) {
		room, ok := r.rooms[[2]int{pool, i}]
		if !ok {
			np, it := r.pools[pool], r.instanceTypes[i]
			room = resources.Subtract(it.Allocatable(), daemonOverhead(np.template, np.taints, it, r.daemons))
			r.rooms[[2]int{pool, i}] = room
		}
		if resources.Fits(s.requests, room) {
			return true
		}
	}
	return false
}

// allowedFor are the instance types (indices) a new NodeClaim of the NodePool may launch for a
// pod of the shape placed its level'th way, by its requirements and tolerations alone.
func (r *rankedNodePools) allowedFor(pool int, s *podShape, level int) []int {
	key := allowedKey{pool: pool, level: level, constraints: s.constraints}
	if allowed, ok := r.allowed[key]; ok {
		return allowed
	}
	if r.allowed == nil {
		r.allowed = map[allowedKey][]int{}
	}
	np := r.pools[pool]
	requirements := s.levels[level].requirements
	allowed := []int{}
	if np.taints.Tolerates(s.tolerations) == nil && np.template.Requirements.IsCompatible(requirements, scheduling.AllowUndefinedWellKnownLabels) {
		both := scheduling.NewRequirements(np.template.Requirements.Values()...)
		both.Add(requirements.Values()...)
		for i, it := range r.instanceTypes {
			if it.Requirements.Intersects(both) == nil && it.Offerings.Available().HasCompatible(both) {
				allowed = append(allowed, i)
			}
		}
	}
	r.allowed[key] = allowed
	return allowed
}

// groupRun is a run of pods of one group in core's scheduling queue.
type groupRun = runOf[*podGroup]

// groupPending groups the pending pods core gives the NodePool (the pool'th of pools) by shape,
// placed the way core places them, in the order first seen, with the pods coming like them, and
// lays the groups' pods out in the order core's scheduling queue takes them (inQueueOrder).
func groupPending(pools *rankedNodePools, pool int, pending []pendingPod, coming []comingPods) ([]*podGroup, []groupRun) {
	byKey := map[string]*podGroup{}
	refused := map[string]bool{}
	// byShape are the groups by the pods' shapes, nil for those refused: pods of one shape mostly
	// share it (Policy.internShape), and finding it is cheaper than hashing its key.
	byShape := map[*podShape]*podGroup{}
	var groups []*podGroup
	queued := make([]queuedPod, 0, len(pending))
	for i := range pending {
		p := &pending[i]
		s := p.shape
		g, seen := byShape[s]
		if !seen {
			if !refused[s.key] {
				if g = byKey[s.key]; g == nil {
					if where := pools.place(s); where.pool == pool {
						g = &podGroup{shape: s.at(where.level), elsewhere: where.elsewhere}
						byKey[s.key] = g
						groups = append(groups, g)
					} else {
						refused[s.key] = true
					}
				}
			}
			byShape[s] = g
		}
		if g == nil {
			continue
		}
		g.pods++
		g.members = append(g.members, p)
		queued = append(queued, queuedPod{group: g, pod: p})
		if p.failed {
			g.deferred = true
		}
	}
	for _, c := range coming {
		if g, ok := byKey[c.shape.key]; ok {
			g.pods += c.pods
			g.coming += c.pods
		}
	}
	return groups, inQueueOrder(queued, groups)
}

// queuedPod is a pending pod of a group.
type queuedPod struct {
	group *podGroup
	pod   *pendingPod
}

// requestClass is what core's scheduling queue orders pods by first: their CPU, then memory.
type requestClass struct{ cpu, memory int64 }

func classOf(g *podGroup) requestClass { return requestClass{cpu: g.shape.cpu, memory: g.shape.memory} }

// inQueueOrder lays the groups' pods out as core's scheduling queue sorts pods: most CPU first,
// then most memory, then the oldest, then by UID. Where pods of several groups ask for the same
// CPU and memory, that order interleaves them as their workloads created them, and it decides
// which NodeClaims core fills with which: pods spread over hostnames that come first open a
// NodeClaim each, and the others then fill those. The pods still coming are created after every
// pod pending, so they end their requests' run, in the groups' order. Only such ties need the
// pods sorted; core asks often, and most groups have requests of their own.
func inQueueOrder(queued []queuedPod, groups []*podGroup) []groupRun {
	byClass := map[requestClass][]*podGroup{}
	var classes []requestClass
	ties := false
	for _, g := range groups {
		c := classOf(g)
		if byClass[c] == nil {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], g)
		ties = ties || len(byClass[c]) > 1
	}
	slices.SortFunc(classes, func(a, b requestClass) int {
		if c := cmp.Compare(b.cpu, a.cpu); c != 0 {
			return c
		}
		return cmp.Compare(b.memory, a.memory)
	})
	// Without ties, no pod need be looked at.
	tiedPods := map[requestClass][]queuedPod{}
	for i := 0; ties && i < len(queued); i++ {
		if c := classOf(queued[i].group); len(byClass[c]) > 1 {
			tiedPods[c] = append(tiedPods[c], queued[i])
		}
	}
	var runs []groupRun
	for _, c := range classes {
		tied := byClass[c]
		if len(tied) == 1 {
			runs = append(runs, groupRun{of: tied[0], pods: tied[0].pods})
			continue
		}
		pods := tiedPods[c]
		slices.SortStableFunc(pods, func(a, b queuedPod) int {
			if c := a.pod.created.Compare(b.pod.created.Time); c != 0 {
				return c
			}
			return strings.Compare(string(a.pod.uid), string(b.pod.uid))
		})
		for _, q := range pods {
			runs = appendRun(runs, groupRun{of: q.group, pods: 1})
		}
		for _, g := range tied {
			if g.coming > 0 {
				runs = appendRun(runs, groupRun{of: g, pods: g.coming})
			}
		}
	}
	return runs
}

// hardTaints are the NodePool's taints a pod must tolerate; core tolerates PreferNoSchedule
// taints for a pod that fits nowhere else.
func hardTaints(template *corescheduling.NodeClaimTemplate) scheduling.Taints {
	return slices.DeleteFunc(slices.Clone(template.Spec.Taints), func(t corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectPreferNoSchedule
	})
}

// demand is a NodePool's pending pods and plans as the simulation sees them.
type demand struct {
	plans []plan
	// instanceTypes are the plans' instance types, in the same order.
	instanceTypes cloudprovider.InstanceTypes
	shapes        []*shape
	// starting is the room on the NodePool's starting nodes, in the order core tries them.
	starting []startingRoom
	// queue is the shapes' pods in the order core's scheduling queue takes them.
	queue []run
	// floor is the lowest ceiling allowed (an index into plans), or -1: the cheapest plan holding
	// a pod core could not place before, raised to the plan holding every pod core would place
	// elsewhere if this round's plans did not hold it (podGroup.elsewhere).
	floor int
	// pods counts the pods of the shapes; coming those their workloads have yet to create.
	pods, coming int
	// recent, when not nil, holds the fleets packed for recent decisions (packMemo).
	recent *packMemo
	// budget, when not nil, is the time the decision may take.
	budget *timeBudget
}

// nodePoolDemand describes the NodePool's available plans, cheapest first, with the room a node
// of each has after the DaemonSets that would run on it, the room on its starting nodes, and the
// groups of pods as shapes. A group no plan holds is left out: it stays pending whatever the
// NodePool offers.
func nodePoolDemand(template *corescheduling.NodeClaimTemplate, instanceTypes []*cloudprovider.InstanceType, groups []*podGroup, queue []groupRun, daemons []*corev1.Pod, starting []startingNode) demand {
	type candidate struct {
		it    *cloudprovider.InstanceType
		price float64
	}
	var candidates []candidate
	for _, it := range instanceTypes {
		if it.Requirements.Intersects(template.Requirements) != nil {
			continue
		}
		offerings := it.Offerings.Available().Compatible(template.Requirements)
		if len(offerings) == 0 {
			continue
		}
		candidates = append(candidates, candidate{it: it, price: offerings.Cheapest().Price})
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int {
		switch {
		case a.price < b.price:
			return -1
		case a.price > b.price:
			return 1
		default:
			return strings.Compare(a.it.Name, b.it.Name)
		}
	})

	// Dimensions: the pod count, and whatever the pods and the DaemonSets ask for.
	dims := map[corev1.ResourceName]int{corev1.ResourcePods: 0}
	addDims := func(list corev1.ResourceList) {
		for name := range list {
			if _, ok := dims[name]; !ok {
				dims[name] = len(dims)
			}
		}
	}
	for _, g := range groups {
		addDims(g.shape.requests)
	}
	taints := hardTaints(template)
	overheads := make([]corev1.ResourceList, len(candidates))
	for i, c := range candidates {
		overheads[i] = daemonOverhead(template, taints, c.it, daemons)
		addDims(overheads[i])
	}
	toVector := func(list corev1.ResourceList) vector {
		v := make(vector, len(dims))
		for name, quantity := range list {
			if d, ok := dims[name]; ok {
				v[d] = quantity.MilliValue()
			}
		}
		return v
	}

	d := demand{floor: -1}
	for i, c := range candidates {
		room, overhead := toVector(c.it.Allocatable()), toVector(overheads[i])
		for dim := range room {
			room[dim] -= overhead[dim]
		}
		d.plans = append(d.plans, plan{name: c.it.Name, price: c.price, room: room})
		d.instanceTypes = append(d.instanceTypes, c.it)
	}
	planIndex := make(map[string]int, len(d.plans))
	for i, p := range d.plans {
		planIndex[p.name] = i
	}
	for _, n := range starting {
		// A node on a plan the NodePool no longer offers may still take pods; leaving its room out
		// only sizes for more than core launches.
		i, ok := planIndex[n.plan]
		if !ok {
			continue
		}
		free := toVector(n.free)
		// Core counts the DaemonSets' pods that have yet to start on the node as taking room.
		for dim, amount := range toVector(resources.Subtract(overheads[i], n.daemons)) {
			free[dim] -= max(amount, 0)
		}
		d.starting = append(d.starting, startingRoom{plan: i, free: free, name: n.name})
	}
	empty := make(vector, len(dims))
	shapes := make(map[*podGroup]*shape, len(groups))
	// allowed are the plans pods may run on by their requirements, by the requirements' text:
	// pods of many sizes mostly share their requirements.
	allowed := map[string]bitset{}
	// placeNow is the dearest of the cheapest plans holding pods that core would place elsewhere
	// if this round's plans did not hold them, or -1.
	placeNow := -1
	for _, g := range groups {
		s := &shape{
			key:      g.shape.key,
			requests: toVector(g.shape.requests),
			pods:     g.pods,
			plans:    newBitset(len(d.plans)),
			perNode:  g.shape.perNode,
			group:    g.shape.group,
			cheapest: -1,
			deferred: g.deferred,
			arriving: g.coming > 0,
		}
		requirementsKey := g.shape.levels[g.shape.level].key
		plans, ok := allowed[requirementsKey]
		if !ok {
			plans = newBitset(len(d.plans))
			requirements := scheduling.NewRequirements(template.Requirements.Values()...)
			requirements.Add(g.shape.requirements.Values()...)
			for i, c := range candidates {
				if c.it.Requirements.Intersects(requirements) == nil && c.it.Offerings.Available().HasCompatible(requirements) {
					plans.set(i)
				}
			}
			allowed[requirementsKey] = plans
		}
		copy(s.plans, plans)
		for i := range d.plans {
			if s.plans.has(i) && fits(d.plans[i].room, empty, s.requests) {
				s.cheapest = i
				break
			}
		}
		if s.cheapest < 0 {
			continue
		}
		d.shapes = append(d.shapes, s)
		shapes[g] = s
		d.pods += s.pods
		d.coming += g.coming
		if s.deferred && (d.floor < 0 || s.cheapest < d.floor) {
			d.floor = s.cheapest
		}
		if g.elsewhere {
			placeNow = max(placeNow, s.cheapest)
		}
	}
	d.floor = max(d.floor, placeNow)
	for _, r := range queue {
		if s, ok := shapes[r.of]; ok {
			d.queue = appendRun(d.queue, run{of: s, pods: r.pods})
		}
	}
	return d
}

// satisfyMinValues raises the ceiling (an index into plans) until the plans up to it meet the
// NodePool's minValues, if it sets any: core launches nothing for a NodePool whose offered plans
// cannot meet them.
func (d demand) satisfyMinValues(ceiling int, requirements scheduling.Requirements) int {
	for ceiling < len(d.plans)-1 {
		if _, _, err := d.instanceTypes[:ceiling+1].SatisfiesMinValues(requirements); err == nil {
			break
		}
		ceiling++
		// A ceiling allows every plan at its price.
		for ceiling < len(d.plans)-1 && d.plans[ceiling+1].price == d.plans[ceiling].price {
			ceiling++
		}
	}
	return ceiling
}

// daemonOverhead is what the DaemonSets that would run on a node of the plan in the NodePool
// ask for, as core's scheduler counts it.
func daemonOverhead(template *corescheduling.NodeClaimTemplate, taints scheduling.Taints, it *cloudprovider.InstanceType, daemons []*corev1.Pod) corev1.ResourceList {
	var compatible []*corev1.Pod
	for _, d := range daemons {
		if taints.Tolerates(d.Spec.Tolerations) != nil {
			continue
		}
		requirements := scheduling.NewStrictPodRequirements(d)
		if template.Requirements.IsCompatible(requirements, scheduling.AllowUndefinedWellKnownLabels) && it.Requirements.Intersects(requirements) == nil {
			compatible = append(compatible, d)
		}
	}
	if len(compatible) == 0 {
		return nil
	}
	return resources.RequestsForPods(compatible...)
}

// burstFloor is the price below which no plan is offered while a burst is still arriving: that
// of ceiling, the ceiling of the burst's own pods (decision.burstCeiling), so that every
// NodeClaim of this round launches a plan at least that large. Core launches the cheapest plan
// that holds a NodeClaim, and the last NodeClaim of a round is rarely full; at the ceiling's size
// it keeps room for the pods of the next round, which core places on in-flight NodeClaims first,
// where a smaller plan would leave those pods to start new nodes. Without pods to come, with
// minValues to meet (they need several plans), or when a pod this round places cannot run on a
// plan at the ceiling's price, there is no floor (0).
func (d demand) burstFloor(c ceiling, requirements scheduling.Requirements) float64 {
	if d.coming == 0 || requirements.HasMinValues() {
		return 0
	}
	price := d.plans[c.top].price
	empty := make(vector, len(d.plans[c.top].room))
	for _, s := range d.shapes {
		if d.plans[s.cheapest].price > price {
			continue
		}
		runs := false
		for i := range d.plans {
			if d.plans[i].price == price && c.offers(d.plans, i) && s.plans.has(i) && fits(d.plans[i].room, empty, s.requests) {
				runs = true
				break
			}
		}
		if !runs {
			return 0
		}
	}
	return price
}
