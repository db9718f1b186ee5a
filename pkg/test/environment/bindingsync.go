package environment

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	coretest "sigs.k8s.io/karpenter/pkg/test"
)

// bindingSyncingClient is core's CacheSyncingClient (the client its environment gives tests that
// ask for field indexers) but for pod bindings. After each create, core's client polls its cache
// for the object it created, a second at most; but the API server answers a Binding's create
// with a Status, which the client decodes over the Binding and empties its name, so every bind
// waited the whole second, and core's ExpectProvisioned binds pod by pod: half a minute for
// thirty pods. A bind waits instead until the cache shows the pod on its node, which is what the
// test reads next.
type bindingSyncingClient struct {
	*coretest.CacheSyncingClient
}

func (c bindingSyncingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	binding, ok := obj.(*corev1.Binding)
	if !ok {
		return c.CacheSyncingClient.Create(ctx, obj, opts...)
	}
	podKey, node := client.ObjectKeyFromObject(binding), binding.Target.Name
	if err := c.Client.Create(ctx, binding, opts...); err != nil {
		return err
	}
	pod := &corev1.Pod{}
	// The same bound as core's wait: a hundred reads 10 ms apart, then the test goes on, as core's.
	_ = wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 10 * time.Millisecond, Steps: 100}, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, podKey, pod)
		return err == nil && pod.Spec.NodeName == node, ctx.Err()
	})
	return nil
}
