package sizing_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/sizing"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// The differential check: the sizing policy chooses the plans it offers each NodePool by
// simulating the fleet core's scheduler launches from them. Over random mixes of the constraints
// real workloads carry, across weighted NodePools, the fleet the policy expects is compared with
// the fleet core's own scheduler (Solve, in process) launches from the plans offered.

// differentialMix is a mix of Deployments with scheduling constraints, DaemonSets, and the
// weighted NodePools they are provisioned for.
type differentialMix struct {
	name        string
	nodePools   []differentialNodePool
	deployments []constrainedDeployment
	daemonSets  []differentialDaemonSet
}

type differentialNodePool struct {
	name         string
	weight       int32
	requirements []karpv1.NodeSelectorRequirementWithMinValues
}

// constrainedDeployment is a Deployment of identical pods and the constraints they carry.
type constrainedDeployment struct {
	name     string
	replicas int
	requests corev1.ResourceList
	// antiAffinityWeight is the weight of a preferred anti-affinity of the pods to each other over
	// hostnames, 0 for none.
	antiAffinityWeight int32
	// spread is a topology spread of the pods over spreadKey, maxSkew 1, when set.
	spread    corev1.UnsatisfiableConstraintAction
	spreadKey string
	// preferred is a preferred node affinity term, weight 50, when not empty.
	preferred []corev1.NodeSelectorRequirement
	// terms are the OR'd terms of a required node affinity, when not empty.
	terms [][]corev1.NodeSelectorRequirement
}

func classIn(classes ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: classes}
}

func cpusAbove(cpus int) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{fmt.Sprint(cpus)}}
}

func cpusBelow(cpus int) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{fmt.Sprint(cpus)}}
}

func withoutMinValues(requirements ...corev1.NodeSelectorRequirement) []karpv1.NodeSelectorRequirementWithMinValues {
	out := make([]karpv1.NodeSelectorRequirementWithMinValues, len(requirements))
	for i, r := range requirements {
		out[i] = karpv1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values}
	}
	return out
}

// differentialMixes are count mixes drawn from seed, the same for the same seed. Each has the
// README's NodePool (standard, dedicated and high-memory plans) at weight 50 beside a dearer
// fallback at weight 1 (premium and dedicated plans), and in one mix of three a NodePool of small
// standard plans at weight 100 that the bigger pods fall through; one to four Deployments of 1
// to 40 pods, each pod's constraints drawn independently: preferred anti-affinity over hostnames
// (weight 1 or 100), a spread over hostnames or the zone (DoNotSchedule or ScheduleAnyway),
// preferred node affinity, OR'd required node selector terms; and in one mix of three one or two
// DaemonSets.
func differentialMixes(seed int64, count int) []differentialMix {
	//nolint:gosec // Reproducible mixes, not security.
	r := rand.New(rand.NewSource(seed))
	milliCPUs := []int{100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000}
	mibPerCPU := []int{512, 1024, 2048, 4096, 8192, 16384}
	preferences := [][]corev1.NodeSelectorRequirement{
		{classIn("dedicated")},
		{classIn("highmem")},
		{cpusAbove(8)},
	}
	termSets := [][][]corev1.NodeSelectorRequirement{
		{{classIn("dedicated")}, {classIn("standard")}},
		{{classIn("highmem")}, {classIn("standard", "dedicated")}},
		{{cpusAbove(16)}, {classIn("premium")}},
		{{classIn("premium")}, {classIn("dedicated")}, {classIn("standard")}},
	}
	spreads := []struct {
		key  string
		when corev1.UnsatisfiableConstraintAction
	}{
		{corev1.LabelHostname, corev1.DoNotSchedule},
		{corev1.LabelHostname, corev1.ScheduleAnyway},
		{corev1.LabelTopologyZone, corev1.ScheduleAnyway},
		{corev1.LabelTopologyZone, corev1.DoNotSchedule},
	}
	mixes := make([]differentialMix, count)
	for i := range mixes {
		m := &mixes[i]
		m.name = fmt.Sprintf("differential-%d-%d", seed, i)
		m.nodePools = []differentialNodePool{
			{name: "default", weight: 50, requirements: withoutMinValues(classIn("standard", "dedicated", "highmem"))},
			{name: "fallback", weight: 1, requirements: withoutMinValues(classIn("premium", "dedicated"))},
		}
		if r.Intn(3) == 0 {
			m.nodePools = append(m.nodePools, differentialNodePool{name: "small", weight: 100, requirements: withoutMinValues(classIn("standard"), cpusBelow(5))})
		}
		for d := range 1 + r.Intn(4) {
			milliCPU := milliCPUs[r.Intn(len(milliCPUs))]
			deployment := constrainedDeployment{
				name:     fmt.Sprintf("d%d", d),
				replicas: 1 + r.Intn(40),
				requests: requests(fmt.Sprintf("%dm", milliCPU), fmt.Sprintf("%dMi", max(64, milliCPU*mibPerCPU[r.Intn(len(mibPerCPU))]/1000))),
			}
			if r.Intn(4) == 0 {
				deployment.antiAffinityWeight = []int32{1, 100}[r.Intn(2)]
			}
			if r.Intn(4) == 0 {
				s := spreads[r.Intn(len(spreads))]
				deployment.spreadKey, deployment.spread = s.key, s.when
			}
			if r.Intn(5) == 0 {
				deployment.preferred = preferences[r.Intn(len(preferences))]
			}
			if r.Intn(5) == 0 {
				deployment.terms = termSets[r.Intn(len(termSets))]
			}
			m.deployments = append(m.deployments, deployment)
		}
		if r.Intn(3) == 0 {
			m.daemonSets = append(m.daemonSets, differentialDaemonSet{name: "logs", requests: requests("100m", "128Mi")})
			if r.Intn(2) == 0 {
				m.daemonSets = append(m.daemonSets, differentialDaemonSet{name: "metrics", requests: requests("200m", "512Mi")})
			}
		}
	}
	return mixes
}

