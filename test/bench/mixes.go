package bench

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// costMix is a workload mix the cost scenarios provision: Deployments of identical pods, and
// DaemonSets that run on every node of the mix's NodePool.
type costMix struct {
	name        string
	deployments []costDeployment
	daemonSets  []costDaemonSet
	// gpu mixes ask for GPUs: the README's default NodePool leaves GPU plans to the NodePool of
	// examples/gpu.yaml, whose taint the pods tolerate.
	gpu bool
	// fallback gives the mix's NodePool weight 50 beside a dearer fallback NodePool of weight 1
	// (fallbackRequirements), the two as users keep them: the pods select both by a label both
	// NodePools put on their nodes, so core offers each pod to the default first.
	fallback bool
	// overlay, when set, is a NodeOverlay on the mix's NodePool that changes one plan's price.
	overlay *planOverlay
}

// planOverlay is a NodeOverlay's price change for one plan: a price, or a priceAdjustment when
// it starts with a sign ("-75%"), as core reads them.
type planOverlay struct {
	plan, change string
}

// fallbackRequirements are the fallback NodePool's: premium and dedicated plans, dearer than the
// standard plans of the README's default NodePool.
var fallbackRequirements = []karpv1.NodeSelectorRequirementWithMinValues{
	{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"premium", "dedicated"}},
}

// Weights of the default and fallback NodePools of a fallback mix.
const (
	defaultWeight  = 50
	fallbackWeight = 1
)

// mixNodesLabel is on the nodes of both NodePools of a fallback mix, which its pods select.
// NodePools may not set labels of the provider's domain (karpenter.k8s.linode), which core
// restricts with its subdomains.
const mixNodesLabel = "bench.example.com/mix"

// ownsNodePools tells whether the mix brings NodePool settings of its own (a fallback, an
// overlay): it runs on the cluster, on the README's NodePool only, and not in process.
func (m costMix) ownsNodePools() bool { return m.fallback || m.overlay != nil }

// nodeSelector pins the mix's pods to its NodePool, or for a fallback mix to both of its.
func (m costMix) nodeSelector(nodePool string) map[string]string {
	if m.fallback {
		return map[string]string{mixNodesLabel: nodePool}
	}
	return map[string]string{karpv1.NodePoolLabelKey: nodePool}
}

type costDeployment struct {
	name     string
	replicas int
	requests corev1.ResourceList
	// spread keeps the pods one to a node: a topology spread over hostnames, maxSkew 1.
	spread bool
	// spreadAnyway asks for the same spread with whenUnsatisfiable ScheduleAnyway, a preference.
	spreadAnyway bool
	// softAntiAffinity, when not 0, is the weight (1 to 100) of a preferred anti-affinity of the
	// pods to each other on kubernetes.io/hostname, as Helm charts' "soft" preset writes it.
	softAntiAffinity int32
}

type costDaemonSet struct {
	name     string
	requests corev1.ResourceList
}

