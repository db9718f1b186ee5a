package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// The sizing policy runs inside every GetInstanceTypes core makes while pods are pending: the
// provisioner's, each consolidation simulation's, drift's. Its time per call is what a large burst
// adds to each of them. The issue asks for p99 under 50 ms when the inputs changed since the last
// call (a memo miss: the pending pods listed, grouped and the fleet simulated) with 5,000 pending
// pods in 50 shapes over 500 nodes, and with 6,000 pending pods of as many shapes, which anyone
// who may create pods can make.
const (
	sizingLatencyPods   = 5000
	sizingLatencyShapes = 50
	sizingLatencyNodes  = 500
	// distinctShapesPods is the pending pods of the distinct-shapes case, each of its own shape.
	distinctShapesPods = 6000
	// sizingMissTarget is the bound on p99 of a call whose inputs changed.
	sizingMissTarget = 50 * time.Millisecond
)

// SizingLatency measures the sizing policy's time per GetInstanceTypes call, p50 and p99, over a
// kube-apiserver read through an informer cache as the controller's manager serves it: misses
// calls after one more pending pod reached the cache each time, hits calls with nothing changed;
// with 5,000 pods in 50 shapes.
func SizingLatency(ctx context.Context, misses, hits int) ([]Row, error) {
	return sizingLatency(ctx, sizingMix{pods: sizingLatencyPods, shapes: sizingLatencyShapes}, misses, hits)
}

// SizingLatencyDistinctShapes is SizingLatency with 6,000 pending pods of 6,000 shapes, each
// pod added of a shape of its own: the work anyone who may create pods can give the policy.
func SizingLatencyDistinctShapes(ctx context.Context, misses, hits int) ([]Row, error) {
	return sizingLatency(ctx, sizingMix{pods: distinctShapesPods, shapes: distinctShapesPods}, misses, hits)
}

// sizingMix is the pending pods a sizing-latency case starts with: how many, and of how many
// shapes; each pod added later is of a shape of its own when every pod is.
type sizingMix struct{ pods, shapes int }

func (m sizingMix) distinct() bool { return m.shapes == m.pods }

