package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Provider names the Karpenter provider a scenario runs against.
type Provider string

const (
	// Linode is this project's controller, launching LKE pool nodes in the Linode API emulator.
	Linode Provider = "linode"
	// LinodeInstance is this project's controller in instance mode: plain Linodes that boot from
	// their user data and join by TLS bootstrap.
	LinodeInstance Provider = "linode-instance"
	// Kwok is Karpenter core's own kwok provider (sigs.k8s.io/karpenter/kwok), which creates its
	// Nodes itself after its KWOKNodeClass's registration delay: the baseline.
	Kwok Provider = "kwok"
)

// ProviderNames are the providers' names, for Config.Providers.
func ProviderNames() []string { return []string{string(Linode), string(LinodeInstance), string(Kwok)} }

// linodeBootTime is how long a Linode takes from its LKE pool's creation to running with the
// emulator's default delays (node to Linode 10 s, provisioning 60 s, booting 90 s); the emulator's
// delay scale is a boot delay divided by it.
const linodeBootTime = 160 * time.Second

// instanceBootTime is how long a plain Linode takes from its create to running with the
// emulator's default delays (provisioning 60 s, booting 90 s).
const instanceBootTime = 150 * time.Second

// InstanceImage is the image instance mode's benchmark nodes boot, a public one with cloud-init.
const InstanceImage = "linode/ubuntu24.04"

// Namespace holds every benchmark pod.
const Namespace = "default"

// Config says how to start the clusters a scenario runs on.
type Config struct {
	// ControllerBinary is cmd/controller and KwokProviderBinary core's kwok provider, built once
	// and shared by every cluster.
	ControllerBinary   string
	KwokProviderBinary string
	// Progress hears about each step; nil for silence.
	Progress func(string)
	// ControllerEnv adds to the environment of every cluster's controller, ours and core's kwok
	// provider alike (e.g. PREFERENCE_POLICY=Ignore, a setting of core's both read).
	ControllerEnv []string
	// WorkDir, when set, holds the clusters' logs, which are then kept, each cluster's in a
	// directory of its own named after its provider; when empty, each cluster has a new
	// temporary directory, removed once the cluster stopped cleanly.
	WorkDir string
}

// Progressf tells Progress about a step.
func (c Config) Progressf(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

// Env is a new local cluster running one provider, with what the scenarios measure it by.
type Env struct {
	Config   Config
	Provider Provider
	Cluster  *localcluster.Cluster
	// Watch notes when each pod, Node and NodeClaim reached each state.
	Watch *Recorder
	// BootDelay is how long a node takes to register once the provider creates it: the emulator's
	// delays (Linode) or the KWOKNodeClass's registration delay (kwok).
	BootDelay   time.Duration
	stopWatches context.CancelFunc
	// pools are the NodePools created and not yet removed.
	pools []string
}

// Start starts a local cluster for the provider, with nodes that take bootDelay to register;
// tune changes the cluster's options further.
func Start(ctx context.Context, cfg Config, provider Provider, bootDelay time.Duration, tune ...func(*localcluster.Options)) (_ *Env, err error) {
	opts := localcluster.Options{
		DelayScale:       bootDelay.Seconds() / linodeBootTime.Seconds(),
		ControllerBinary: cfg.ControllerBinary,
		ControllerEnv:    slices.Clone(cfg.ControllerEnv),
	}
	if cfg.WorkDir != "" {
		if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
			return nil, err
		}
		if opts.WorkDir, err = os.MkdirTemp(cfg.WorkDir, string(provider)+"-"); err != nil {
			return nil, err
		}
	}
	for _, t := range tune {
		t(&opts)
	}
	// A replica that loses its lease exits and comes back: said as it happens, as the figures
	// of the run depend on it.
	if opts.ControllerReplicas > 1 && opts.Progress == nil {
		opts.Progress = func(step string) { cfg.Progressf("  %s: %s", provider, step) }
	}
	switch provider {
	case Kwok:
		opts.Mode = localcluster.ModeKwokProvider
		opts.ControllerBinary = cfg.KwokProviderBinary
	case LinodeInstance:
		opts.Mode = localcluster.ModeInstance
		opts.DelayScale = bootDelay.Seconds() / instanceBootTime.Seconds()
	}
	cfg.Progressf("starting a local cluster with the %s provider (boot delay %v)", provider, bootDelay)
	cluster, err := localcluster.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting a local cluster for the %s provider: %w", provider, err)
	}
	e := &Env{Config: cfg, Provider: provider, Cluster: cluster, BootDelay: bootDelay}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()
	watchCtx, stopWatches := context.WithCancel(ctx)
	e.stopWatches = stopWatches
	if e.Watch, err = StartRecorder(watchCtx, cluster.KubeconfigPath); err != nil {
		return nil, err
	}
	return e, nil
}

