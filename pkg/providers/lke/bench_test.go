package lke_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awslabs/operatorpkg/option"

	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

// BenchmarkList lists 1,000 pools: with a fresh listing every time (two pages from the emulator,
// decoded by linodego), and from the shared listing that Get and List reuse between refreshes.
func BenchmarkList(b *testing.B) {
	for _, bc := range []struct {
		name string
		ttl  []option.Function[lke.Options]
	}{
		{"1000 pools, listed every time", []option.Function[lke.Options]{lke.WithListingTTL(0)}},
		{"1000 pools, shared listing", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, fixtureOptions{provider: bc.ttl})
			createPools(b, f, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				nodes, err := f.provider.List(context.Background())
				if err != nil || len(nodes) != 1000 {
					b.Fatalf("%d nodes, %v", len(nodes), err)
				}
			}
		})
	}
}

// BenchmarkCreate launches nodes through the emulator: a listing when the shared one is stale,
// the pool create and the read-back that finds its Linode.
func BenchmarkCreate(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim(fmt.Sprintf("default-%06d", i)), plans()); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