func requests(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// costMixes are the eight mixes, sized so that a local cluster runs them side by side.
var costMixes = []costMix{
	{name: "cpu-heavy", deployments: []costDeployment{{name: "batch", replicas: 60, requests: requests("2", "4Gi")}}},
	{name: "memory-heavy", deployments: []costDeployment{{name: "cache", replicas: 16, requests: requests("1", "16Gi")}}},
	{name: "web", deployments: []costDeployment{
		{name: "frontend", replicas: 90, requests: requests("250m", "512Mi")},
		{name: "api", replicas: 40, requests: requests("500m", "1Gi")},
		{name: "worker", replicas: 15, requests: requests("1", "2Gi")},
	}},
	// 110 pods fill a node's pod limit long before its CPU or memory.
	{name: "tiny", deployments: []costDeployment{{name: "sidecar", replicas: 330, requests: requests("5m", "8Mi")}}},
	{name: "spread", deployments: []costDeployment{
		{name: "replicated", replicas: 12, requests: requests("1500m", "2Gi"), spread: true},
		{name: "helper", replicas: 36, requests: requests("250m", "256Mi")},
	}},
	// The big pod needs a 48-vCPU plan; the small ones are cheapest on small plans.
	{name: "big-and-small", deployments: []costDeployment{
		{name: "big", replicas: 1, requests: requests("40", "64Gi")},
		{name: "small", replicas: 60, requests: requests("500m", "1Gi")},
	}},
	{name: "gpu", gpu: true, deployments: []costDeployment{{name: "training", replicas: 8, requests: corev1.ResourceList{
		instancetype.ResourceNVIDIAGPU: resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
	}}}},
	{name: "daemonsets", deployments: []costDeployment{{name: "app", replicas: 100, requests: requests("500m", "1Gi")}},
		daemonSets: []costDaemonSet{{name: "logs", requests: requests("100m", "128Mi")}, {name: "metrics", requests: requests("150m", "256Mi")}}},
}

// constrainedMixes are the pods issue 36 found fleets dearest for: the preferences Helm charts
// come with, pods of a few CPUs beside memory-heavy ones. Only the benchmark's full run and
// -mixes provision them; CI's runs and TestCostEfficiency keep to costMixes.
var constrainedMixes = []costMix{
	// Core's default preference policy (Respect) honours preferences as if required: each of
	// these pods first gets a NodeClaim of its own, and consolidation packs them afterwards.
	{name: "helm-soft", deployments: []costDeployment{
		{name: "ingress", replicas: 12, requests: requests("250m", "512Mi"), softAntiAffinity: 100},
		{name: "api", replicas: 20, requests: requests("500m", "1Gi"), softAntiAffinity: 1},
		{name: "queue", replicas: 10, requests: requests("1", "2Gi"), spreadAnyway: true},
		{name: "plain", replicas: 30, requests: requests("250m", "256Mi")},
	}},
	{name: "cpu-beside-memory", deployments: []costDeployment{
		{name: "analytics", replicas: 24, requests: requests("3", "4Gi")},
		{name: "cache", replicas: 12, requests: requests("500m", "16Gi")},
	}},
	// The default NodePool can take every pod; the biggest need a plan near its largest.
	{name: "weighted-fallback", fallback: true, deployments: []costDeployment{
		{name: "web", replicas: 40, requests: requests("500m", "1Gi")},
		{name: "worker", replicas: 12, requests: requests("2", "4Gi")},
		{name: "big", replicas: 4, requests: requests("20", "40Gi")},
	}},
	// A committed-use discount that makes the 32-vCPU standard plan the cheapest per vCPU and
	// per GiB.
	{name: "overlay-discount", overlay: &planOverlay{plan: "g6-standard-32", change: "-75%"}, deployments: []costDeployment{
		{name: "app", replicas: 40, requests: requests("1", "2Gi")},
		{name: "web", replicas: 30, requests: requests("500m", "1Gi")},
	}},
}

// allCostMixes are every cost mix the benchmark knows, the eight first.
func allCostMixes() []costMix { return slices.Concat(costMixes, constrainedMixes) }

// CostMixNames are the names of the cost mixes, for Config.Mixes and CostEfficiency.
func CostMixNames() []string {
	var names []string
	for _, m := range allCostMixes() {
		names = append(names, m.name)
	}
	return names
}

// selectMixes keeps the mixes of allCostMixes named, in their order; defaults when none is named.
func selectMixes(defaults []costMix, names []string) []costMix {
	if len(names) == 0 {
		return defaults
	}
	return slices.DeleteFunc(allCostMixes(), func(m costMix) bool { return !slices.Contains(names, m.name) })
}

// quickCostMixes are the mixes of the short cost run in CI: three that exercise the mechanism's
// parts (sizes that pack onto mid-sized plans, a pod left to a later round, DaemonSets).
func quickCostMixes() []costMix {
	var mixes []costMix
	for _, m := range costMixes {
		if m.name == "web" || m.name == "big-and-small" || m.name == "daemonsets" {
			mixes = append(mixes, m)
		}
	}
	return mixes
}

// pods is how many pods the mix runs at full size.
func (m costMix) pods() int {
	n := 0
	for _, d := range m.deployments {
		n += d.replicas
	}
	return n
}

// scaled is the mix with each Deployment's replicas divided by divisor, rounded up.
func (m costMix) scaled(divisor int) costMix {
	out := m
	out.deployments = make([]costDeployment, len(m.deployments))
	for i, d := range m.deployments {
		d.replicas = (d.replicas + divisor - 1) / divisor
		out.deployments[i] = d
	}
	return out
}

// describe is e.g. "90× 250m/512Mi, 40× 500m/1Gi; DaemonSets 100m/128Mi, 150m/256Mi".
// spreadsOverHostnames says whether a Deployment of the mix spreads its pods over hostnames.
func (m costMix) spreadsOverHostnames() bool {
	return slices.ContainsFunc(m.deployments, func(d costDeployment) bool { return d.spread })
}

func (m costMix) describe() string {
	var parts []string
	for _, d := range m.deployments {
		part := fmt.Sprintf("%d× %s", d.replicas, planner.FormatRequests(d.requests))
		if d.spread {
			part += " spread over hostnames"
		}
		if d.spreadAnyway {
			part += " spread over hostnames (ScheduleAnyway)"
		}
		if d.softAntiAffinity > 0 {
			part += fmt.Sprintf(" with preferred hostname anti-affinity (weight %d)", d.softAntiAffinity)
		}
		parts = append(parts, part)
	}
	out := strings.Join(parts, ", ")
	if len(m.daemonSets) > 0 {
		var ds []string
		for _, d := range m.daemonSets {
			ds = append(ds, planner.FormatRequests(d.requests))
		}
		out += "; DaemonSets " + strings.Join(ds, " + ")
	}
	return out
}

// appLabel names a Deployment's pods.
const appLabel = "app"

// podSpec is the pod template of a Deployment of the mix, pinned to the NodePool.
func (m costMix) podSpec(d costDeployment, nodePool string) corev1.PodSpec {
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		NodeSelector:                  m.nodeSelector(nodePool),
		Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			// Extended resources such as GPUs must be limited as much as they are requested.
			Resources: corev1.ResourceRequirements{Requests: d.requests, Limits: extendedResources(d.requests)},
		}},
	}
	if m.gpu {
		spec.Tolerations = []corev1.Toleration{{Key: instancetype.ResourceNVIDIAGPU.String(), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	if d.spread || d.spreadAnyway {
		when := corev1.DoNotSchedule
		if d.spreadAnyway {
			when = corev1.ScheduleAnyway
		}
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: when,
			LabelSelector: &metav1.LabelSelector{MatchLabels: m.podLabels(d, nodePool)},
		}}
	}
	if d.softAntiAffinity > 0 {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: d.softAntiAffinity, PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: m.podLabels(d, nodePool)},
			}}},
		}}
	}
	return spec
}

// podLabels are the labels of a Deployment's pods: the Deployment's, and the NodePool's for the
// recorder.
func (m costMix) podLabels(d costDeployment, nodePool string) map[string]string {
	return map[string]string{appLabel: m.name + "-" + d.name, harness.PoolLabel: nodePool}
}

// daemonSetSpec is the pod template of one of the mix's DaemonSets, on the NodePool's nodes only.
func (m costMix) daemonSetSpec(d costDaemonSet, nodePool string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		NodeSelector:                  m.nodeSelector(nodePool),
		Containers:                    []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: d.requests}}},
	}
}
