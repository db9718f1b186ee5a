// Package nodesim plays the part of the kubelets of a local cluster. For every Linode the Linode
// API emulator reports running, it registers a Node the way the node's kubelet would; when the
// Linode is deleted, it removes the Node, as Linode's cloud controller manager does; while the
// Linode is shut down, the node stops reporting. kwok then keeps those Nodes Ready and runs their
// pods (it selects them by AnnotationKwokNode).
//
// When a Linode that ran stops (shut down, rebooting, its host failed, maintenance), its kubelet
// stops posting status: the simulator marks the Node's Ready condition Unknown, as the node
// lifecycle controller would, and tells kwok to leave the Node's status alone until the Linode
// runs again.
//
// An LKE node registers under its Linode's label (lke<clusterID>-<poolID>-<hex>) with provider ID
// linode://<id>, the pool's labels and taints and nothing else of its own (LKE's kubelet has no
// start-up taints), plus the labels kubelet and the cloud controller manager add: hostname, os,
// arch, instance type, region and lke.linode.com/pool-id, and the kubelet version of the
// Kubernetes version LKE installed on it.
//
// When LKE recycles a node, the simulator plays LKE's drain before the Linode goes: it cordons the
// Node and evicts its pods through the Eviction API, so PodDisruptionBudgets hold, retrying the
// evictions a budget refuses, and tells the emulator once only DaemonSet pods are left. LKE deletes
// the Linode anyway when its drain timeout runs out.
//
// A plain Linode (instance mode) boots as it would on Linode: it reads its instance data and user
// data from the Metadata service, runs the user data as cloud-init would (cloudinit.go), and
// starts kubelet as the resulting systemd unit, configuration and bootstrap kubeconfig say
// (kubelet.go). The kubelet authenticates to the cluster endpoint of the bootstrap kubeconfig,
// trusting its CA, with its bootstrap token; asks for a client certificate with a
// CertificateSigningRequest; waits until kube-controller-manager has approved and signed it; and
// registers its Node with that certificate, with the name, labels, taints and provider ID the
// user data asked for, and the capacity its configuration gives it. Nothing is taken from
// anywhere else: a wrong endpoint, CA or token in the user data makes the join fail, reported as
// an Event with Err. The one thing the simulator adds is what Linode's cloud controller manager
// would: a Linode in a VPC has its Node's addresses, the VPC address as InternalIP and its public
// (1:1 NAT) addresses as ExternalIP.
package nodesim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	// LabelLKEPoolID is the label LKE puts on every node of a pool.
	LabelLKEPoolID = "lke.linode.com/pool-id"
	// AnnotationKwokNode marks the Nodes kwok acts as the kubelet of (kwok's own convention).
	AnnotationKwokNode = "kwok.x-k8s.io/node"
	// KwokAnnotationSelector selects those Nodes, for kwok's --manage-nodes-with-annotation-selector.
	KwokAnnotationSelector = AnnotationKwokNode + "=fake"
	// AnnotationKwokStatus set to "custom" makes kwok leave a Node's status alone (kwok's own
	// convention): the simulator sets it while the Node's Linode is down.
	AnnotationKwokStatus = "kwok.x-k8s.io/status"
	// KwokDownAnnotationSelector selects those Nodes, for kwok's
	// --disregard-status-with-annotation-selector.
	KwokDownAnnotationSelector = AnnotationKwokStatus + "=custom"
)

// Event is a Node the simulator registered or removed, or a plain Linode that could not join.
type Event struct {
	// Registered is true for a new Node, false for a removed one.
	Registered bool
	NodeName   string
	InstanceID int
	PlanType   string
	// LinodeEventTime is when the emulator reported the Linode running or deleted.
	LinodeEventTime time.Time
	// Err is why a plain Linode's kubelet could not join; the Linode keeps running without a Node.
	Err error
}

// DefaultJoinTimeout is how long a plain Linode's kubelet keeps trying to join before the
// simulator reports the join failed; a real kubelet would keep trying.
const DefaultJoinTimeout = 2 * time.Minute