// describe is e.g. "NodePools default/50, fallback/1; 12× 500m CPU, 1Gi (anti-affinity 100,
// hostname ScheduleAnyway); DaemonSets 100m CPU, 128Mi".
func (m differentialMix) describe() string {
	var pools []string
	for _, p := range m.nodePools {
		pools = append(pools, fmt.Sprintf("%s/%d", p.name, p.weight))
	}
	var parts []string
	for _, d := range m.deployments {
		var constraints []string
		if d.antiAffinityWeight > 0 {
			constraints = append(constraints, fmt.Sprintf("preferred anti-affinity %d", d.antiAffinityWeight))
		}
		if d.spread != "" {
			constraints = append(constraints, fmt.Sprintf("%s spread %s", d.spreadKey, d.spread))
		}
		if len(d.preferred) > 0 {
			constraints = append(constraints, "prefers "+formatTerm(d.preferred))
		}
		if len(d.terms) > 0 {
			var terms []string
			for _, t := range d.terms {
				terms = append(terms, formatTerm(t))
			}
			constraints = append(constraints, "requires "+strings.Join(terms, " or "))
		}
		part := fmt.Sprintf("%d× %s", d.replicas, planner.FormatRequests(d.requests))
		if len(constraints) > 0 {
			part += " (" + strings.Join(constraints, ", ") + ")"
		}
		parts = append(parts, part)
	}
	out := "NodePools " + strings.Join(pools, ", ") + "; " + strings.Join(parts, ", ")
	if len(m.daemonSets) > 0 {
		var ds []string
		for _, d := range m.daemonSets {
			ds = append(ds, planner.FormatRequests(d.requests))
		}
		out += "; DaemonSets " + strings.Join(ds, " + ")
	}
	return out
}

func formatTerm(term []corev1.NodeSelectorRequirement) string {
	var parts []string
	for _, r := range term {
		key := r.Key[strings.LastIndex(r.Key, "/")+1:]
		parts = append(parts, fmt.Sprintf("%s %s %s", key, r.Operator, strings.Join(r.Values, ",")))
	}
	return strings.Join(parts, " and ")
}

// podSpec is the pod template of one of the mix's Deployments.
func (d constrainedDeployment) podSpec(podLabels map[string]string) corev1.PodSpec {
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers:                    []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: d.requests}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: podLabels}
	if d.spread != "" {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: d.spreadKey, WhenUnsatisfiable: d.spread, LabelSelector: selector}}
	}
	if d.antiAffinityWeight == 0 && len(d.preferred) == 0 && len(d.terms) == 0 {
		return spec
	}
	spec.Affinity = &corev1.Affinity{}
	if d.antiAffinityWeight > 0 {
		spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: d.antiAffinityWeight, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: selector},
		}}}
	}
	if len(d.preferred) > 0 || len(d.terms) > 0 {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	if len(d.preferred) > 0 {
		spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: d.preferred}}}
	}
	if len(d.terms) > 0 {
		selectorTerms := make([]corev1.NodeSelectorTerm, len(d.terms))
		for i, t := range d.terms {
			selectorTerms[i] = corev1.NodeSelectorTerm{MatchExpressions: t}
		}
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: selectorTerms}
	}
	return spec
}

