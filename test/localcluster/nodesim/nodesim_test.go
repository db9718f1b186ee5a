package nodesim_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// env is a control plane nodes join as they join a kubeadm cluster; LKE nodes register with its
// admin client, plain Linodes by TLS bootstrap.
var env *environment.NodeBootstrap

func TestMain(m *testing.M) {
	var err error
	if env, err = environment.NewNodeBootstrap(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := env.StartNodeIdentity(context.Background(), env.Config, types.NamespacedName{Namespace: "kube-system", Name: "karpenter-bootstrap-token-key"}); err != nil {
		fmt.Fprintln(os.Stderr, err, env.Stop())
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// delayScale shrinks the emulator's 160 s from pool create to running Linode to 1.6 s: long enough
// to see that no node registers early, short enough for a unit test.
const delayScale = 0.01

func startSimulator(t *testing.T) (*emulator.Emulator, *linodego.Client) {
	t.Helper()
	emu, linode, _ := startSimulatorWithEvents(t, nodesim.DefaultJoinTimeout)
	return emu, linode
}

// startSimulatorWithEvents also returns the simulator's events as they happen; joins give up
// after joinTimeout.
func startSimulatorWithEvents(t *testing.T, joinTimeout time.Duration) (*emulator.Emulator, *linodego.Client, <-chan nodesim.Event) {
	t.Helper()
	emu := emulator.New(emulator.WithDelayScale(delayScale), emulator.WithoutRateLimits())
	kube, err := client.New(nodesim.ClientConfig(env.Config), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	sim := nodesim.New(kube, emu, nodesim.DefaultResourceModel())
	sim.SetJoinTimeout(joinTimeout)
	events := make(chan nodesim.Event, 100)
	sim.OnEvent(func(ev nodesim.Event) { events <- ev })
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sim.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		// A test that failed halfway leaves its Linodes' Nodes: remove them, or the next test
		// would find them in the shared control plane.
		for _, instance := range emu.Instances() {
			if err := env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: instance.Label}}); client.IgnoreNotFound(err) != nil {
				t.Error(err)
			}
		}
		_ = emu.Close()
	})
	return emu, emu.NewClient(), events
}

// settleWithin bounds this file's waits for the simulator on a machine that CI loads with a dozen
// other test binaries: a wait ends as soon as its condition holds, so only a failure pays it. Ten
// seconds were too few for a Linode's 1.6 s boot and its node's registration once in a cold CI run.
const settleWithin = time.Minute

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestLKENodeRegistersLikeLKEKubelet(t *testing.T) {
	ctx := context.Background()
	emu, linode := startSimulator(t)
	clusterID, err := emu.AddLKECluster("sim", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := linode.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-dedicated-4",
		Labels: linodego.LKENodePoolLabels{"karpenter.sh/nodepool": "default", "team": "payments"},
		Taints: []linodego.LKENodePoolTaint{{Key: "dedicated", Value: "payments", Effect: linodego.LKENodePoolTaintEffectNoSchedule}},
	})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	// LKE's kubelets register whether or not the public API answers the customer.
	emu.InjectFault(emulator.Fault{Route: "/lke/clusters/{clusterId}/pools/{poolId}", Unreachable: true})

	var instance emulator.InstanceInfo
	waitFor(t, "the pool's Linode", settleWithin, func() bool {
		for _, in := range emu.Instances() {
			if in.LKEPoolID == pool.ID {
				instance = in
				return true
			}
		}
		return false
	})
	if instance.Status == "running" {
		t.Fatalf("Linode %s is already running %v after the pool was created; the delay scale is too small for this test", instance.Label, time.Since(created))
	}
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 0 {
		t.Fatalf("a node registered before its Linode was running: %s", nodes.Items[0].Name)
	}

	node := &corev1.Node{}
	waitFor(t, "node "+instance.Label, settleWithin, func() bool {
		return env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, node) == nil
	})
	if got := emu.Instances(); got[0].Status != "running" {
		t.Errorf("node registered while its Linode was %s", got[0].Status)
	}
	if want := fmt.Sprintf("linode://%d", instance.ID); node.Spec.ProviderID != want {
		t.Errorf("provider ID %q, want %q", node.Spec.ProviderID, want)
	}
	for key, want := range map[string]string{
		"karpenter.sh/nodepool":        "default",
		"team":                         "payments",
		nodesim.LabelLKEPoolID:         fmt.Sprint(pool.ID),
		corev1.LabelInstanceTypeStable: "g6-dedicated-4",
		corev1.LabelTopologyRegion:     "us-ord",
		corev1.LabelHostname:           instance.Label,
		corev1.LabelArchStable:         "amd64",
		corev1.LabelOSStable:           "linux",
	} {
		if node.Labels[key] != want {
			t.Errorf("label %s = %q, want %q", key, node.Labels[key], want)
		}
	}
	if got, want := node.Status.NodeInfo.KubeletVersion, nodesim.KubeletVersion(emu.Clusters()[0].K8sVersion); got != want || want == "" {
		t.Errorf("kubelet version %q, want %q, of the version LKE installed", got, want)
	}
	wantTaints := []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}}
	if taints := registeredTaints(node); len(taints) != 1 || !taints[0].MatchTaint(&wantTaints[0]) {
		t.Errorf("taints %v, want only the pool's %v (LKE's kubelet has no start-up taints)", node.Spec.Taints, wantTaints)
	}
	capacity := node.Status.Capacity
	if capacity.Cpu().Value() != 4 || capacity.Pods().Value() != 110 ||
		capacity.StorageEphemeral().Cmp(resource.MustParse("160Gi")) != 0 {
		t.Errorf("capacity %v, want 4 CPUs, 110 pods and the plan's 160 GiB disk", capacity)
	}
	planMemory := resource.MustParse("8Gi")
	if m := capacity.Memory(); m.Cmp(planMemory) >= 0 || m.Value() < planMemory.Value()*95/100 {
		t.Errorf("memory capacity %s, want a little under the plan's 8 GiB", m)
	}
	if node.Status.Allocatable.Memory().Cmp(*capacity.Memory()) >= 0 || node.Status.Allocatable.Cpu().Cmp(*capacity.Cpu()) >= 0 {
		t.Errorf("allocatable %v is not less than capacity %v", node.Status.Allocatable, capacity)
	}

	if err := linode.DeleteLKENodePoolNode(ctx, clusterID, instance.NodeID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node "+instance.Label+" to be removed with its Linode", settleWithin, func() bool {
		return env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, &corev1.Node{}) != nil
	})
}

