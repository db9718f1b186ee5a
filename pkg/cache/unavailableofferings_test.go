package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
)

func TestAnOfferingReturnsWhenItsOwnTTLPasses(t *testing.T) {
	ctx := context.Background()
	offerings := cache.NewUnavailableOfferings(2 * time.Second)
	offerings.MarkUnavailableFor(ctx, "Linode refused it", 50*time.Millisecond, "g6-dedicated-8", "us-ord")
	offerings.MarkUnavailable(ctx, "no capacity", "g6-standard-2", "us-ord")
	marked := offerings.SeqNum()
	if !offerings.IsUnavailable("g6-dedicated-8", "us-ord") || !offerings.IsUnavailable("g6-standard-2", "us-ord") {
		t.Fatal("a marked offering is available")
	}
	if offerings.IsUnavailable("g6-dedicated-8", "us-east") {
		t.Fatal("the plan is unavailable in a region that did not refuse it")
	}
	deadline := time.Now().Add(5 * time.Second)
	for offerings.IsUnavailable("g6-dedicated-8", "us-ord") {
		if time.Now().After(deadline) {
			t.Fatal("the offering stayed unavailable long after its TTL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !offerings.IsUnavailable("g6-standard-2", "us-ord") {
		t.Fatal("an offering with the default TTL returned with the shorter one")
	}
	for offerings.SeqNum() == marked {
		if time.Now().After(deadline) {
			t.Fatal("the sequence number did not move when the offering returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