// Simulator registers and removes Nodes as the emulator's Linodes come and go. Create it with New
// before the first Linode is created, and run it with Run.
//
// It speaks for every node's kubelet: give it a client of its own (ClientConfig), whose request
// budget is not shared with the test or tool that watches the cluster.
type Simulator struct {
	kube   client.Client
	emu    *emulator.Emulator
	linode *linodego.Client
	model  ResourceModel

	mu      sync.Mutex
	pending []emulator.InstanceEvent
	wake    chan struct{}
	plans   map[string]linodego.LinodeType
	// nodes are the Nodes plain Linodes registered, by Linode id, and joins the joins in progress.
	nodes       map[int]string
	joins       map[int]context.CancelFunc
	joinsDone   sync.WaitGroup
	joinTimeout time.Duration
	// drains stops the drain of each Linode being recycled, by Linode id.
	drains map[int]context.CancelFunc

	observers []func(Event)
	// notReady holds new Nodes not Ready while it is on (HoldNotReady).
	notReady notReadyHold
	// keep tells the Linodes whose kubelets the simulator plays; nil for all.
	keep func(emulator.InstanceEvent) bool
}

// New returns a simulator for the emulator's Linodes. It reads plans through the Linode API, as
// the rest of the system does, LKE pools from the emulator's state (LKE's kubelets do not depend
// on the public API), and writes Nodes with kube.
func New(kube client.Client, emu *emulator.Emulator, model ResourceModel) *Simulator {
	s := &Simulator{
		kube:        kube,
		emu:         emu,
		model:       model,
		wake:        make(chan struct{}, 1),
		plans:       map[string]linodego.LinodeType{},
		nodes:       map[int]string{},
		joins:       map[int]context.CancelFunc{},
		joinTimeout: DefaultJoinTimeout,
		drains:      map[int]context.CancelFunc{},
	}
	// The emulator delivers events from the goroutine of whichever API request caused them (often
	// the controller's): queue them and return at once rather than hold that request up.
	emu.OnInstanceEvent(func(ev emulator.InstanceEvent) {
		s.mu.Lock()
		s.pending = append(s.pending, ev)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	})
	return s
}

// ClientConfig is config with the request budget the simulator's client needs: it does the work
// of all the cluster's kubelets, each of which has a client of its own.
func ClientConfig(config *rest.Config) *rest.Config {
	config = rest.CopyConfig(config)
	config.QPS, config.Burst = 100, 200
	return config
}

// OnEvent registers fn to hear about every Node registered or removed. Call it before Run.
func (s *Simulator) OnEvent(fn func(Event)) { s.observers = append(s.observers, fn) }

// OnlyLinodes has the simulator play the kubelets of only the Linodes keep accepts, for a cluster
// that shares its Linode account with others: their kubelets are another cluster's. Call it
// before Run.
func (s *Simulator) OnlyLinodes(keep func(emulator.InstanceEvent) bool) { s.keep = keep }

// SetJoinTimeout sets how long a plain Linode's kubelet tries to join. Call it before Run.
func (s *Simulator) SetJoinTimeout(timeout time.Duration) { s.joinTimeout = timeout }

// Run handles the emulator's events, in order, until ctx is done. The emulator must be serving.
func (s *Simulator) Run(ctx context.Context) {
	s.linode = s.emu.NewClient()
	defer s.joinsDone.Wait()
	statusesDone := make(chan struct{})
	go func() { s.syncStatuses(ctx); close(statusesDone) }()
	defer func() { <-statusesDone }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for {
			s.mu.Lock()
			events := s.pending
			s.pending = nil
			s.mu.Unlock()
			if len(events) == 0 {
				break
			}
			for _, ev := range events {
				if err := s.handle(ctx, ev); err != nil && ctx.Err() == nil {
					log.FromContext(ctx).Error(err, "node simulator", "linode", ev.Label, "event", ev.Type)
				}
			}
		}
	}
}

func (s *Simulator) handle(ctx context.Context, ev emulator.InstanceEvent) error {
	if s.keep != nil && !s.keep(ev) {
		return nil
	}
	if ev.LKEClusterID == 0 {
		return s.handlePlain(ctx, ev)
	}
	switch ev.Type {
	case emulator.InstanceRunning:
		// The pool's labels and taints come from the API, which a fault may be failing; a kubelet
		// has them from its own configuration and registers regardless, so keep asking.
		var node *corev1.Node
		err := retry(ctx, func() (err error) {
			node, err = s.nodeFor(ctx, ev)
			return err
		})
		if err != nil || node == nil {
			return err
		}
		s.holdNotReady(node)
		create := func() error {
			if err := s.kube.Create(ctx, node); !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		}
		if err := retry(ctx, create); err != nil {
			return fmt.Errorf("registering node %s: %w", node.Name, err)
		}
		s.notify(Event{Registered: true, NodeName: node.Name, InstanceID: ev.InstanceID, PlanType: ev.PlanType, LinodeEventTime: ev.Time})
	case emulator.InstanceDraining:
		drainCtx, stop := context.WithCancel(ctx)
		s.mu.Lock()
		s.drains[ev.InstanceID] = stop
		s.mu.Unlock()
		go s.drain(drainCtx, ev)
	case emulator.InstanceStopped:
		if err := retry(ctx, func() error { return s.kubeletDown(ctx, ev.Label, ev.Time) }); err != nil {
			return fmt.Errorf("marking node %s not ready: %w", ev.Label, err)
		}
	case emulator.InstanceResumed:
		if err := retry(ctx, func() error { return s.kubeletBack(ctx, ev.Label) }); err != nil {
			return fmt.Errorf("marking node %s back: %w", ev.Label, err)
		}
	case emulator.InstanceDeleted:
		s.mu.Lock()
		if stop, ok := s.drains[ev.InstanceID]; ok {
			stop()
			delete(s.drains, ev.InstanceID)
		}
		s.mu.Unlock()
		return s.removeNode(ctx, ev, ev.Label)
	}
	return nil
}