func sizingLatency(ctx context.Context, mix sizingMix, misses, hits int) ([]Row, error) {
	started := time.Now()
	ctx, err := planner.ControllerContext(ctx)
	if err != nil {
		return nil, err
	}
	f, err := newSizingFixture(ctx, mix)
	if err != nil {
		return nil, err
	}
	defer f.close()
	// The first decision for the set-up's pods is timed apart: the misses are what one more pod
	// costs once the policy has decided for the others.
	first, err := f.call(ctx)
	if err != nil {
		return nil, err
	}
	firstOverran := f.overBudget() > 0
	f.exceeded, f.heldOff = timeBudgetExceeded(f.nodePool.Name), heldOffAnswers(f.nodePool.Name)
	missTimes := make([]time.Duration, 0, misses)
	for range misses {
		took, err := f.miss(ctx)
		if err != nil {
			return nil, err
		}
		missTimes = append(missTimes, took)
	}
	hitTimes := make([]time.Duration, 0, hits)
	for range hits {
		took, err := f.hit(ctx)
		if err != nil {
			return nil, err
		}
		hitTimes = append(hitTimes, took)
	}
	setUp := f.ready.Sub(started).Round(time.Second)
	ran := time.Since(started).Round(time.Second)
	what := fmt.Sprintf("%d pending pods in %d shapes over %d nodes of the NodePool, read through an informer cache over kube-apiserver", mix.pods, mix.shapes, sizingLatencyNodes)
	scenario := "Sizing policy latency"
	if mix.distinct() {
		scenario += ", distinct shapes"
		what += fmt.Sprintf("; of the %d misses, %d were sized past the time budget (%v) and %d offered every plan without sizing, held off by an earlier overrun",
			misses, f.overBudget(), options.DefaultSizingTimeBudget, f.heldOffSince())
	}
	firstNote := fmt.Sprintf("the first call after the set-up: %s", what)
	if firstOverran {
		firstNote += fmt.Sprintf("; it took longer than the time budget (%v), and the NodePool was offered every plan", options.DefaultSizingTimeBudget)
	}
	rows := []Row{{Scenario: scenario, Metric: "GetInstanceTypes, first decision", Value: float64(first.Microseconds()) / 1000, Unit: "ms", Note: firstNote}}
	for _, m := range []struct {
		name   string
		times  []time.Duration
		target string
		why    string
	}{
		{"memo miss", missTimes, fmt.Sprintf("p99 < %d ms", sizingMissTarget.Milliseconds()), "one more pending pod each call"},
		{"memo hit", hitTimes, "", "nothing changed since the last call"},
	} {
		for _, p := range []float64{50, 99} {
			row := Row{
				Scenario: scenario,
				Metric:   fmt.Sprintf("GetInstanceTypes, %s, p%.0f", m.name, p),
				Value:    harness.Percentile(milliseconds(m.times), p),
				Unit:     "ms",
				Note:     fmt.Sprintf("%d calls, %s; %s; set-up %v, whole scenario %v", len(m.times), m.why, what, setUp, ran),
			}
			if p == 99 {
				row.Target = m.target
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func milliseconds(durations []time.Duration) []float64 {
	out := make([]float64, len(durations))
	for i, d := range durations {
		out[i] = float64(d.Microseconds()) / 1000
	}
	return out
}

// sizingFixture is our cloud provider over the emulator and a control plane holding the pending
// pods and the NodePool's nodes, with core's cluster state tracking them.
type sizingFixture struct {
	env        *environment.Environment
	cancel     context.CancelFunc
	emulator   *test.Emulator
	kubeClient client.Client
	linode     *linodeCloud
	nodePool   *karpv1.NodePool
	mix        sizingMix
	// pods is how many pending pods the cache holds; ready when the set-up ended; exceeded and
	// heldOff the counts of decisions past the time budget and of answers held off after one,
	// when the first decision ended.
	pods              int
	ready             time.Time
	exceeded, heldOff float64
}

func newSizingFixture(ctx context.Context, mix sizingMix) (f *sizingFixture, err error) {
	f = &sizingFixture{mix: mix}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.close())
		}
	}()
	if f.env, err = environment.New(); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	ctx, f.cancel = context.WithCancel(ctx)
	var informers crcache.Cache
	if f.kubeClient, informers, err = f.env.CachedClientAndInformers(ctx, environment.PodNodeNameIndex); err != nil {
		return nil, err
	}
	nodeClass := test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: nodeClassName}})
	if err := f.kubeClient.Create(ctx, nodeClass); err != nil {
		return nil, err
	}
	if f.emulator, err = test.StartEmulator(); err != nil {
		return nil, fmt.Errorf("starting the Linode API emulator: %w", err)
	}
	cloud, err := test.NewLKE(ctx, f.emulator, f.kubeClient, test.WithCluster(benchClusterName, lke.TierStandard, benchRegion))
	if err != nil {
		return nil, err
	}
	f.nodePool = benchNodePool(test.NodeClassRef(nodeClassName))
	if err := f.kubeClient.Create(ctx, f.nodePool); err != nil {
		return nil, err
	}
	// The controller's policy reads pending pods from its manager's cache.
	if err := cloud.Sizing.ReadFromInformers(ctx, informers); err != nil {
		return nil, err
	}
	f.linode = &linodeCloud{
		schedulingCloud: &schedulingCloud{kubeClient: f.kubeClient, cloudProvider: cloud.CloudProvider, nodePool: f.nodePool},
		emulator:        f.emulator,
		sizing:          cloud.Sizing,
	}
	cluster := state.NewCluster(clock.RealClock{}, f.kubeClient, cloud.CloudProvider)
	if err := f.createNodes(ctx, cluster); err != nil {
		return nil, err
	}
	if err := parallel(mix.pods, func(i int) error { return f.createPendingPod(ctx, i) }); err != nil {
		return nil, err
	}
	f.linode.sizing.Track(cluster)
	if err := f.awaitPods(ctx, mix.pods); err != nil {
		return nil, err
	}
	f.ready, f.exceeded = time.Now(), timeBudgetExceeded(f.nodePool.Name)
	return f, nil
}

// overBudget counts the decisions past the time budget since the set-up or the first decision.
func (f *sizingFixture) overBudget() int {
	return int(timeBudgetExceeded(f.nodePool.Name) - f.exceeded)
}

// heldOffSince counts the answers held off after an overrun since the first decision.
func (f *sizingFixture) heldOffSince() int {
	return int(heldOffAnswers(f.nodePool.Name) - f.heldOff)
}

// heldOffAnswers is the sizing policy's count of answers for the NodePool that offered every
// plan without sizing, after a decision past the time budget.
func heldOffAnswers(nodePool string) float64 {
	heldOff, _, _ := test.NodePoolMetric("karpenter_linode_sizing_held_off_total", nodePool)
	return heldOff
}

// timeBudgetExceeded is the sizing policy's count of decisions past its time budget for the
// NodePool.
func timeBudgetExceeded(nodePool string) float64 {
	exceeded, _, _ := test.NodePoolMetric("karpenter_linode_sizing_time_budget_exceeded_total", nodePool)
	return exceeded
}

