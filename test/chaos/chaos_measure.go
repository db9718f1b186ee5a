package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// lossMonitor watches for pods evicted without a drain: a pod still running, not yet being
// deleted, when its Linode stopped running or its Node went away. Karpenter's own deletions drain
// a node (its pods are evicted, respecting PodDisruptionBudgets) before they delete the Linode,
// so a pod that begins to terminate after its Linode went, or is caught running on a vanished
// machine, is one a user lost without warning. It hears of each pod's deletion from an informer,
// at the moment it happens, and also looks every lossPollInterval for pods left running on a
// machine that is gone, which nothing may ever delete.
type lossMonitor struct {
	cluster *localcluster.Cluster
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	// lost are the lost pods' names, with the node they were on.
	lost map[string]string
	// nodes are the Nodes' provider IDs by name, as last heard.
	nodes map[string]string
}

const lossPollInterval = time.Second

func startLossMonitor(ctx context.Context, cluster *localcluster.Cluster) (*lossMonitor, error) {
	ctx, cancel := context.WithCancel(ctx)
	m := &lossMonitor{cluster: cluster, cancel: cancel, done: make(chan struct{}), lost: map[string]string{}, nodes: map[string]string{}}
	informers, err := harness.NewInformers(cluster.KubeconfigPath)
	if err != nil {
		cancel()
		return nil, err
	}
	for obj, handler := range map[client.Object]toolscache.ResourceEventHandler{
		&corev1.Node{}: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    m.observeNode,
			UpdateFunc: func(_, obj any) { m.observeNode(obj) },
			DeleteFunc: m.forgetNode,
		},
		&corev1.Pod{}: toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) {
				if pod, ok := obj.(*corev1.Pod); ok && !pod.DeletionTimestamp.IsZero() {
					m.podGoing(pod)
				}
			},
			DeleteFunc: m.podGoing,
		},
	} {
		informer, err := informers.GetInformer(ctx, obj)
		if err == nil {
			_, err = informer.AddEventHandler(handler)
		}
		if err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("watching pods and nodes: caches did not sync")
	}
	go func() {
		defer close(m.done)
		t := time.NewTicker(lossPollInterval)
		defer t.Stop()
		for {
			m.checkRunning(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m, nil
}

func (m *lossMonitor) observeNode(obj any) {
	if node, ok := obj.(*corev1.Node); ok {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.nodes[node.Name] = node.Spec.ProviderID
	}
}

func (m *lossMonitor) forgetNode(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if node, ok := obj.(*corev1.Node); ok {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.nodes, node.Name)
	}
}

// podGoing hears of a pod being deleted (or deleted at once): if it was running and its machine
// is already gone, it was not drained.
func (m *lossMonitor) podGoing(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[harness.PoolLabel] != chaosPool || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning {
		return
	}
	linodeRunning := m.linodesRunning()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.lost[pod.Name]; seen {
		return
	}
	providerID, nodeExists := m.nodes[pod.Spec.NodeName]
	if !nodeExists || !linodeRunning[providerID] {
		m.lost[pod.Name] = pod.Spec.NodeName
	}
}

func (m *lossMonitor) linodesRunning() map[string]bool {
	running := map[string]bool{}
	for _, instance := range m.cluster.Emulator.Instances() {
		running[nodeprovider.ProviderID(instance.ID)] = instance.Status == "running"
	}
	return running
}

// checkRunning looks for pods still running, not being deleted, on a machine that is gone.
func (m *lossMonitor) checkRunning(ctx context.Context) {
	// The Linodes first: a pod listed after its Linode was seen running is not taken for lost.
	linodeRunning := m.linodesRunning()
	var nodes corev1.NodeList
	if err := m.cluster.Kube.List(ctx, &nodes); err != nil {
		return
	}
	var pods corev1.PodList
	if err := m.cluster.Kube.List(ctx, &pods, client.InNamespace(harness.Namespace), client.MatchingLabels{harness.PoolLabel: chaosPool}); err != nil {
		return
	}
	providerIDs := map[string]string{}
	for _, node := range nodes.Items {
		providerIDs[node.Name] = node.Spec.ProviderID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" || !pod.DeletionTimestamp.IsZero() || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		providerID, nodeExists := providerIDs[pod.Spec.NodeName]
		if !nodeExists || !linodeRunning[providerID] {
			m.lost[pod.Name] = pod.Spec.NodeName
		}
	}
}

// stop stops watching; it can be called more than once.
func (m *lossMonitor) stop() {
	m.cancel()
	<-m.done
}

func (m *lossMonitor) lostCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.lost)
}

// lostPods names the lost pods and their nodes, sorted.
func (m *lossMonitor) lostPods() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for pod, node := range m.lost {
		out = append(out, pod+" on "+node)
	}
	slices.Sort(out)
	return out
}
