package cloudprovider_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/pkg/test/lkecloud"
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
	informers, err := crcache.New(env.Config, crcache.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	kubeClient, err := client.New(env.Config, client.Options{Scheme: scheme.Scheme, Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		b.Fatal(err)
	}
	// GetInstanceTypes reads the NodeClass's kubelet settings, not its readiness.
	nodeClass := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := kubeClient.Create(ctx, nodeClass); err != nil {
		b.Fatal(err)
	}

	e := emulator.New(emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	if err := e.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	if _, err := e.AddLKECluster(clusterName, region, string(lke.TierStandard)); err != nil {
		b.Fatal(err)
	}
	cloud, err := lkecloud.New(ctx, e.NewClient(), clusterName, kubeClient)
	if err != nil {
		b.Fatal(err)
	}
	cp := cloud.CloudProvider
	nodePool := nodePoolFor("default", nodeClass)

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
