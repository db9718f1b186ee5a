package bench

import (
	"context"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

// BenchmarkSizingLatency is the sizing-latency scenario's memo miss as a Go benchmark, for
// go test -cpuprofile: each op is a GetInstanceTypes call after one more pending pod reached the
// cache; only the call is timed.
func BenchmarkSizingLatency(b *testing.B) {
	ctx, err := planner.ControllerContext(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	f, err := newSizingFixture(ctx, sizingMix{pods: sizingLatencyPods, shapes: sizingLatencyShapes})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.close() })
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := f.addPendingPod(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := f.call(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
