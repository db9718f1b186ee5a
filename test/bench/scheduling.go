package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	kwokoptions "sigs.k8s.io/karpenter/kwok/options"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/sizing"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	// benchRegion is where the in-process scenarios run: a region with every plan class,
	// GPUs included.
	benchRegion      = "us-ord"
	benchClusterName = "bench"
	nodePoolName     = "default"
	nodeClassName    = "default"
	// solveRounds is how many times each catalogue solves each pod count.
	solveRounds = 3
)

// SchedulingThroughput solves the same diverse pods with Karpenter core's scheduler twice for
// each count, once over the Linode catalogue (read from the emulator through our cloud provider)
// and once over core's kwok catalogue, and reports pods solved per second for both. Only Solve
// is timed: building the scheduler and the topology is set-up the provisioner does once a batch.
func SchedulingThroughput(ctx context.Context, podCounts []int) ([]Row, error) {
	ctx, err := planner.ControllerContext(ctx)
	if err != nil {
		return nil, err
	}
	linode, err := startLinodeCloud(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer linode.close()
	kwokCloud, err := newKwokCloud(ctx)
	if err != nil {
		return nil, err
	}
	kwokTypes, err := kwokCloud.cloudProvider.GetInstanceTypes(ctx, kwokCloud.nodePool)
	if err != nil {
		return nil, fmt.Errorf("listing the kwok instance types: %w", err)
	}

	// The first Solve in a process pays for lazily built state (metrics, caches); a small
	// unmeasured round keeps that out of whichever catalogue would have gone first.
	for _, c := range []*schedulingCloud{linode.schedulingCloud, kwokCloud} {
		if _, err := c.solve(ctx, diversePods(50)); err != nil {
			return nil, fmt.Errorf("warming up: %w", err)
		}
	}

	var rows []Row
	for _, count := range podCounts {
		// Rounds alternate between the catalogues so that a change in the machine's load
		// touches both alike; the median round of each is reported.
		var ourRounds, kwokRounds []solved
		for range solveRounds {
			ours, err := linode.solve(ctx, diversePods(count))
			if err != nil {
				return nil, fmt.Errorf("%d pods over the Linode catalogue: %w", count, err)
			}
			theirs, err := kwokCloud.solve(ctx, diversePods(count))
			if err != nil {
				return nil, fmt.Errorf("%d pods over the kwok catalogue: %w", count, err)
			}
			ourRounds, kwokRounds = append(ourRounds, ours), append(kwokRounds, theirs)
		}
		ours, theirs := median(ourRounds), median(kwokRounds)
		kwokRate := theirs.podsPerSecond()
		rows = append(rows, Row{
			Scenario: "Scheduling throughput",
			Metric:   fmt.Sprintf("%d diverse pods, core's scheduler (Solve)", count),
			Value:    ours.podsPerSecond(),
			Unit:     "pods/s",
			Kwok:     &kwokRate,
			Note: fmt.Sprintf("median of %d Solves each, %d scheduling worker(s) as the controller runs; %s into %d NodeClaims over %d plans in %d zone (the region); kwok: %s into %d NodeClaims over %d instance types in %d zones",
				solveRounds, planner.SchedulingWorkers(ctx), ours.elapsed.Round(time.Millisecond), ours.nodeClaims, len(linode.instanceTypes), zoneCount(linode.instanceTypes),
				theirs.elapsed.Round(time.Millisecond), theirs.nodeClaims, len(kwokTypes), zoneCount(kwokTypes)),
		})
	}
	return rows, nil
}

// schedulingCloud is a cloud provider with the NodePool the scheduler provisions for.
//
// The kube client is controller-runtime's in-memory client rather than a kube-apiserver: the
// controller reads everything the scheduler and the cloud provider read here (pods already in
// topology domains, volumes, the NodeClass) from its informer cache, which is in memory too, and
// with no existing nodes or pods those reads find nothing that changes a decision. An apiserver
// would add set-up time and nothing to the figures, and test/cmd/bench can run these scenarios without
// the Kubernetes binaries.
type schedulingCloud struct {
	kubeClient    client.Client
	cloudProvider cloudprovider.CloudProvider
	nodePool      *karpv1.NodePool
}

// linodeCloud is our cloud provider in LKE mode over a fresh emulator.
type linodeCloud struct {
	*schedulingCloud
	emulator  *test.Emulator
	clusterID int
	// instanceTypes are the plans GetInstanceTypes returns, to price what was launched.
	instanceTypes []*cloudprovider.InstanceType
	// sizing offers every plan until it is given a cluster state to track.
	sizing *sizing.Policy
}

// startLinodeCloud starts an emulator holding an LKE cluster in benchRegion and builds the
// cloud provider the controller would build for it. setup runs before the catalogue is read,
// e.g. to give the region GPU capacity.
func startLinodeCloud(ctx context.Context, setup func(*emulator.Emulator)) (*linodeCloud, error) {
	e, err := test.StartEmulator()
	if err != nil {
		return nil, fmt.Errorf("starting the Linode API emulator: %w", err)
	}
	cloud, err := newLinodeCloud(ctx, e, setup)
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return cloud, nil
}

func newLinodeCloud(ctx context.Context, e *test.Emulator, setup func(*emulator.Emulator)) (*linodeCloud, error) {
	if setup != nil {
		setup(e.Emulator)
	}
	// Ready as the NodeClass controller, not running here, would find it against the emulator.
	nodeClass := test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: nodeClassName}})
	// The sizing policy lists pending pods by node name, through the index the controller's
	// manager keeps.
	kubeClient := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(nodeClass).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).Build()
	lkeCloud, err := test.NewLKE(ctx, e, kubeClient, test.WithCluster(benchClusterName, lke.TierStandard, benchRegion), test.WithNodeProviderOptions(lke.WithLaunchTimeout(lke.DefaultLaunchTimeout)))
	if err != nil {
		return nil, err
	}
	nodePool := benchNodePool(test.NodeClassRef(nodeClassName))
	cloud := &linodeCloud{
		schedulingCloud: &schedulingCloud{kubeClient: kubeClient, cloudProvider: lkeCloud.CloudProvider, nodePool: nodePool},
		emulator:        e,
		clusterID:       lkeCloud.Cluster.ID,
		sizing:          lkeCloud.Sizing,
	}
	if cloud.instanceTypes, err = cloud.cloudProvider.GetInstanceTypes(ctx, nodePool); err != nil {
		return nil, err
	}
	return cloud, nil
}