// createNodes creates the NodePool's nodes, initialized, and gives them to the cluster state.
func (f *sizingFixture) createNodes(ctx context.Context, cluster *state.Cluster) error {
	return parallel(sizingLatencyNodes, func(i int) error {
		nodeClaim, node := coretest.NodeClaimAndNode(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("existing-%03d", i),
			Labels: map[string]string{
				karpv1.NodePoolLabelKey:        f.nodePool.Name,
				karpv1.NodeInitializedLabelKey: "true",
				karpv1.NodeRegisteredLabelKey:  "true",
				corev1.LabelInstanceTypeStable: "g6-standard-4",
				karpv1.CapacityTypeLabelKey:    karpv1.CapacityTypeOnDemand,
				corev1.LabelTopologyZone:       benchRegion,
				v1.LabelInstanceClass:          "standard",
				corev1.LabelHostname:           fmt.Sprintf("existing-%03d", i),
			},
		}})
		node.Name = nodeClaim.Name
		for _, obj := range []client.Object{nodeClaim, node} {
			if err := f.kubeClient.Create(ctx, obj); err != nil {
				return err
			}
		}
		cluster.UpdateNodeClaim(nodeClaim)
		return cluster.UpdateNode(ctx, node)
	})
}

// createPendingPod creates the i'th pending pod, one of the shapes in turn, or of a shape of its
// own when every pod is: kube-scheduler found no node for it.
func (f *sizingFixture) createPendingPod(ctx context.Context, i int) error {
	requests := corev1.ResourceList{}
	if f.mix.distinct() {
		// CPU from 50m to 4 vCPUs and memory from 64 MiB to 8 GiB, no two pods alike.
		requests[corev1.ResourceCPU] = resource.MustParse(fmt.Sprintf("%dm", 50+(i*7919)%3950))
		requests[corev1.ResourceMemory] = resource.MustParse(fmt.Sprintf("%dKi", 1024*(64+(i*104729)%8128)+i))
	} else {
		shape := i % f.mix.shapes
		requests[corev1.ResourceCPU] = resource.MustParse(fmt.Sprintf("%dm", 100*(1+shape%10)))
		requests[corev1.ResourceMemory] = resource.MustParse(fmt.Sprintf("%dMi", 256<<(shape/10)))
	}
	pod := coretest.UnschedulablePod(coretest.PodOptions{
		ObjectMeta:           metav1.ObjectMeta{Name: fmt.Sprintf("pending-%05d", i), Namespace: "default"},
		ResourceRequirements: corev1.ResourceRequirements{Requests: requests},
	})
	status := pod.Status
	if err := f.kubeClient.Create(ctx, pod); err != nil {
		return err
	}
	pod.Status = status
	return f.kubeClient.Status().Update(ctx, pod)
}

// awaitPods waits until the cache holds pods pending pods, each with the status that makes it
// provisionable.
func (f *sizingFixture) awaitPods(ctx context.Context, pods int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list corev1.PodList
		if err := f.kubeClient.List(ctx, &list, client.MatchingFields{"spec.nodeName": ""}, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		unschedulable := 0
		for i := range list.Items {
			if len(list.Items[i].Status.Conditions) > 0 {
				unschedulable++
			}
		}
		if unschedulable == pods {
			f.pods = pods
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cache held %d of %d pending pods after 2 minutes", unschedulable, pods)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// addPendingPod creates one more pending pod and waits until the cache holds it with the status
// that makes it provisionable; the watch delivers the earlier pods' events before its own. It
// reads that pod alone: listing all 5,000 pods every few milliseconds allocated tens of
// megabytes between calls, and the garbage collection they set off ran during the timed calls.
func (f *sizingFixture) addPendingPod(ctx context.Context) error {
	if err := f.createPendingPod(ctx, f.pods); err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("pending-%05d", f.pods)}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pod corev1.Pod
		err := f.kubeClient.Get(ctx, key, &pod)
		if err == nil && len(pod.Status.Conditions) > 0 {
			f.pods++
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cache did not hold pending pod %s after 2 minutes", key.Name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// miss adds a pending pod and times a call.
func (f *sizingFixture) miss(ctx context.Context) (time.Duration, error) {
	if err := f.addPendingPod(ctx); err != nil {
		return 0, err
	}
	return f.call(ctx)
}

// hit times a call with nothing changed since the last one.
func (f *sizingFixture) hit(ctx context.Context) (time.Duration, error) { return f.call(ctx) }

func (f *sizingFixture) call(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	instanceTypes, err := f.linode.cloudProvider.GetInstanceTypes(ctx, f.nodePool)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if len(instanceTypes) == 0 {
		return 0, errors.New("GetInstanceTypes returned no instance type")
	}
	return took, nil
}

func (f *sizingFixture) close() error {
	var errs []error
	if f.emulator != nil {
		errs = append(errs, f.emulator.Close())
	}
	// The informers' watches end before the apiserver stops.
	if f.cancel != nil {
		f.cancel()
	}
	if f.env != nil {
		errs = append(errs, f.env.Stop())
	}
	return errors.Join(errs...)
}

// parallel runs do for 0..n-1 on a few goroutines, as a controller's workers write to the
// apiserver, and returns the first error.
func parallel(n int, do func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
