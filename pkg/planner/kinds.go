package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// HostnameSpreadLimit is the most pods of the pod's kind that core's scheduler places on one
// node when the pod must spread over hostnames: the constraint's maxSkew, 0 without one. Core
// counts a node it could still create as a hostname domain holding none of them (domainMinCount
// is 0 for hostnames, in v1.15's topologygroup.go), so a node takes another such pod only while
// it holds fewer than maxSkew, when provisioning and in consolidation's simulations alike.
// Kubernetes allows more wherever every node holds as many, so the lower bound proper ignores
// this limit; the yardsticks under core's placement count it.
func HostnameSpreadLimit(pod *corev1.Pod) int64 {
	most := int64(0)
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.TopologyKey != corev1.LabelHostname || c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		if selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector); err != nil || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if most == 0 || int64(c.MaxSkew) < most {
			most = int64(c.MaxSkew)
		}
	}
	return most
}

// WithoutPerNodeLimits are the kinds with room the only limit on how many share a node.
func WithoutPerNodeLimits(kinds []PodKind) []PodKind {
	out := slices.Clone(kinds)
	for i := range out {
		out[i].PerNodeMost = 0
	}
	return out
}

// FormatRequests is e.g. "250m CPU, 512Mi" or "1 GPU, 4 CPU, 16Gi".
func FormatRequests(requests corev1.ResourceList) string {
	var parts []string
	if gpus, ok := requests["nvidia.com/gpu"]; ok {
		parts = append(parts, gpus.String()+" GPU")
	}
	parts = append(parts, requests.Cpu().String()+" CPU", requests.Memory().String())
	return strings.Join(parts, ", ")
}

// FormatPlans is e.g. "3× g6-dedicated-48, 1× g6-standard-6", most used first.
func FormatPlans(plans map[string]int) string {
	names := slices.SortedFunc(maps.Keys(plans), func(a, b string) int {
		if plans[a] != plans[b] {
			return plans[b] - plans[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%d× %s", plans[name], name))
	}
	return strings.Join(parts, ", ")
}