func (c *linodeCloud) close() { _ = c.emulator.Close() }

// cloud is what planner.Provision runs the provisioning rounds on.
func (c *linodeCloud) cloud() planner.Cloud {
	return planner.Cloud{KubeClient: c.kubeClient, CloudProvider: c.cloudProvider, Sizing: c.sizing}
}

// newKwokCloud is core's kwok cloud provider over its built-in catalogue.
func newKwokCloud(ctx context.Context) (*schedulingCloud, error) {
	// The catalogue reads its optional file path from kwok's settings; none means the built-in one.
	instanceTypes, err := kwok.ConstructInstanceTypes(kwokoptions.ToContext(ctx, &kwokoptions.Options{}))
	if err != nil {
		return nil, fmt.Errorf("building kwok's instance types: %w", err)
	}
	kubeClient := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	return &schedulingCloud{
		kubeClient:    kubeClient,
		cloudProvider: kwok.NewCloudProvider(ctx, kubeClient, instanceTypes),
		nodePool:      benchNodePool(&karpv1.NodeClassReference{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: nodeClassName}),
	}, nil
}

// benchNodePool is a NodePool without limits for Linux nodes: kwok's catalogue also has Windows
// instance types, where these Linux pods do not belong; all of ours are Linux.
func benchNodePool(nodeClassRef *karpv1.NodeClassReference) *karpv1.NodePool {
	return &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: nodePoolName, UID: types.UID(nodePoolName)},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: nodeClassRef,
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Linux)}},
			},
		}}},
	}
}

// zoneCount is how many zones the instance types' offerings span.
func zoneCount(instanceTypes []*cloudprovider.InstanceType) int {
	zones := map[string]bool{}
	for _, it := range instanceTypes {
		for _, offering := range it.Offerings {
			zones[offering.Zone()] = true
		}
	}
	return len(zones)
}

// solved is one Solve's outcome.
type solved struct {
	results    scheduling.Results
	pods       int
	nodeClaims int
	elapsed    time.Duration
}

func (s solved) podsPerSecond() float64 { return float64(s.pods) / s.elapsed.Seconds() }

// median is the round with the median Solve time.
func median(rounds []solved) solved {
	sorted := slices.SortedFunc(slices.Values(rounds), func(a, b solved) int { return cmp.Compare(a.elapsed, b.elapsed) })
	return sorted[len(sorted)/2]
}

