package cloudprovider_test

import (
	"context"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

// BenchmarkGetInstanceTypes is what core's provisioner and disruption controllers call for every
// NodePool: the NodeClass read through an informer cache over a real kube-apiserver, as the
// controller's manager serves it, then the instance types of the plans (a warm catalogue).
func BenchmarkGetInstanceTypes(b *testing.B) {
	env, err := environment.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	// Cleanups run last first: the informers' watches end before the apiserver stops, which
	// would otherwise wait for them.
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	kubeClient, err := env.CachedClient(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// GetInstanceTypes reads the NodeClass's kubelet settings, not its readiness.
	nodeClass := test.LinodeNodeClass()
	if err := kubeClient.Create(ctx, nodeClass); err != nil {
		b.Fatal(err)
	}

	e, err := test.StartEmulator()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	cloud, err := test.NewLKE(ctx, e, kubeClient)
	if err != nil {
		b.Fatal(err)
	}
	cp := cloud.CloudProvider
	nodePool := test.NodePool(nodeClass)

	// The first read starts the NodeClass informer; wait until the cache holds the NodeClass.
	deadline := time.Now().Add(30 * time.Second)
	for {
		its, err := cp.GetInstanceTypes(ctx, nodePool)
		if err == nil && len(its) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("no instance types after 30s: %d, %v", len(its), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if its, err := cp.GetInstanceTypes(ctx, nodePool); err != nil || len(its) == 0 {
			b.Fatalf("%d instance types, %v", len(its), err)
		}
	}
}
