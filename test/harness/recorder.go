package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// PoolLabel labels every benchmark pod with the NodePool it is pinned to, so each run's pods,
// NodeClaims and nodes can be told apart.
const PoolLabel = "bench.karpenter.k8s.linode/pool"

// Recorder notes when each pod, Node and NodeClaim first reached each state, at the moment its
// informer hears of it. Kubernetes timestamps have a resolution of one second, too coarse for
// intervals of a few seconds, so the times are this process's clock, the clock the emulator's
// request log uses too.
type Recorder struct {
	mu     sync.Mutex
	pods   map[string]*PodTimes
	nodes  map[string]time.Time
	claims map[string]*ClaimTimes
	// claimChanged is when a NodeClaim was last created or deleted, changes how many times.
	claimChanged time.Time
	changes      int
}

// PodTimes is what was seen of a pod: its pool, when it was first seen and first ran, on which
// node.
type PodTimes struct {
	Pool             string
	Created, Running time.Time
	Node             string
}

// ClaimTimes is what was seen of a NodeClaim: its NodePool, when it was first seen and launched,
// its node.
type ClaimTimes struct {
	Pool              string
	Created, Launched time.Time
	Node              string
}

// StartRecorder watches the cluster's pods, Nodes and NodeClaims until ctx is done.
func StartRecorder(ctx context.Context, kubeconfig string) (*Recorder, error) {
	informers, err := NewInformers(kubeconfig)
	if err != nil {
		return nil, err
	}
	r := &Recorder{pods: map[string]*PodTimes{}, nodes: map[string]time.Time{}, claims: map[string]*ClaimTimes{}}
	for obj, observe := range map[client.Object]func(any){
		&corev1.Pod{}:       r.observePod,
		&corev1.Node{}:      r.observeNode,
		&karpv1.NodeClaim{}: r.observeClaim,
	} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj any) { observe(obj) },
		}); err != nil {
			return nil, err
		}
	}
	claims, err := informers.GetInformer(ctx, &karpv1.NodeClaim{})
	if err != nil {
		return nil, err
	}
	if _, err := claims.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { r.claimChange() }}); err != nil {
		return nil, err
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the cluster: caches did not sync")
	}
	return r, nil
}

// NewInformers is a cache of the cluster's objects, for informers.
func NewInformers(kubeconfig string) (cache.Cache, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The defaults (5 requests a second) are for controllers sharing an apiserver; watching needs
	// few requests, but listing 1,000 pods at start should not queue.
	config.QPS, config.Burst = 100, 200
	return cache.New(config, cache.Options{Scheme: scheme.Scheme})
}

func (r *Recorder) observePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[PoolLabel] == "" {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[pod.Name]
	if p == nil {
		p = &PodTimes{Pool: pod.Labels[PoolLabel], Created: now}
		r.pods[pod.Name] = p
	}
	if p.Running.IsZero() && pod.Status.Phase == corev1.PodRunning && nodesim.PodReady(pod) {
		p.Running, p.Node = now, pod.Spec.NodeName
	}
}

func (r *Recorder) observeNode(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.nodes[node.Name]; !seen {
		r.nodes[node.Name] = now
	}
}

func (r *Recorder) observeClaim(obj any) {
	claim, ok := obj.(*karpv1.NodeClaim)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.claims[claim.Name]
	if c == nil {
		c = &ClaimTimes{Pool: claim.Labels[karpv1.NodePoolLabelKey], Created: now}
		r.claims[claim.Name] = c
		r.claimChanged = now
		r.changes++
	}
	if c.Launched.IsZero() && claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched) {
		c.Launched = now
	}
	if claim.Status.NodeName != "" {
		c.Node = claim.Status.NodeName
	}
}

func (r *Recorder) claimChange() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claimChanged = time.Now()
	r.changes++
}

// ClaimsQuietFor tells whether no NodeClaim was created or deleted in the last d.
func (r *Recorder) ClaimsQuietFor(d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.claimChanged) >= d
}

// ClaimChanges counts the NodeClaims created and deleted so far.
func (r *Recorder) ClaimChanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changes
}

// PodsOf returns a copy of what was seen of the pool's pods.
func (r *Recorder) PodsOf(pool string) []PodTimes {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []PodTimes
	for _, p := range r.pods {
		if p.Pool == pool {
			out = append(out, *p)
		}
	}
	return out
}

// ClaimsOf returns a copy of what was seen of the pool's NodeClaims.
func (r *Recorder) ClaimsOf(pool string) []ClaimTimes {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ClaimTimes
	for _, c := range r.claims {
		if c.Pool == pool {
			out = append(out, *c)
		}
	}
	return out
}

// NodeSeen is when the Node was first seen; zero if never.
func (r *Recorder) NodeSeen(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[name]
}

// Running counts the pool's pods that have run.
func (r *Recorder) Running(pool string) int {
	n := 0
	for _, p := range r.PodsOf(pool) {
		if !p.Running.IsZero() {
			n++
		}
	}
	return n
}
