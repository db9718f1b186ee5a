package lke

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/linode/linodego"
	"k8s.io/utils/clock"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// listPageSize is the largest page the API serves: 500 pools cost one call.
const listPageSize = 500

// poolListing is the provider's pools as one listing showed them, adjusted for the provider's own
// later creates and deletes. It is never modified once published; changes make a new listing.
type poolListing struct {
	pools     []linodego.LKENodePool // by id
	fetchedAt time.Time
}

func (l *poolListing) age(clk clock.PassiveClock) time.Duration { return clk.Since(l.fetchedAt) }

// byNodeClaim returns the pool launched for the NodeClaim, if any. Should an earlier bug have left
// two, the oldest one wins, so that every caller settles on the same pool.
func (l *poolListing) byNodeClaim(nodeClaimName string) (linodego.LKENodePool, bool) {
	tag := nodeprovider.NodeClaimTag(nodeClaimName)
	for _, pool := range l.pools {
		if slices.Contains(pool.Tags, tag) {
			return pool, true
		}
	}
	return linodego.LKENodePool{}, false
}

// byInstance returns the pool node whose Linode this is, and its pool, if any.
func (l *poolListing) byInstance(instanceID int) (linodego.LKENodePool, linodego.LKENodePoolLinode, bool) {
	for _, pool := range l.pools {
		for _, member := range pool.Linodes {
			if member.InstanceID == instanceID {
				return pool, member, true
			}
		}
	}
	return linodego.LKENodePool{}, linodego.LKENodePoolLinode{}, false
}

// poolCache shares one listing of the cluster's pools among all readers for up to a TTL.
//
// Rather than dropping the listing whenever the provider creates or deletes a pool (which would
// make every launch in a batch of launches list every pool again), it applies its own changes to
// the listing. That is enough for Create to trust a recent listing when it looks for an earlier
// attempt: only the provider creates pools with its tags, so a pool can be missing from the
// listing only if a create's outcome is unknown, and such a create drops the listing.
type poolCache struct {
	api       API
	clusterID int
	// owned says which of the cluster's pools the provider launched.
	owned func(pool linodego.LKENodePool) bool
	clock clock.PassiveClock

	// refreshing lets one caller list while the others wait for its result.
	refreshing sync.Mutex
	mu         sync.Mutex
	listing    *poolListing
	// generation counts local changes, so that a listing that started before a change does not
	// replace a listing that includes it.
	generation uint64
}

func newPoolCache(api API, clusterID int, owned func(pool linodego.LKENodePool) bool, clk clock.PassiveClock) *poolCache {
	return &poolCache{api: api, clusterID: clusterID, owned: owned, clock: clk}
}

// get returns a listing at most maxAge old, listing the pools if the cached one is older.
func (c *poolCache) get(ctx context.Context, maxAge time.Duration) (*poolListing, error) {
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
	all, err := c.api.ListLKENodePools(ctx, c.clusterID, &linodego.ListOptions{PageSize: listPageSize})
	if err != nil {
		return nil, err
	}
	listing := &poolListing{pools: make([]linodego.LKENodePool, 0, len(all)), fetchedAt: startedAt}
	for _, pool := range all {
		if c.owned(pool) {
			listing.pools = append(listing.pools, pool)
		}
	}
	slices.SortFunc(listing.pools, func(a, b linodego.LKENodePool) int { return a.ID - b.ID })

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == generation {
		c.listing = listing
	}
	return listing, nil
}

func (c *poolCache) fresh(maxAge time.Duration) *poolListing {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listing != nil && c.listing.age(c.clock) < maxAge {
		return c.listing
	}
	return nil
}

// put records a pool the provider created or read back.
func (c *poolCache) put(pool linodego.LKENodePool) {
	c.change(func(pools []linodego.LKENodePool) []linodego.LKENodePool {
		i, found := slices.BinarySearchFunc(pools, pool.ID, func(p linodego.LKENodePool, id int) int { return p.ID - id })
		if found {
			pools[i] = pool
			return pools
		}
		return slices.Insert(pools, i, pool)
	})
}

// remove records that a pool is gone.
func (c *poolCache) remove(poolID int) {
	c.change(func(pools []linodego.LKENodePool) []linodego.LKENodePool {
		return slices.DeleteFunc(pools, func(p linodego.LKENodePool) bool { return p.ID == poolID })
	})
}

// invalidate forgets the listing after a change whose outcome is unknown.
func (c *poolCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.listing = nil
}

func (c *poolCache) change(apply func([]linodego.LKENodePool) []linodego.LKENodePool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	if c.listing == nil {
		return
	}
	c.listing = &poolListing{pools: apply(slices.Clone(c.listing.pools)), fetchedAt: c.listing.fetchedAt}
}