// InstanceModeSuffix names the rows measured in instance mode, beside LKE mode's of the same
// scenario.
const InstanceModeSuffix = ", instance mode"

// Scenario is the name of the scenario's rows on this env: instance mode's carry the suffix.
func (e *Env) Scenario(name string) string {
	if e.Provider == LinodeInstance {
		return name + InstanceModeSuffix
	}
	return name
}

// Stop stops the cluster; its logs are kept, and named, only when something failed.
func (e *Env) Stop() error {
	if e.stopWatches != nil {
		e.stopWatches()
	}
	return e.Cluster.Stop()
}

// StopAfter stops the cluster after a run on it, keeping its logs when the run failed, since the
// failure names them.
func (e *Env) StopAfter(failure error) error {
	if failure != nil {
		e.Cluster.KeepLogs()
	}
	return e.Stop()
}

// CheckHealthy names a component or controller that died, which would void the figures.
func (e *Env) CheckHealthy() error { return e.Cluster.CheckHealthy() }

// CreateNodePool creates a node class and a NodePool named name and waits until both are Ready.
// nodeCPUs, when not zero, allows only instance types of that many vCPUs. The pool never
// disrupts a node, so that nothing but the scenario changes the fleet while it is measured.
func (e *Env) CreateNodePool(ctx context.Context, name string, nodeCPUs int) error {
	nodePool := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: karpv1.NodePoolSpec{
			Disruption: karpv1.Disruption{
				ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmpty,
				ConsolidateAfter:    karpv1.MustParseNillableDuration("Never"),
			},
		},
	}
	var nodeClass client.Object
	var requirements []karpv1.NodeSelectorRequirementWithMinValues
	cpuLabel := v1.LabelInstanceCPU
	switch e.Provider {
	case Linode, LinodeInstance:
		class := v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if e.Provider == LinodeInstance {
			class.Spec.Image = ptr.To(InstanceImage)
		}
		nodeClass = test.LinodeNodeClass(class)
		nodePool.Spec.Template.Spec.NodeClassRef = test.NodeClassRef(name)
		requirements = append(requirements, karpv1.NodeSelectorRequirementWithMinValues{
			Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard", "dedicated"}})
	case Kwok:
		nodeClass = localcluster.KwokNodeClass(name, e.BootDelay)
		nodePool.Spec.Template.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: name}
		// Linux on amd64, on demand, like every Linode, from core's made-up catalogue.
		requirements = append(requirements,
			karpv1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
			karpv1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
			karpv1.NodeSelectorRequirementWithMinValues{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
		)
		cpuLabel = localcluster.KwokLabelInstanceCPU
	}
	if nodeCPUs > 0 {
		requirements = append(requirements, karpv1.NodeSelectorRequirementWithMinValues{
			Key: cpuLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{strconv.Itoa(nodeCPUs)}})
	}
	nodePool.Spec.Template.Spec.Requirements = requirements
	if err := e.Cluster.Kube.Create(ctx, nodeClass); err != nil {
		return fmt.Errorf("creating the node class %s: %w", name, err)
	}
	if err := e.Cluster.Kube.Create(ctx, nodePool); err != nil {
		return fmt.Errorf("creating NodePool %s: %w", name, err)
	}
	e.pools = append(e.pools, name)
	return e.WaitFor(ctx, "NodePool "+name+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
		if err := e.Cluster.Kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool); err != nil {
			return false, err
		}
		return nodePool.StatusConditions().Root().IsTrue(), nil
	})
}