// differentialFleet is what the policy expected of a mix's first round and what core launched
// over every round, by NodePool.
type differentialFleet struct {
	expected, launched float64
	// expectedBy and launchedBy are by NodePool; plans the plans launched, by NodePool.
	expectedBy, launchedBy map[string]float64
	plans                  map[string]map[string]int
	rounds                 int
}

func (f differentialFleet) agrees() bool {
	return f.expected-f.launched < 0.005 && f.launched-f.expected < 0.005
}

// String is e.g. "default $0.864 expected, $0.864 on 1× g6-dedicated-16; fallback ...".
func (f differentialFleet) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(f.expectedBy)) {
		parts = append(parts, fmt.Sprintf("%s: expected $%.3f, launched $%.3f on %s", name, f.expectedBy[name], f.launchedBy[name], planner.FormatPlans(f.plans[name])))
	}
	return fmt.Sprintf("%d round(s); %s", f.rounds, strings.Join(parts, "; "))
}

// provisionDifferential provisions the mix in process under the preference policy: each round
// the policy sizes every NodePool's plans and core's scheduler places the pending pods over the
// NodePools in weight order, as the provisioner does, until every pod is placed. The expected
// fleet is the policy's for the first round, which covers the pods it leaves to later rounds.
func provisionDifferential(ctx context.Context, mix differentialMix, preferences coreoptions.PreferencePolicy) (differentialFleet, error) {
	settings := *coreoptions.FromContext(ctx)
	settings.PreferencePolicy = preferences
	ctx = coreoptions.ToContext(ctx, &settings)
	linode, err := startDifferentialCloud(ctx)
	if err != nil {
		return differentialFleet{}, err
	}
	defer linode.close()
	// The policy's gauges are by NodePool name and outlive the mix: each mix names its own.
	prefix := fmt.Sprintf("%s-%s-", mix.name, strings.ToLower(string(preferences)))
	var nodePools []*karpv1.NodePool
	for _, p := range mix.nodePools {
		nodePool := linode.nodePool.DeepCopy()
		nodePool.Name, nodePool.UID = prefix+p.name, types.UID(prefix+p.name)
		nodePool.Spec.Weight = ptr.To(p.weight)
		nodePool.Spec.Template.Spec.Requirements = p.requirements
		if err := linode.kubeClient.Create(ctx, nodePool); err != nil {
			return differentialFleet{}, err
		}
		nodePools = append(nodePools, nodePool)
	}
	pods, daemons, err := createDifferentialMix(ctx, linode, mix)
	if err != nil {
		return differentialFleet{}, err
	}
	prices := map[string]float64{}
	for _, it := range linode.instanceTypes {
		if offering := it.Offerings.Available().Cheapest(); offering != nil {
			prices[it.Name] = offering.Price
		}
	}

	fleet := differentialFleet{expectedBy: map[string]float64{}, launchedBy: map[string]float64{}, plans: map[string]map[string]int{}}
	provisioned, err := planner.Provision(ctx, linode.cloud(), nodePools, pods, daemons, planner.ProvisionOptions{
		NodeClaimName: func(round, i int) string { return fmt.Sprintf("%s%d-%04d", prefix, round, i) },
		AfterSolve: func(round int) error {
			if round > 1 {
				return nil
			}
			for _, p := range nodePools {
				expected, _, err := test.NodePoolMetric("karpenter_linode_sizing_expected_fleet_price", p.Name)
				if err != nil {
					return err
				}
				fleet.expectedBy[strings.TrimPrefix(p.Name, prefix)] = expected
				fleet.expected += expected
			}
			return nil
		},
	})
	if err != nil {
		return differentialFleet{}, err
	}
	if len(provisioned.Unplaced) > 0 {
		return differentialFleet{}, fmt.Errorf("round %d placed none of %d pending pods: %w", provisioned.Rounds, len(provisioned.Unplaced), planner.FirstPodErrors(provisioned.Unplaced, 3))
	}
	fleet.rounds = provisioned.Rounds
	for _, launched := range provisioned.Launched {
		pool := strings.TrimPrefix(launched.NodePool, prefix)
		fleet.launched += prices[launched.Plan]
		fleet.launchedBy[pool] += prices[launched.Plan]
		if fleet.plans[pool] == nil {
			fleet.plans[pool] = map[string]int{}
		}
		fleet.plans[pool][launched.Plan]++
	}
	return fleet, nil
}

