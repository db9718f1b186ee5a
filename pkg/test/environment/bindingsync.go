package environment

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	coretest "sigs.k8s.io/karpenter/pkg/test"
)

// bindingSyncingClient is core's CacheSyncingClient (the client its environment gives tests that
// ask for field indexers) but for pod bindings. After each create, core's client polls its cache
// for the object it created, a second at most; but the API server answers a Binding's create
// with a Status, which the client decodes over the Binding and empties its name, so every bind
// waited the whole second, and core's ExpectProvisioned binds pod by pod: half a minute for
// thirty pods. A Binding goes straight to the API server: core's ExpectManualBinding then waits
// itself until the cache shows the pod on its node.
type bindingSyncingClient struct {
	*coretest.CacheSyncingClient
}

func (c bindingSyncingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*corev1.Binding); ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	return c.CacheSyncingClient.Create(ctx, obj, opts...)
}
