package environment

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldIndex is an index the informer cache keeps, as the controller's manager keeps its own.
type FieldIndex struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// PodNodeNameIndex indexes pods by node name, as core's provisioner lists pending pods.
var PodNodeNameIndex = FieldIndex{
	Object:  &corev1.Pod{},
	Field:   "spec.nodeName",
	Extract: func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} },
}

// CachedClient is a client that reads through informers over the apiserver and writes to it, as
// the controller's manager serves reads. The informers run until ctx ends, which must come
// before Stop: the apiserver waits for open watches when it stops.
func (e *Environment) CachedClient(ctx context.Context, indexes ...FieldIndex) (client.Client, error) {
	kubeClient, _, err := e.CachedClientAndInformers(ctx, indexes...)
	return kubeClient, err
}

// CachedClientAndInformers is CachedClient with the informers it reads through, for what reads
// them directly as the controller reads its manager's cache.
func (e *Environment) CachedClientAndInformers(ctx context.Context, indexes ...FieldIndex) (client.Client, crcache.Cache, error) {
	informers, err := crcache.New(e.Config, crcache.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("building the informer cache: %w", err)
	}
	for _, index := range indexes {
		if err := informers.IndexField(ctx, index.Object, index.Field, index.Extract); err != nil {
			return nil, nil, fmt.Errorf("indexing %s: %w", index.Field, err)
		}
	}
	go func() { _ = informers.Start(ctx) }()
	kubeClient, err := client.New(e.Config, client.Options{Scheme: scheme.Scheme, Cache: &client.CacheOptions{Reader: informers}})
	return kubeClient, informers, err
}