// removeNode deletes the Node of a deleted Linode, as the cloud controller manager does.
func (s *Simulator) removeNode(ctx context.Context, ev emulator.InstanceEvent, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := retry(ctx, func() error { return client.IgnoreNotFound(s.kube.Delete(ctx, node)) })
	if err != nil {
		return fmt.Errorf("removing node %s: %w", node.Name, err)
	}
	s.notify(Event{NodeName: node.Name, InstanceID: ev.InstanceID, PlanType: ev.PlanType, LinodeEventTime: ev.Time})
	return nil
}

// kubeletDown marks a Node whose Linode stopped as the node lifecycle controller does once its
// kubelet is silent: Ready Unknown. kwok leaves the status alone from then on.
func (s *Simulator) kubeletDown(ctx context.Context, name string, at time.Time) error {
	node := &corev1.Node{}
	if err := s.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	stored := node.DeepCopy()
	metav1.SetMetaDataAnnotation(&node.ObjectMeta, AnnotationKwokStatus, "custom")
	if err := s.kube.Patch(ctx, node, client.MergeFrom(stored)); err != nil {
		return client.IgnoreNotFound(err)
	}
	stored = node.DeepCopy()
	unknown := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastTransitionTime: metav1.NewTime(at), LastHeartbeatTime: metav1.NewTime(at),
	}
	if i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }); i >= 0 {
		unknown.LastHeartbeatTime = node.Status.Conditions[i].LastHeartbeatTime
		node.Status.Conditions[i] = unknown
	} else {
		node.Status.Conditions = append(node.Status.Conditions, unknown)
	}
	return client.IgnoreNotFound(s.kube.Status().Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})))
}

// kubeletBack hands a Node whose Linode runs again back to kwok, which makes it Ready.
func (s *Simulator) kubeletBack(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := s.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	stored := node.DeepCopy()
	delete(node.Annotations, AnnotationKwokStatus)
	return client.IgnoreNotFound(s.kube.Patch(ctx, node, client.MergeFrom(stored)))
}

func (s *Simulator) notify(ev Event) {
	for _, fn := range s.observers {
		fn(ev)
	}
}

// nodeFor builds the Node the Linode's kubelet registers; nil when the Linode's pool is already
// gone, as its deletion event follows.
func (s *Simulator) nodeFor(ctx context.Context, ev emulator.InstanceEvent) (*corev1.Node, error) {
	plan, err := s.plan(ctx, ev.PlanType)
	if err != nil {
		return nil, err
	}
	capacity, allocatable := s.model.Resources(plan)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: ev.Label,
			Labels: map[string]string{
				corev1.LabelHostname:           ev.Label,
				corev1.LabelOSStable:           "linux",
				corev1.LabelArchStable:         "amd64",
				corev1.LabelInstanceTypeStable: ev.PlanType,
				corev1.LabelInstanceType:       ev.PlanType,
				corev1.LabelTopologyRegion:     ev.Region,
			},
			Annotations: map[string]string{AnnotationKwokNode: "fake"},
		},
		Spec: corev1.NodeSpec{ProviderID: nodeprovider.ProviderID(ev.InstanceID)},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			NodeInfo: corev1.NodeSystemInfo{
				Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: KubeletVersion(ev.K8sVersion),
			},
		},
	}
	// LKE configures its kubelets itself: the pool's labels and taints come from the emulator's
	// state, not through the public API, which a fault may have made unreachable.
	pool, found := lo.Find(s.emu.Pools(ev.LKEClusterID), func(p emulator.PoolInfo) bool { return p.ID == ev.LKEPoolID })
	if !found {
		return nil, nil
	}
	for key, value := range pool.Labels {
		node.Labels[key] = value
	}
	node.Labels[LabelLKEPoolID] = strconv.Itoa(pool.ID)
	for _, t := range pool.Taints {
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return node, nil
}

