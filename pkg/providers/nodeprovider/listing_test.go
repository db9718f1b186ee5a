package nodeprovider_test

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// TestPollingReadersListOncePerAgePerPage: readers that poll every node accept a listing as old
// as their age for each page it takes, so a fleet of three pages is listed a third as often and
// costs the same calls at rest as a fleet of one page. Other readers keep the provider's TTL.
func TestPollingReadersListOncePerAgePerPage(t *testing.T) {
	const pageSize, ttl, perPage = 2, 5 * time.Second, time.Minute
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	listings := 0
	cache := nodeprovider.NewListingCache(func(context.Context) ([]int, error) {
		listings++
		return []int{1, 2, 3, 4, 5}, nil
	}, func(_ context.Context, id int) (int, error) { return id, nil }, func(id int) int { return id }, pageSize, clk)
	ctx := context.Background()
	polling := nodeprovider.WithListingAge(ctx, perPage)
	if age := cache.AcceptedAge(polling, ttl); age != perPage {
		t.Fatalf("before any listing a polling reader accepts %v, want %v (one page)", age, perPage)
	}
	listing, err := cache.Get(ctx, cache.AcceptedAge(ctx, ttl))
	if err != nil {
		t.Fatal(err)
	}
	if listing.Pages != 3 {
		t.Fatalf("5 nodes at 2 a page: %d pages, want 3", listing.Pages)
	}
	if age := cache.AcceptedAge(ctx, ttl); age != ttl {
		t.Fatalf("a reader that set no age accepts %v, want the TTL %v", age, ttl)
	}
	clk.Step(3*perPage - time.Second)
	if _, err := cache.Get(polling, cache.AcceptedAge(polling, ttl)); err != nil {
		t.Fatal(err)
	}
	if listings != 1 {
		t.Fatalf("a polling reader listed again after %v, within its %v per page of three pages", 3*perPage-time.Second, perPage)
	}
	clk.Step(time.Second)
	if _, err := cache.Get(polling, cache.AcceptedAge(polling, ttl)); err != nil {
		t.Fatal(err)
	}
	if listings != 2 {
		t.Fatalf("%d listings after three pages' worth of age, want 2", listings)
	}
}