// Deploy creates a deployment of replicas pause pods asking for one CPU each, pinned to the
// NodePool, and returns when it was created.
func (e *Env) Deploy(ctx context.Context, pool string, replicas int) (time.Time, error) {
	labels := map[string]string{PoolLabel: pool}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: pool, Namespace: Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					NodeSelector:                  map[string]string{karpv1.NodePoolLabelKey: pool},
					Containers: []corev1.Container{{
						Name: "pause", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
					}},
				},
			},
		},
	}
	start := time.Now()
	if err := e.Cluster.Kube.Create(ctx, deployment); err != nil {
		return time.Time{}, fmt.Errorf("creating deployment %s: %w", pool, err)
	}
	return start, nil
}

// WaitRunning waits until n of the pool's pods have run.
func (e *Env) WaitRunning(ctx context.Context, pool string, n int, timeout time.Duration) error {
	return e.WaitFor(ctx, fmt.Sprintf("%d pods of %s running", n, pool), timeout, func(context.Context) (bool, error) {
		return e.Watch.Running(pool) >= n, nil
	})
}

// RemovePools removes every NodePool created so far, so that the next run starts from an empty
// fleet. It runs before a run rather than after one, so that the last run on a cluster about to
// stop does not wait for its nodes to go.
func (e *Env) RemovePools(ctx context.Context) error {
	for len(e.pools) > 0 {
		if err := e.Remove(ctx, e.pools[0]); err != nil {
			return err
		}
		e.pools = e.pools[1:]
	}
	return nil
}

// Remove deletes the pool's deployment and pods and the NodePool, and waits until its NodeClaims
// and nodes are gone.
func (e *Env) Remove(ctx context.Context, pool string) error {
	kube := e.Cluster.Kube
	if err := kube.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: pool, Namespace: Namespace}}); client.IgnoreNotFound(err) != nil {
		return err
	}
	if err := kube.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(Namespace), client.MatchingLabels{PoolLabel: pool}, client.GracePeriodSeconds(0)); err != nil {
		return err
	}
	if err := kube.Delete(ctx, &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return e.WaitFor(ctx, "the nodes of "+pool+" are gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
		var claims karpv1.NodeClaimList
		var nodes corev1.NodeList
		if err := kube.List(ctx, &claims, client.MatchingLabels{karpv1.NodePoolLabelKey: pool}); err != nil {
			return false, err
		}
		if err := kube.List(ctx, &nodes, client.MatchingLabels{karpv1.NodePoolLabelKey: pool}); err != nil {
			return false, err
		}
		return len(claims.Items) == 0 && len(nodes.Items) == 0, nil
	})
}

// WaitFor polls cond every 250 ms until it holds, the timeout passes or a component dies.
func (e *Env) WaitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	took, err := e.Cluster.Await(ctx, timeout, 250*time.Millisecond, cond)
	if err != nil {
		return fmt.Errorf("%s: %w (logs in %s)", what, err, e.Cluster.LogDir)
	}
	e.Config.Progressf("  %s: %s (%.1f s)", e.Provider, what, took.Seconds())
	return nil
}

// ControllerRequests are the requests the controller sent to the emulator, oldest first: the
// node simulator's reads (standing in for kubelets and the cloud controller manager, which use
// tokens of their own on LKE) are left out.
func (e *Env) ControllerRequests() []emulator.RequestRecord {
	var out []emulator.RequestRecord
	for _, r := range e.Cluster.Emulator.Requests() {
		if IsControllerRequest(r) {
			out = append(out, r)
		}
	}
	return out
}