// KubeletVersion is the kubelet version a node reports for the Kubernetes version LKE installed:
// the enterprise tier's versions are full ("v1.31.8+lke1"), the standard tier's name a minor
// ("1.34"), of which a node runs a patch release. Empty for a plain Linode.
func KubeletVersion(lkeVersion string) string {
	switch {
	case lkeVersion == "":
		return ""
	case strings.HasPrefix(lkeVersion, "v"):
		return lkeVersion
	default:
		return "v" + lkeVersion + ".0"
	}
}

const (
	// drainInterval is how often a drain tries again the evictions a PodDisruptionBudget refused.
	drainInterval = 200 * time.Millisecond
	// evictionTimeout bounds one eviction: the client retries a refused one (429) for a while.
	evictionTimeout = time.Second
)

// drain cordons the Node of a Linode LKE recycles and evicts its pods, as LKE does before it
// deletes the Linode, then tells the emulator the node is drained. It stops when ctx is done: the
// Linode is gone.
func (s *Simulator) drain(ctx context.Context, ev emulator.InstanceEvent) {
	start := time.Now()
	err := wait.PollUntilContextCancel(ctx, drainInterval, true, func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		if err := s.kube.Get(ctx, client.ObjectKey{Name: ev.Label}, node); err != nil {
			// Not registered yet, or gone: nothing runs there.
			return apierrors.IsNotFound(err), nil
		}
		if !node.Spec.Unschedulable {
			stored := node.DeepCopy()
			node.Spec.Unschedulable = true
			if err := s.kube.Patch(ctx, node, client.MergeFrom(stored)); err != nil {
				return false, nil
			}
		}
		pods := &corev1.PodList{}
		if err := s.kube.List(ctx, pods, client.MatchingFields{"spec.nodeName": ev.Label}); err != nil {
			return false, nil
		}
		// Like kubectl drain, the drain is over once the evicted pods are gone, not when they start
		// terminating: the Linode goes right after.
		remaining := lo.Filter(pods.Items, func(pod corev1.Pod, _ int) bool { return drains(&pod) })
		evicting := lo.Filter(remaining, func(pod corev1.Pod, _ int) bool { return pod.DeletionTimestamp == nil })
		// A budget that allows no disruption answers 429, which the client retries for a while:
		// each pod's eviction goes on its own, for one round, and the next round tries again.
		var evictions sync.WaitGroup
		for i := range evicting {
			evictions.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, evictionTimeout)
				defer cancel()
				eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: evicting[i].Name, Namespace: evicting[i].Namespace}}
				_ = s.kube.SubResource("eviction").Create(ctx, &evicting[i], eviction)
			})
		}
		evictions.Wait()
		return len(remaining) == 0, nil
	})
	if err != nil {
		log.FromContext(ctx).Info("LKE deleted a recycled Linode before its node was drained", "node", ev.Label, "after", time.Since(start))
		return
	}
	s.mu.Lock()
	delete(s.drains, ev.InstanceID)
	s.mu.Unlock()
	log.FromContext(ctx).Info("drained a recycled node", "node", ev.Label, "in", time.Since(start))
	s.emu.FinishDrain(ev.InstanceID)
}

// drains reports whether a drain removes the pod: not a DaemonSet's or a static pod, and not
// finished.
func drains(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	owner := metav1.GetControllerOf(pod)
	return owner == nil || owner.Kind != "DaemonSet"
}

// plan reads a Linode plan once; plans do not change while a cluster runs.
func (s *Simulator) plan(ctx context.Context, id string) (linodego.LinodeType, error) {
	s.mu.Lock()
	plan, ok := s.plans[id]
	s.mu.Unlock()
	if ok {
		return plan, nil
	}
	read, err := s.linode.GetType(ctx, id)
	if err != nil {
		return linodego.LinodeType{}, fmt.Errorf("reading plan %s: %w", id, err)
	}
	s.mu.Lock()
	s.plans[id] = *read
	s.mu.Unlock()
	return *read, nil
}

// retry rides out a busy or restarting apiserver for up to 2 minutes, as a kubelet keeps trying
// to register its node, and returns the last error.
func retry(ctx context.Context, fn func() error) error {
	var last error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	return last
}