// createDifferentialMix creates the mix's pods, pending, and its DaemonSets, which run on every
// node, and returns the pods and the pods the DaemonSets would run on each node.
func createDifferentialMix(ctx context.Context, linode *differentialCloud, mix differentialMix) ([]*corev1.Pod, []*corev1.Pod, error) {
	var pods []*corev1.Pod
	for _, d := range mix.deployments {
		podLabels := map[string]string{"app": mix.name + "-" + d.name}
		spec := d.podSpec(podLabels)
		for i := range d.replicas {
			name := fmt.Sprintf("%s-%s-%04d", mix.name, d.name, i)
			pod := coretest.UnschedulablePod(coretest.PodOptions{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: differentialNamespace, UID: types.UID(name), Labels: podLabels}})
			pod.Spec = *spec.DeepCopy()
			if err := linode.kubeClient.Create(ctx, pod); err != nil {
				return nil, nil, err
			}
			pods = append(pods, pod)
		}
	}
	var daemons []*corev1.Pod
	for _, d := range mix.daemonSets {
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: mix.name + "-" + d.name, Namespace: differentialNamespace, UID: types.UID(mix.name + "-" + d.name)},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers:                    []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: d.requests}}},
			}}},
		}
		if err := linode.kubeClient.Create(ctx, ds); err != nil {
			return nil, nil, err
		}
		daemons = append(daemons, daemonset.PodForDaemonSet(ds))
	}
	return pods, daemons, nil
}

// differentialNamespace holds the mixes' pods and DaemonSets.
const differentialNamespace = "default"

// differentialCloud is our cloud provider in LKE mode over a fresh emulator, with an in-memory
// kube client: core's scheduler and the policy read nothing a kube-apiserver would add here.
type differentialCloud struct {
	emulator      *test.Emulator
	kubeClient    client.Client
	cloudProvider corecloudprovider.CloudProvider
	sizing        *sizing.Policy
	nodePool      *karpv1.NodePool
	// instanceTypes are the plans GetInstanceTypes returns, to price what was launched.
	instanceTypes []*corecloudprovider.InstanceType
}

// startDifferentialCloud starts an emulator holding an LKE cluster in us-ord and builds the
// cloud provider the controller would build for it.
func startDifferentialCloud(ctx context.Context) (*differentialCloud, error) {
	e, err := test.StartEmulator()
	if err != nil {
		return nil, fmt.Errorf("starting the Linode API emulator: %w", err)
	}
	nodeClass := test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	// The sizing policy lists pending pods by node name, through the index the controller's
	// manager keeps.
	kubeClient := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(nodeClass).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).Build()
	lkeCloud, err := test.NewLKE(ctx, e, kubeClient, test.WithCluster("differential", lke.TierStandard, "us-ord"),
		test.WithNodeProviderOptions(lke.WithLaunchTimeout(lke.DefaultLaunchTimeout)))
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	c := &differentialCloud{
		emulator: e, kubeClient: kubeClient, cloudProvider: lkeCloud.CloudProvider, sizing: lkeCloud.Sizing,
		nodePool: &karpv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "default"},
			Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
				NodeClassRef: test.NodeClassRef("default"),
				Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
					{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Linux)}},
				},
			}}},
		},
	}
	if c.instanceTypes, err = c.cloudProvider.GetInstanceTypes(ctx, c.nodePool); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return c, nil
}

func (c *differentialCloud) close() { _ = c.emulator.Close() }

// cloud is what planner.Provision runs the provisioning rounds on.
func (c *differentialCloud) cloud() planner.Cloud {
	return planner.Cloud{KubeClient: c.kubeClient, CloudProvider: c.cloudProvider, Sizing: c.sizing}
}

// differentialDaemonSet is a DaemonSet of a mix: its pods run on every node.
type differentialDaemonSet struct {
	name     string
	requests corev1.ResourceList
}

func requests(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}
