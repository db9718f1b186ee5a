package instancetype_test

import (
	"context"
	"testing"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// BenchmarkList is List on a warm catalogue, as every scheduling round and every launch calls it.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	c := newCatalogue(b, "us-ord", mode.LKE)
	for _, bc := range []struct {
		name    string
		kubelet *v1.KubeletConfiguration
	}{
		{name: "default kubelet"},
		{name: "custom kubelet", kubelet: &v1.KubeletConfiguration{
			MaxPods:      lo.ToPtr[int32](58),
			KubeReserved: map[string]v1.ReservedQuantity{"memory": "1Gi"},
			EvictionHard: map[string]v1.EvictionThreshold{"memory.available": "200Mi"},
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			nodeClass := defaultNodeClass()
			nodeClass.Spec.Kubelet = bc.kubelet
			if _, err := c.provider.List(ctx, nodeClass); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.provider.List(ctx, nodeClass); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListCold is List after the unavailable offerings changed, which rebuilds every
// instance type: the cost a launch failing for lack of capacity adds to the next round.
func BenchmarkListCold(b *testing.B) {
	ctx := context.Background()
	c := newCatalogue(b, "us-ord", mode.LKE)
	nodeClass := defaultNodeClass()
	b.ReportAllocs()
	for b.Loop() {
		c.unavailable.MarkUnavailable(ctx, "insufficient capacity", "g6-standard-2", "us-ord")
		if _, err := c.provider.List(ctx, nodeClass); err != nil {
			b.Fatal(err)
		}
	}
}
