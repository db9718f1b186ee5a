package lke

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/linode/linodego"
	"k8s.io/utils/clock"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// listPageSize is the largest page the API serves: 500 pools cost one call.
const listPageSize = 500

// poolListing is the provider's pools as one listing showed them (see nodeprovider.Listing).
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

// poolCache shares one listing of the cluster's pools carrying the cluster tag among all readers
// for up to a TTL, kept coherent with the provider's own creates and deletes.
//
// A pool an earlier listing showed that a new listing misses is read alone before it is dropped:
// only its 404 says it is gone. Someone may have removed its ownership tag, or it may have moved
// from one page to another while they were read. At rest no pool goes missing, so that read costs
// nothing; a pool kept this way is read again at each listing until it is deleted.
type poolCache struct {
	cache     *nodeprovider.ListingCache[linodego.LKENodePool]
	api       API
	clusterID int
	owned     func(pool linodego.LKENodePool) bool

	mu sync.Mutex
	// shown are the pools the last listing, or the provider since, showed to be the provider's.
	shown map[int]bool
}

// newPoolCache lists the pools owned says the provider launched.
func newPoolCache(api API, clusterID int, owned func(pool linodego.LKENodePool) bool, clk clock.PassiveClock) *poolCache {
	c := &poolCache{api: api, clusterID: clusterID, owned: owned, shown: map[int]bool{}}
	c.cache = nodeprovider.NewListingCache(c.list, func(pool linodego.LKENodePool) int { return pool.ID }, clk)
	return c
}

func (c *poolCache) list(ctx context.Context) ([]linodego.LKENodePool, error) {
	all, err := c.api.ListLKENodePools(ctx, c.clusterID, &linodego.ListOptions{PageSize: listPageSize})
	if err != nil {
		return nil, err
	}
	pools := slices.DeleteFunc(all, func(pool linodego.LKENodePool) bool { return !c.owned(pool) })
	for _, poolID := range c.missing(pools) {
		pool, err := c.api.GetLKENodePool(ctx, c.clusterID, poolID)
		if linode.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading node pool %d, which the listing misses: %w", poolID, err)
		}
		pools = append(pools, *pool)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shown = make(map[int]bool, len(pools))
	for _, pool := range pools {
		c.shown[pool.ID] = true
	}
	return pools, nil
}

// missing are the pools shown before that are not among listed.
func (c *poolCache) missing(listed []linodego.LKENodePool) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []int
	for id := range c.shown {
		if !slices.ContainsFunc(listed, func(pool linodego.LKENodePool) bool { return pool.ID == id }) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// get returns a listing at most maxAge old, listing the pools if the cached one is older.
func (c *poolCache) get(ctx context.Context, maxAge time.Duration) (*poolListing, error) {
	listing, err := c.cache.Get(ctx, maxAge)
	if err != nil {
		return nil, err
	}
	return &poolListing{pools: listing.Items, fetchedAt: listing.FetchedAt}, nil
}

// put records a pool the provider created or read back.
func (c *poolCache) put(pool linodego.LKENodePool) {
	c.mu.Lock()
	c.shown[pool.ID] = true
	c.mu.Unlock()
	c.cache.Put(pool)
}

// remove records that a pool is gone.
func (c *poolCache) remove(poolID int) {
	c.mu.Lock()
	delete(c.shown, poolID)
	c.mu.Unlock()
	c.cache.Remove(poolID)
}

// invalidate forgets the listing after a change whose outcome is unknown.
func (c *poolCache) invalidate() { c.cache.Invalidate() }
