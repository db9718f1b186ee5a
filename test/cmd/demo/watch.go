package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// pollInterval is how often the watcher looks at the cluster; the timeline's precision.
const pollInterval = 200 * time.Millisecond

// watcher records when each pod, NodeClaim, Node and Linode first reached each state, by looking
// at the apiserver and the emulator every pollInterval. The timeline is built from these
// observations, so it shows what happened, not what was expected.
type watcher struct {
	cluster *localcluster.Cluster

	mu      sync.Mutex
	pods    map[string]*podRecord
	claims  map[string]*claimRecord
	nodes   map[string]time.Time // name -> registered
	linodes map[int]*linodeRecord
}

type podRecord struct {
	pending, running time.Time
	nodeName         string
}

type claimRecord struct {
	created, launched, registered, initialized time.Time
	nodeName, providerID, plan                 string
}

type linodeRecord struct {
	plan, region, label string
	created, gone       time.Time
}

func newWatcher(cluster *localcluster.Cluster) *watcher {
	return &watcher{cluster: cluster, pods: map[string]*podRecord{}, claims: map[string]*claimRecord{},
		nodes: map[string]time.Time{}, linodes: map[int]*linodeRecord{}}
}

func (w *watcher) run(ctx context.Context) {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		w.observe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (w *watcher) observe(ctx context.Context) {
	var pods corev1.PodList
	var claims karpv1.NodeClaimList
	var nodes corev1.NodeList
	if w.cluster.Kube.List(ctx, &pods, client.InNamespace(demoNamespace), client.MatchingLabels{"app": deploymentName}) != nil ||
		w.cluster.Kube.List(ctx, &claims) != nil || w.cluster.Kube.List(ctx, &nodes) != nil {
		return
	}
	instances := w.cluster.Emulator.Instances()
	now := time.Now()

	w.mu.Lock()
	defer w.mu.Unlock()
	for _, pod := range pods.Items {
		r := w.pods[pod.Name]
		if r == nil {
			r = &podRecord{}
			w.pods[pod.Name] = r
		}
		if r.pending.IsZero() && pod.Status.Phase == corev1.PodPending {
			r.pending = now
		}
		if r.running.IsZero() && pod.Status.Phase == corev1.PodRunning && nodesim.PodReady(&pod) {
			r.running, r.nodeName = now, pod.Spec.NodeName
		}
	}
	for _, claim := range claims.Items {
		r := w.claims[claim.Name]
		if r == nil {
			r = &claimRecord{created: now}
			w.claims[claim.Name] = r
		}
		conditions := claim.StatusConditions()
		firstSeen(&r.launched, now, conditions.IsTrue(karpv1.ConditionTypeLaunched))
		firstSeen(&r.registered, now, conditions.IsTrue(karpv1.ConditionTypeRegistered))
		firstSeen(&r.initialized, now, conditions.IsTrue(karpv1.ConditionTypeInitialized))
		r.nodeName, r.providerID = claim.Status.NodeName, claim.Status.ProviderID
		r.plan = claim.Labels[corev1.LabelInstanceTypeStable]
	}
	for _, node := range nodes.Items {
		if _, ok := w.nodes[node.Name]; !ok {
			w.nodes[node.Name] = now
		}
	}
	alive := map[int]bool{}
	for _, in := range instances {
		alive[in.ID] = true
		if _, ok := w.linodes[in.ID]; !ok {
			w.linodes[in.ID] = &linodeRecord{plan: in.Type, region: in.Region, label: in.Label, created: now}
		}
	}
	for id, r := range w.linodes {
		if !alive[id] && r.gone.IsZero() {
			r.gone = now
		}
	}
}

func firstSeen(at *time.Time, now time.Time, happened bool) {
	if at.IsZero() && happened {
		*at = now
	}
}
