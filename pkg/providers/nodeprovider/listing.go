package nodeprovider

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Listing is the provider's objects (LKE pools, Linodes) as one listing showed them, by id,
// adjusted for the provider's own later creates and deletes. It is never modified once published;
// changes make a new listing.
type Listing[T any] struct {
	Items     []T
	FetchedAt time.Time
}

// Age is how long ago the listing was fetched.
func (l *Listing[T]) Age(clk clock.PassiveClock) time.Duration { return clk.Since(l.FetchedAt) }

// ListingCache shares one listing of the provider's objects among all readers for up to a TTL,
// so that finding N nodes costs one call per page of the listing rather than N calls.
//
// Rather than dropping the listing whenever the provider creates or deletes an object (which
// would make every launch in a batch of launches list everything again), it applies the
// provider's own changes to the listing. That is enough for Create to trust a recent listing when
// it looks for an earlier attempt: only the provider creates objects with its tags, so one can be
// missing from the listing only if a create's outcome is unknown, and such a create drops the
// listing (Invalidate).
type ListingCache[T any] struct {
	list  func(context.Context) ([]T, error)
	id    func(T) int
	clock clock.PassiveClock

	// refreshing lets one caller list while the others wait for its result.
	refreshing sync.Mutex
	mu         sync.Mutex
	listing    *Listing[T]
	// generation counts local changes, so that a listing that started before a change does not
	// replace a listing that includes it.
	generation uint64
}

// NewListingCache returns a cache over list, which returns the provider's objects only; id
// identifies an object.
func NewListingCache[T any](list func(context.Context) ([]T, error), id func(T) int, clk clock.PassiveClock) *ListingCache[T] {
	return &ListingCache[T]{list: list, id: id, clock: clk}
}

// Get returns a listing at most maxAge old, listing anew if the cached one is older.
func (c *ListingCache[T]) Get(ctx context.Context, maxAge time.Duration) (*Listing[T], error) {
	if listing := c.fresh(maxAge); listing != nil {
		return listing, nil
	}
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	if listing := c.fresh(maxAge); listing != nil {
		return listing, nil
	}
	c.mu.Lock()
	generation := c.generation
	c.mu.Unlock()

	startedAt := c.clock.Now()
	items, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	listing := &Listing[T]{Items: slices.Clone(items), FetchedAt: startedAt}
	slices.SortFunc(listing.Items, func(a, b T) int { return c.id(a) - c.id(b) })

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == generation {
		c.listing = listing
	}
	return listing, nil
}

func (c *ListingCache[T]) fresh(maxAge time.Duration) *Listing[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listing != nil && c.listing.Age(c.clock) < maxAge {
		return c.listing
	}
	return nil
}

// Put records an object the provider created or read back.
func (c *ListingCache[T]) Put(item T) {
	c.change(func(items []T) []T {
		i, found := slices.BinarySearchFunc(items, c.id(item), func(existing T, id int) int { return c.id(existing) - id })
		if found {
			items[i] = item
			return items
		}
		return slices.Insert(items, i, item)
	})
}

// Remove records that an object is gone.
func (c *ListingCache[T]) Remove(id int) {
	c.change(func(items []T) []T {
		return slices.DeleteFunc(items, func(existing T) bool { return c.id(existing) == id })
	})
}

// Invalidate forgets the listing after a change whose outcome is unknown.
func (c *ListingCache[T]) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.listing = nil
}

func (c *ListingCache[T]) change(apply func([]T) []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	if c.listing == nil {
		return
	}
	c.listing = &Listing[T]{Items: apply(slices.Clone(c.listing.Items)), FetchedAt: c.listing.FetchedAt}
}