func TestGPUPlanAdvertisesGPUs(t *testing.T) {
	ctx := context.Background()
	emu, linode := startSimulator(t)
	// GPU plans start without capacity, as on Linode, where /regions/availability lists them.
	emu.SetCapacity("us-ord", "g1-gpu-rtx6000-2", 1)
	clusterID, err := emu.AddLKECluster("gpu", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := linode.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g1-gpu-rtx6000-2"}); err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	waitFor(t, "the GPU node", settleWithin, func() bool {
		var nodes corev1.NodeList
		if err := env.Client.List(ctx, &nodes, client.HasLabels{nodesim.LabelLKEPoolID}); err != nil || len(nodes.Items) == 0 {
			return false
		}
		node = nodes.Items[0]
		return node.Labels[corev1.LabelInstanceTypeStable] == "g1-gpu-rtx6000-2"
	})
	if gpus := node.Status.Allocatable[nodesim.ResourceGPU]; gpus.Value() != 2 {
		t.Errorf("allocatable %s = %s, want 2", nodesim.ResourceGPU, gpus.String())
	}
}

func TestNodeIsNotReadyWhileItsLinodeIsDown(t *testing.T) {
	ctx := context.Background()
	emu, linode := startSimulator(t)
	clusterID, err := emu.AddLKECluster("sim", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := linode.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if err != nil {
		t.Fatal(err)
	}
	var instance emulator.InstanceInfo
	node := &corev1.Node{}
	waitFor(t, "the pool's node, Ready", settleWithin, func() bool {
		instances := emu.Instances()
		if len(instances) != 1 {
			return false
		}
		instance = instances[0]
		return env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, node) == nil && nodeReadyStatus(node) == corev1.ConditionTrue
	})

	if _, err := emu.FailHost(instance.ID, emulator.HostFailure{RestartAfter: time.Second}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to be marked down", settleWithin, func() bool {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, node); err != nil {
			return false
		}
		for _, condition := range node.Status.Conditions {
			if condition.Type == corev1.NodeReady {
				return condition.Status == corev1.ConditionUnknown && node.Annotations[nodesim.AnnotationKwokStatus] == "custom"
			}
		}
		return false
	})
	waitFor(t, "the node to be handed back to kwok once its Linode runs again", settleWithin, func() bool {
		return env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, node) == nil && node.Annotations[nodesim.AnnotationKwokStatus] == ""
	})
	if err := linode.DeleteLKENodePool(ctx, clusterID, pool.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to be removed", settleWithin, func() bool {
		return env.Client.Get(ctx, types.NamespacedName{Name: instance.Label}, &corev1.Node{}) != nil
	})
}

// registeredTaints leaves out the taints the apiserver adds to every new Node from its conditions
// (node.kubernetes.io/not-ready and the like): those are Kubernetes', not kubelet's.
func registeredTaints(node *corev1.Node) []corev1.Taint {
	var taints []corev1.Taint
	for _, taint := range node.Spec.Taints {
		if !strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
			taints = append(taints, taint)
		}
	}
	return taints
}

func cleanUpNodes(t *testing.T) {
	t.Helper()
	if err := env.Client.DeleteAllOf(context.Background(), &corev1.Node{}); err != nil {
		t.Fatal(err)
	}
}
