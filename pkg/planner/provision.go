package planner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/linode/karpenter-provider-linode/pkg/sizing"
)

// SolveTimeout is the provisioner's own bound on one Solve.
const SolveTimeout = time.Minute

// Cloud is what provisioning rounds run on: the kube client that core's scheduler, the sizing
// policy and the cloud provider read (it holds the pending pods, the DaemonSets, the NodePools and
// NodeClasses, and gets the NodeClaims launched), the cloud provider, and its sizing policy.
type Cloud struct {
	KubeClient    client.Client
	CloudProvider cloudprovider.CloudProvider
	Sizing        *sizing.Policy
}

// Launched is a node a provisioning round launched.
type Launched struct {
	NodeClaim *karpv1.NodeClaim
	NodePool  string
	// Plan is the plan the cloud provider launched.
	Plan string
	// Pods are the pods core's scheduler placed on it.
	Pods  []*corev1.Pod
	Round int
}

// Provisioning is what the rounds launched, how many rounds there were, and the pods no round
// could place.
type Provisioning struct {
	Launched []Launched
	Rounds   int
	// Unplaced are the pods the last round placed nowhere, with core's reason; empty when every
	// pod was placed.
	Unplaced map[*corev1.Pod]error
}

// ProvisionOptions name the NodeClaims and let a caller look at each round.
type ProvisionOptions struct {
	// NodeClaimName names the i-th NodeClaim of a round, which must be unique in the kube client.
	NodeClaimName func(round, i int) string
	// AfterSolve, when set, runs after each round's Solve, before its NodeClaims launch: the
	// sizing policy's metrics then describe what it offered that round.
	AfterSolve func(round int) error
}

// Provision provisions the pending pods as the controller does, in rounds until a round places
// none: each round the sizing policy sizes every NodePool's plans and core's scheduler places the
// pending pods over the NodePools in weight order; the cloud provider launches each NodeClaim,
// core's cluster state records it and the pods placed on it, and the pods core could not place
// yet go to the next round. The pods placed on NodeClaims of earlier rounds are on nodes of their
// own; the rounds see no other node, but what earlier rounds launched counts against each
// NodePool's limits, as core counts the nodes a NodePool has.
func Provision(ctx context.Context, cloud Cloud, nodePools []*karpv1.NodePool, pods, daemons []*corev1.Pod, opts ProvisionOptions) (Provisioning, error) {
	nodePools = slices.Clone(nodePools)
	nodepoolutils.OrderByWeight(nodePools)
	cluster := state.NewCluster(clock.RealClock{}, cloud.KubeClient, cloud.CloudProvider)
	if cloud.Sizing != nil {
		cloud.Sizing.Track(cluster)
	}
	var out Provisioning
	launchedCapacity := map[string]corev1.ResourceList{}
	for pending := pods; len(pending) > 0; {
		out.Rounds++
		results, err := SolveRound(ctx, cloud.KubeClient, cloud.CloudProvider, cluster, withinLimits(nodePools, launchedCapacity), pending, daemons)
		if err != nil {
			return Provisioning{}, err
		}
		if opts.AfterSolve != nil {
			if err := opts.AfterSolve(out.Rounds); err != nil {
				return Provisioning{}, err
			}
		}
		if len(results.NewNodeClaims) == 0 {
			out.Unplaced = results.PodErrors
			return out, nil
		}
		for i, planned := range results.NewNodeClaims {
			nodeClaim := planned.ToNodeClaim()
			nodeClaim.Name = opts.NodeClaimName(out.Rounds, i)
			launched, err := cloud.CloudProvider.Create(ctx, nodeClaim)
			if err != nil {
				return Provisioning{}, fmt.Errorf("launching NodeClaim %d of %d: %w", i+1, len(results.NewNodeClaims), err)
			}
			// As the provisioner records a NodeClaim it created and the pods it placed there.
			if err := cloud.KubeClient.Create(ctx, nodeClaim); err != nil {
				return Provisioning{}, err
			}
			launchedCapacity[planned.NodePoolName] = resources.MergeInto(launchedCapacity[planned.NodePoolName], launched.Status.Capacity)
			cluster.UpdateNodeClaim(nodeClaim)
			cluster.UpdatePodToNodeClaimMapping(map[string][]*corev1.Pod{nodeClaim.Name: planned.Pods})
			out.Launched = append(out.Launched, Launched{
				NodeClaim: nodeClaim, NodePool: planned.NodePoolName, Plan: launched.Labels[corev1.LabelInstanceTypeStable],
				Pods: planned.Pods, Round: out.Rounds,
			})
		}
		cluster.MarkPodSchedulingDecisions(ctx, results.PodErrors, results.NodePoolToPodMapping(), nil)
		pending = slices.Collect(maps.Keys(results.PodErrors))
	}
	return out, nil
}

