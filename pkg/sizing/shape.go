package sizing

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/karpenter/pkg/scheduling"
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
