package bench

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

// poolLabel labels every benchmark pod with the NodePool it is pinned to, so each run's pods,
// NodeClaims and nodes can be told apart.
const poolLabel = "bench.karpenter.k8s.linode/pool"

// recorder notes when each pod, Node and NodeClaim first reached each state, at the moment its
// informer hears of it. Kubernetes timestamps have a resolution of one second, too coarse for
// intervals of a few seconds, so the times are this process's clock, the clock the emulator's
// request log uses too.
type recorder struct {
	mu     sync.Mutex
	pods   map[string]*podTimes
	nodes  map[string]time.Time
	claims map[string]*claimTimes
	// claimChanged is when a NodeClaim was last created or deleted, changes how many times.
	claimChanged time.Time
	changes      int
}

type podTimes struct {
	pool             string
	created, running time.Time
	node             string
}

type claimTimes struct {
	pool              string
	created, launched time.Time
	node              string
}

// startRecorder watches the cluster's pods, Nodes and NodeClaims until ctx is done.
func startRecorder(ctx context.Context, kubeconfig string) (*recorder, error) {
	informers, err := newInformers(kubeconfig)
	if err != nil {
		return nil, err
	}
	r := &recorder{pods: map[string]*podTimes{}, nodes: map[string]time.Time{}, claims: map[string]*claimTimes{}}
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

// newInformers is a cache of the cluster's objects, for informers.
func newInformers(kubeconfig string) (cache.Cache, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The defaults (5 requests a second) are for controllers sharing an apiserver; watching needs
	// few requests, but listing 1,000 pods at start should not queue.
	config.QPS, config.Burst = 100, 200
	return cache.New(config, cache.Options{Scheme: scheme.Scheme})
}

func (r *recorder) observePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[poolLabel] == "" {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[pod.Name]
	if p == nil {
		p = &podTimes{pool: pod.Labels[poolLabel], created: now}
		r.pods[pod.Name] = p
	}
	if p.running.IsZero() && pod.Status.Phase == corev1.PodRunning && nodesim.PodReady(pod) {
		p.running, p.node = now, pod.Spec.NodeName
	}
}

func (r *recorder) observeNode(obj any) {
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

func (r *recorder) observeClaim(obj any) {
	claim, ok := obj.(*karpv1.NodeClaim)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.claims[claim.Name]
	if c == nil {
		c = &claimTimes{pool: claim.Labels[karpv1.NodePoolLabelKey], created: now}
		r.claims[claim.Name] = c
		r.claimChanged = now
		r.changes++
	}
	if c.launched.IsZero() && claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched) {
		c.launched = now
	}
	if claim.Status.NodeName != "" {
		c.node = claim.Status.NodeName
	}
}

func (r *recorder) claimChange() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claimChanged = time.Now()
	r.changes++
}

// claimsQuietFor tells whether no NodeClaim was created or deleted in the last d.
func (r *recorder) claimsQuietFor(d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.claimChanged) >= d
}

// claimChanges counts the NodeClaims created and deleted so far.
func (r *recorder) claimChanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changes
}

// podsOf returns a copy of what was seen of the pool's pods.
func (r *recorder) podsOf(pool string) []podTimes {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []podTimes
	for _, p := range r.pods {
		if p.pool == pool {
			out = append(out, *p)
		}
	}
	return out
}

// claimsOf returns a copy of what was seen of the pool's NodeClaims.
func (r *recorder) claimsOf(pool string) []claimTimes {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []claimTimes
	for _, c := range r.claims {
		if c.pool == pool {
			out = append(out, *c)
		}
	}
	return out
}

// nodeSeen is when the Node was first seen; zero if never.
func (r *recorder) nodeSeen(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[name]
}

// running counts the pool's pods that have run.
func (r *recorder) running(pool string) int {
	n := 0
	for _, p := range r.podsOf(pool) {
		if !p.running.IsZero() {
			n++
		}
	}
	return n
}