// withinLimits are the NodePools with their limits less what they launched, nil limits kept nil.
func withinLimits(nodePools []*karpv1.NodePool, launched map[string]corev1.ResourceList) []*karpv1.NodePool {
	out := make([]*karpv1.NodePool, len(nodePools))
	for i, nodePool := range nodePools {
		out[i] = nodePool
		if len(nodePool.Spec.Limits) == 0 || len(launched[nodePool.Name]) == 0 {
			continue
		}
		out[i] = nodePool.DeepCopy()
		out[i].Spec.Limits = karpv1.Limits(resources.Subtract(corev1.ResourceList(nodePool.Spec.Limits), launched[nodePool.Name]))
	}
	return out
}

// SolveRound is one provisioning round over the pending pods for the NodePools, ordered by weight,
// as the provisioner runs it: the instance types the cloud provider offers each NodePool now, the
// DaemonSets' pods, no existing nodes, the provisioner's options.
func SolveRound(ctx context.Context, kubeClient client.Client, cloudProvider cloudprovider.CloudProvider, cluster *state.Cluster, nodePools []*karpv1.NodePool, pods, daemons []*corev1.Pod) (scheduling.Results, error) {
	byNodePool := map[string][]*cloudprovider.InstanceType{}
	for _, p := range nodePools {
		instanceTypes, err := cloudProvider.GetInstanceTypes(ctx, p)
		if err != nil {
			return scheduling.Results{}, err
		}
		byNodePool[p.Name] = instanceTypes
	}
	opts := SchedulerOptions(ctx)
	topology, err := scheduling.NewTopology(ctx, kubeClient, cluster, nil, nodePools, byNodePool, pods, opts...)
	if err != nil {
		return scheduling.Results{}, fmt.Errorf("tracking topology: %w", err)
	}
	scheduler := scheduling.NewScheduler(ctx, kubeClient, nodePools, cluster, nil, topology, byNodePool, daemons, DiscardEvents(), clock.RealClock{}, nil, nil, opts...)
	solveCtx, cancel := context.WithTimeout(ctx, SolveTimeout)
	defer cancel()
	results, err := scheduler.Solve(solveCtx, pods)
	if err != nil {
		return scheduling.Results{}, fmt.Errorf("solving %d pods: %w", len(pods), err)
	}
	// As the provisioner does before it creates the NodeClaims.
	return results.TruncateInstanceTypes(ctx, scheduling.MaxInstanceTypes), nil
}

// ControllerContext carries Karpenter core's settings parsed as the controller parses them
// (flags' defaults, overridden by the environment): the scheduler reads its concurrency, its
// preference and minValues policies from them.
func ControllerContext(ctx context.Context) (context.Context, error) {
	fs := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	core := &coreoptions.Options{}
	core.AddFlags(fs)
	if err := core.Parse(fs); err != nil {
		return nil, fmt.Errorf("parsing Karpenter core's settings: %w", err)
	}
	return injection.WithControllerName(core.ToContext(ctx), "provisioner"), nil
}

// SchedulerOptions are the options the provisioner gives core's scheduler.
func SchedulerOptions(ctx context.Context) []scheduling.Options {
	settings := coreoptions.FromContext(ctx)
	opts := []scheduling.Options{
		scheduling.DisableReservedCapacityFallback,
		scheduling.NumConcurrentReconciles(SchedulingWorkers(ctx)),
		scheduling.MinValuesPolicy(settings.MinValuesPolicy),
	}
	if settings.PreferencePolicy == coreoptions.PreferencePolicyIgnore {
		opts = append(opts, scheduling.IgnorePreferences)
	}
	return opts
}

// SchedulingWorkers is how many nodes and NodeClaims the provisioner's scheduler tries a pod
// against at once: one per requested core of the controller (the chart requests 500m, hence one).
func SchedulingWorkers(ctx context.Context) int {
	return int(math.Ceil(float64(coreoptions.FromContext(ctx).CPURequests) / 1000))
}

// DiscardEvents is a recorder for the scheduler's events, which nothing watches here.
func DiscardEvents() events.Recorder { return events.NewRecorder(&record.FakeRecorder{}) }

// FirstPodErrors joins the errors of the first n pods by name, enough to say why without
// repeating one reason for thousands of pods.
func FirstPodErrors(podErrors map[*corev1.Pod]error, n int) error {
	pods := slices.SortedFunc(maps.Keys(podErrors), func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var errs []error
	for _, pod := range pods[:min(n, len(pods))] {
		errs = append(errs, fmt.Errorf("%s: %w", pod.Name, podErrors[pod]))
	}
	return errors.Join(errs...)
}