// solve builds a scheduler for the pods as the provisioner does (same options, no existing
// nodes, no daemonsets) and times Solve. Every pod must land on a new NodeClaim.
func (c *schedulingCloud) solve(ctx context.Context, pods []*corev1.Pod) (solved, error) {
	instanceTypes, err := c.cloudProvider.GetInstanceTypes(ctx, c.nodePool)
	if err != nil {
		return solved{}, err
	}
	nodePools := []*karpv1.NodePool{c.nodePool}
	byNodePool := map[string][]*cloudprovider.InstanceType{c.nodePool.Name: instanceTypes}
	opts := planner.SchedulerOptions(ctx)
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, c.kubeClient, c.cloudProvider)
	topology, err := scheduling.NewTopology(ctx, c.kubeClient, cluster, nil, nodePools, byNodePool, pods, opts...)
	if err != nil {
		return solved{}, fmt.Errorf("tracking topology: %w", err)
	}
	scheduler := scheduling.NewScheduler(ctx, c.kubeClient, nodePools, cluster, nil, topology, byNodePool, nil, planner.DiscardEvents(), clk, nil, nil, opts...)

	solveCtx, cancel := context.WithTimeout(ctx, planner.SolveTimeout)
	defer cancel()
	// Garbage left by building the pods and the scheduler is collected now, not during Solve.
	runtime.GC()
	start := time.Now()
	results, err := scheduler.Solve(solveCtx, pods)
	elapsed := time.Since(start)
	if err != nil {
		return solved{}, fmt.Errorf("solving %d pods: %w", len(pods), err)
	}
	if len(results.PodErrors) > 0 {
		return solved{}, fmt.Errorf("%d of %d pods could not be placed: %w", len(results.PodErrors), len(pods), planner.FirstPodErrors(results.PodErrors, 3))
	}
	placed := 0
	for _, nodeClaim := range results.NewNodeClaims {
		placed += len(nodeClaim.Pods)
	}
	if placed != len(pods) {
		return solved{}, fmt.Errorf("%d of %d pods placed on new NodeClaims", placed, len(pods))
	}
	return solved{results: results, pods: len(pods), nodeClaims: len(results.NewNodeClaims), elapsed: elapsed}, nil
}

// diversePods are count pending pods in six equal kinds, after core's own scheduling benchmark,
// with random CPU and memory requests from a fixed seed, so that every call with the same count
// returns the same pods:
//   - no constraints;
//   - constrained to nodes: alternately a nodeSelector on amd64 and a required node affinity
//     for on-demand capacity (both catalogues have both; an instance-class selector would leave
//     kwok's catalogue, which has no classes, nothing to pick);
//   - a zonal and a hostname topology spread (max skew 1, DoNotSchedule) on random labels;
//   - zonal self-affinity on random labels;
//   - hostname anti-affinity among all the pods of the kind: one per node.
//
// The rest of count after dividing by six is unconstrained.
func diversePods(count int) []*corev1.Pod {
	//nolint:gosec // Reproducible requests, not security.
	r := rand.New(rand.NewSource(42))
	kinds := []func(r *rand.Rand, i int) coretest.PodOptions{
		func(*rand.Rand, int) coretest.PodOptions { return coretest.PodOptions{} },
		nodeConstrainedPod,
		spreadPod(corev1.LabelTopologyZone),
		spreadPod(corev1.LabelHostname),
		zonalAffinityPod,
		antiAffinityPod,
	}
	pods := make([]*corev1.Pod, 0, count)
	perKind := count / len(kinds)
	for i := range count {
		kind := kinds[0]
		if i < perKind*len(kinds) {
			kind = kinds[i/perKind]
		}
		opts := kind(r, i)
		opts.Name = fmt.Sprintf("pod-%06d", i)
		// The scheduler caches per-pod data by UID.
		opts.UID = types.UID(opts.Name)
		if opts.Labels == nil {
			opts.Labels = randomLabel(r, "my-label")
		}
		opts.ResourceRequirements = corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", pick(r, 100, 250, 500, 1000, 1500))),
			corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", pick(r, 100, 256, 512, 1024, 2048, 4096))),
		}}
		pods = append(pods, coretest.UnschedulablePod(opts))
	}
	return pods
}

func nodeConstrainedPod(_ *rand.Rand, i int) coretest.PodOptions {
	if i%2 == 0 {
		return coretest.PodOptions{NodeSelector: map[string]string{corev1.LabelArchStable: karpv1.ArchitectureAmd64}}
	}
	return coretest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{
		{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
	}}
}

func spreadPod(topologyKey string) func(*rand.Rand, int) coretest.PodOptions {
	return func(r *rand.Rand, _ int) coretest.PodOptions {
		return coretest.PodOptions{
			ObjectMeta: metav1.ObjectMeta{Labels: randomLabel(r, "my-label")},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew:           1,
				TopologyKey:       topologyKey,
				WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector:     &metav1.LabelSelector{MatchLabels: randomLabel(r, "my-label")},
			}},
		}
	}
}

// zonalAffinityPod wants the zone of pods like itself: affinity to pods of another label could
// name a domain no pod ever opens, and then nothing would schedule.
func zonalAffinityPod(r *rand.Rand, _ int) coretest.PodOptions {
	labels := randomLabel(r, "my-affinity")
	return coretest.PodOptions{
		ObjectMeta:      metav1.ObjectMeta{Labels: labels},
		PodRequirements: []corev1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelTopologyZone}},
	}
}

func antiAffinityPod(*rand.Rand, int) coretest.PodOptions {
	labels := map[string]string{"app": "one-per-node"}
	return coretest.PodOptions{
		ObjectMeta:          metav1.ObjectMeta{Labels: labels},
		PodAntiRequirements: []corev1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}},
	}
}

func randomLabel(r *rand.Rand, key string) map[string]string {
	return map[string]string{key: pick(r, "a", "b", "c", "d", "e", "f", "g")}
}

func pick[T any](r *rand.Rand, values ...T) T { return values[r.Intn(len(values))] }
