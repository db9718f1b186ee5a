package sizing

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// UnboundPodsIndex names the index ReadFromInformers adds to the pod informer; unboundPodsKey is
// its one key, that of the pods no node is bound to.
const (
	UnboundPodsIndex = "karpenter.k8s.linode/sizing-unbound"
	unboundPodsKey   = "unbound"
)

// ReadFromInformers has the policy read the unbound pods, and the NodePools' NodeClaims,
// straight from the informers of the cache that serves kubeClient's reads (the manager's),
// through indexes of its own. A listing, even without deep copies, copies every object into a
// new slice: megabytes per call with thousands of pods pending, and hundreds of kilobytes with
// hundreds of nodes, which core asks for several times a round. Caches whose informers have no
// index of their own to read (a multi-namespace cache) are listed as before.
func (p *Policy) ReadFromInformers(ctx context.Context, informers crcache.Informers) error {
	pods, err := indexedStore(ctx, informers, &corev1.Pod{}, toolscache.Indexers{UnboundPodsIndex: indexUnbound})
	if err != nil {
		return fmt.Errorf("indexing unbound pods: %w", err)
	}
	if pods != nil {
		p.podIndex.Store(pods)
	}
	nodeClaims, err := indexedStore(ctx, informers, &karpv1.NodeClaim{}, toolscache.Indexers{NodePoolNodeClaimsIndex: indexNodePool})
	if err != nil {
		return fmt.Errorf("indexing NodeClaims by NodePool: %w", err)
	}
	if nodeClaims != nil {
		p.nodeClaimIndex.Store(nodeClaims)
	}
	return nil
}

// indexedStore adds the indexers to the informer of obj's kind and returns its store, or nil when
// the informer has no store of its own to read.
func indexedStore(ctx context.Context, informers crcache.Informers, obj client.Object, indexers toolscache.Indexers) (*informerStore, error) {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	indexed, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, nil
	}
	if err := informer.AddIndexers(indexers); err != nil {
		return nil, err
	}
	return &informerStore{Indexer: indexed.GetIndexer(), synced: informer.HasSynced}, nil
}

// informerStore is an informer's store, and whether it has synced: until then, listing through
// the cache waits for it.
type informerStore struct {
	toolscache.Indexer
	synced func() bool
}

// NodePoolNodeClaimsIndex names the index ReadFromInformers adds to the NodeClaim informer:
// NodeClaims by the NodePool their label names.
const NodePoolNodeClaimsIndex = "karpenter.k8s.linode/sizing-nodepool"

func indexNodePool(obj any) ([]string, error) {
	if nodeClaim, ok := obj.(*karpv1.NodeClaim); ok {
		if nodePool, ok := nodeClaim.Labels[karpv1.NodePoolLabelKey]; ok {
			return []string{nodePool}, nil
		}
	}
	return nil, nil
}

func indexUnbound(obj any) ([]string, error) {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName == "" {
		return []string{unboundPodsKey}, nil
	}
	return nil, nil
}

// unboundPods are the pods no node is bound to, as the cache holds them: they are only read.
// stored says that they are the informer's store's own pods, not copies.
func (p *Policy) unboundPods(ctx context.Context) (pods []*corev1.Pod, stored bool, err error) {
	if index := p.podIndex.Load(); index != nil && index.synced() {
		objects, err := index.ByIndex(UnboundPodsIndex, unboundPodsKey)
		if err != nil {
			return nil, false, fmt.Errorf("reading pending pods: %w", err)
		}
		pods := make([]*corev1.Pod, 0, len(objects))
		for _, o := range objects {
			if pod, ok := o.(*corev1.Pod); ok {
				pods = append(pods, pod)
			}
		}
		return pods, true, nil
	}
	var list corev1.PodList
	// The manager's cache indexes pods by node name, as core's own listing of pending pods uses.
	if err := p.kubeClient.List(ctx, &list, client.MatchingFields{"spec.nodeName": ""}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, fmt.Errorf("listing pending pods: %w", err)
	}
	pods = make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, false, nil
}

// nodeClaims counts the NodePool's NodeClaims that are not being deleted: its nodes, launched or
// not.
func (p *Policy) nodeClaims(ctx context.Context, nodePool string) (int, error) {
	if index := p.nodeClaimIndex.Load(); index != nil && index.synced() {
		objects, err := index.ByIndex(NodePoolNodeClaimsIndex, nodePool)
		if err != nil {
			return 0, fmt.Errorf("reading the NodePool's NodeClaims: %w", err)
		}
		n := 0
		for _, o := range objects {
			if nodeClaim, ok := o.(*karpv1.NodeClaim); ok && nodeClaim.DeletionTimestamp.IsZero() {
				n++
			}
		}
		return n, nil
	}
	var list karpv1.NodeClaimList
	if err := p.kubeClient.List(ctx, &list, client.MatchingLabels{karpv1.NodePoolLabelKey: nodePool}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("listing the NodePool's NodeClaims: %w", err)
	}
	n := 0
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n, nil
}
