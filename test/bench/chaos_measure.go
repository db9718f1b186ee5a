package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// lossMonitor watches for pods evicted without a drain: a pod that is still running, not being
// deleted, when its Linode stops running or its Node is gone. Karpenter's own deletions drain a
// node (its pods are evicted, respecting PodDisruptionBudgets) before the Linode is deleted, so a
// pod caught on a vanished machine is one a user lost without warning.
type lossMonitor struct {
	cluster *localcluster.Cluster
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	// lost are the lost pods' names, with the node they were on.
	lost map[string]string
}

// lossPollInterval is shorter than the time Karpenter's termination takes from a drained node to
// its deleted Linode, so a pod still on the node when the Linode goes is seen.
const lossPollInterval = 250 * time.Millisecond

func startLossMonitor(ctx context.Context, cluster *localcluster.Cluster) *lossMonitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &lossMonitor{cluster: cluster, cancel: cancel, done: make(chan struct{}), lost: map[string]string{}}
	go func() {
		defer close(m.done)
		t := time.NewTicker(lossPollInterval)
		defer t.Stop()
		for {
			m.check(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// check looks once. While kube-apiserver does not answer it sees nothing; the pods lost then are
// still on their vanished nodes at the next look, unless they were already deleted.
func (m *lossMonitor) check(ctx context.Context) {
	// The Linodes first: a pod listed after its Linode was seen running is not taken for lost.
	linodeRunning := map[string]bool{}
	for _, instance := range m.cluster.Emulator.Instances() {
		linodeRunning[nodeprovider.ProviderID(instance.ID)] = instance.Status == "running"
	}
	var nodes corev1.NodeList
	if err := m.cluster.Kube.List(ctx, &nodes); err != nil {
		return
	}
	var pods corev1.PodList
	if err := m.cluster.Kube.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{poolLabel: chaosPool}); err != nil {
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

// fleetMismatches counts, as things stand, the Linodes no NodeClaim accounts for (by its provider
// ID or by the tag of the LKE pool the Linode is in) and the Linodes or Nodes beyond one per
// NodeClaim.
func fleetMismatches(ctx context.Context, cluster *localcluster.Cluster) (leaked, duplicates int, err error) {
	var claims karpv1.NodeClaimList
	if err := cluster.Kube.List(ctx, &claims); err != nil {
		return 0, 0, err
	}
	var nodes corev1.NodeList
	if err := cluster.Kube.List(ctx, &nodes); err != nil {
		return 0, 0, err
	}
	leaked, duplicates = countMismatches(claims.Items, nodes.Items, cluster.Emulator.Pools(0), cluster.Emulator.Instances())
	return leaked, duplicates, nil
}

func countMismatches(claims []karpv1.NodeClaim, nodes []corev1.Node, pools []emulator.PoolInfo,
	instances []emulator.InstanceInfo) (leaked, duplicates int) {
	claimByProviderID := map[string]string{}
	claimByTag := map[string]string{}
	for _, claim := range claims {
		claimByTag[nodeprovider.NodeClaimTag(claim.Name)] = claim.Name
		if claim.Status.ProviderID != "" {
			claimByProviderID[claim.Status.ProviderID] = claim.Name
		}
	}
	claimByPool := map[int]string{}
	for _, pool := range pools {
		for _, tag := range pool.Tags {
			if name, ok := claimByTag[tag]; ok {
				claimByPool[pool.ID] = name
			}
		}
	}
	claimByLinode := map[string]string{}
	linodesOf := map[string]int{}
	for _, instance := range instances {
		providerID := nodeprovider.ProviderID(instance.ID)
		name, ok := claimByProviderID[providerID]
		if !ok {
			name, ok = claimByPool[instance.LKEPoolID]
		}
		if !ok {
			leaked++
			continue
		}
		claimByLinode[providerID] = name
		linodesOf[name]++
	}
	nodesOf := map[string]int{}
	for _, node := range nodes {
		if name, ok := claimByLinode[node.Spec.ProviderID]; ok && node.DeletionTimestamp.IsZero() {
			nodesOf[name]++
		}
	}
	for _, claim := range claims {
		duplicates += max(0, max(linodesOf[claim.Name], nodesOf[claim.Name])-1)
	}
	return leaked, duplicates
}
