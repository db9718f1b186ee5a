package nodeprovider

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// Listing is the provider's objects (LKE pools, Linodes) as one listing showed them, by id,
// adjusted for the provider's own later creates and deletes. It is never modified once published;
// changes make a new listing.
type Listing[T any] struct {
	Items     []T
	FetchedAt time.Time
	// Pages is how many calls the listing took.
	Pages int
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
//
// An object an earlier listing showed (or the provider put) that a new listing misses is read
// alone before it is dropped: only its 404 says it is gone. Someone may have removed the tag the
// listing filters by, or it may have moved from one page to another while they were read; calling
// it gone would finalize its NodeClaim and leave it running, and billed. At rest nothing goes
// missing, so that costs nothing; an object kept so is read again at each listing until it is gone.
type ListingCache[T any] struct {
	list      func(context.Context) ([]T, error)
	readAlone func(ctx context.Context, id int) (T, error)
	id        func(T) int
	pageSize  int
	clock     clock.PassiveClock

	// refreshing lets one caller list while the others wait for its result.
	refreshing sync.Mutex
	mu         sync.Mutex
	listing    *Listing[T]
	// generation counts local changes, so that a listing that started before a change does not
	// replace a listing that includes it.
	generation uint64
	// shown are the objects the last listing, or the provider since, showed; unlike the listing
	// they outlive Invalidate.
	shown map[int]bool
}

// NewListingCache returns a cache over list, which returns the provider's objects only, pageSize
// to a call; readAlone reads one object a listing missed, and id identifies an object.
func NewListingCache[T any](list func(context.Context) ([]T, error), readAlone func(ctx context.Context, id int) (T, error), id func(T) int, pageSize int, clk clock.PassiveClock) *ListingCache[T] {
	return &ListingCache[T]{list: list, readAlone: readAlone, id: id, pageSize: max(pageSize, 1), clock: clk, shown: map[int]bool{}}
}

// AcceptedAge is how old a listing the caller accepts: the age it set with WithListingAge for each
// page the last listing took, else ttl.
func (c *ListingCache[T]) AcceptedAge(ctx context.Context, ttl time.Duration) time.Duration {
	perPage, ok := ctx.Value(listingAgeKey{}).(time.Duration)
	if !ok {
		return ttl
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pages := 1
	if c.listing != nil {
		pages = c.listing.Pages
	}
	return perPage * time.Duration(pages)
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
	if items, err = c.withMissing(ctx, slices.Clone(items)); err != nil {
		return nil, err
	}
	listing := &Listing[T]{Items: items, FetchedAt: startedAt, Pages: max(1, (len(items)+c.pageSize-1)/c.pageSize)}
	slices.SortFunc(listing.Items, func(a, b T) int { return c.id(a) - c.id(b) })

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == generation {
		c.listing = listing
		c.shown = map[int]bool{}
	}
	// After a change during the listing, what it added stays shown as well: at worst an object
	// removed meanwhile is read alone once more, and answers 404.
	for _, item := range listing.Items {
		c.shown[c.id(item)] = true
	}
	return listing, nil
}

// withMissing adds to listed the objects shown before that it misses and that still exist.
func (c *ListingCache[T]) withMissing(ctx context.Context, listed []T) ([]T, error) {
	for _, id := range c.missing(listed) {
		item, err := c.readAlone(ctx, id)
		if linode.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %d, which the listing misses: %w", id, err)
		}
		listed = append(listed, item)
	}
	return listed, nil
}

// missing are the objects shown before that are not among listed, by id.
func (c *ListingCache[T]) missing(listed []T) []int {
	ids := make(map[int]bool, len(listed))
	for _, item := range listed {
		ids[c.id(item)] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []int
	for id := range c.shown {
		if !ids[id] {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	return missing
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
	c.change(c.id(item), true, func(items []T) []T {
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
	c.change(id, false, func(items []T) []T {
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

// change applies a change to the object with the id, which exists after it if shown.
func (c *ListingCache[T]) change(id int, shown bool, apply func([]T) []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	if shown {
		c.shown[id] = true
	} else {
		delete(c.shown, id)
	}
	if c.listing == nil {
		return
	}
	c.listing = &Listing[T]{Items: apply(slices.Clone(c.listing.Items)), FetchedAt: c.listing.FetchedAt, Pages: c.listing.Pages}
}

type listingAgeKey struct{}

// PollingListingAge is how old a listing, for each page it takes, the readers that poll every
// node accept: core's garbage collection (every 2 minutes), this provider's, and core's drift
// checks (each NodeClaim every 5 minutes). One listing serves them all, and a fleet at rest is
// listed once in this time for each 500 nodes: the calls it costs stay the same whatever the
// node count. A Linode deleted behind the provider's back is noticed that much later.
const PollingListingAge = 3 * time.Minute

// WithListingAge lets the providers' Get and List answer the caller from a listing up to maxAge
// old for each page it takes, rather than their ListingTTL: for a caller that needs no fresher
// view, so that reading every node at rest costs no listing of its own.
func WithListingAge(ctx context.Context, maxAge time.Duration) context.Context {
	return context.WithValue(ctx, listingAgeKey{}, maxAge)
}
