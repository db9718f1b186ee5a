package sizing

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

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

// template is the NodePool's NodeClaim template as core's scheduler builds it, reused while the
// NodePool's spec is unchanged: building it hashes the NodePool.
func (p *Policy) template(nodePool *karpv1.NodePool, previous *memo) *corescheduling.NodeClaimTemplate {
	if previous != nil && previous.uid == nodePool.UID && previous.generation == nodePool.Generation && nodePool.Generation != 0 {
		return previous.template
	}
	return corescheduling.NewNodeClaimTemplate(nodePool)
}

// rankedNodePools are the cluster's NodePools core provisions for, in the order its scheduler
// tries them (highest weight first), with the asking NodePool's index among them and a key that
// changes when any of them changes. Every NodePool is taken to offer the asking NodePool's
// catalogue: the provider lists the same plans for every NodeClass of a region.
func (p *Policy) rankedNodePools(ctx context.Context, nodePool *karpv1.NodePool, template *corescheduling.NodeClaimTemplate) (*rankedNodePools, int, string, error) {
	var list karpv1.NodePoolList
	if err := p.kubeClient.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, 0, "", fmt.Errorf("listing NodePools: %w", err)
	}
	nodePools := []*karpv1.NodePool{nodePool}
	for i := range list.Items {
		np := &list.Items[i]
		if np.Name != nodePool.Name && np.Spec.Replicas == nil && np.DeletionTimestamp.IsZero() && np.Spec.Template.Spec.NodeClassRef != nil {
			nodePools = append(nodePools, np)
		}
	}
	nodepoolutils.OrderByWeight(nodePools)
	ranked := &rankedNodePools{rooms: map[[2]int]corev1.ResourceList{}, placements: map[string]placement{}}
	keys := make([]string, 0, len(nodePools))
	self := 0
	for i, np := range nodePools {
		t := template
		if np.Name != nodePool.Name {
			t = p.otherTemplate(np)
		} else {
			self = i
		}
		ranked.pools = append(ranked.pools, rankedNodePool{name: np.Name, nodePool: np, template: t, taints: hardTaints(t)})
		keys = append(keys, fmt.Sprintf("%s/%s/%d", np.Name, np.UID, np.Generation))
	}
	return ranked, self, strings.Join(keys, ","), nil
}

// otherTemplate is another NodePool's NodeClaim template, reused while its spec is unchanged.
func (p *Policy) otherTemplate(nodePool *karpv1.NodePool) *corescheduling.NodeClaimTemplate {
	if cached, ok := p.templates[nodePool.Name]; ok && cached.uid == nodePool.UID && cached.generation == nodePool.Generation && nodePool.Generation != 0 {
		return cached.template
	}
	t := corescheduling.NewNodeClaimTemplate(nodePool)
	p.templates[nodePool.Name] = cachedTemplate{uid: nodePool.UID, generation: nodePool.Generation, template: t}
	return t
}

type cachedTemplate struct {
	uid        types.UID
	generation int64
	template   *corescheduling.NodeClaimTemplate
}
