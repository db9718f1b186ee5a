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

// poolListing is the provider's pools as one listing showed them (see nodeprovider.Listing).
type poolListing struct {
	pools     []linodego.LKENodePool // by id
	fetchedAt time.Time
}

func (l *poolListing) age(clk clock.PassiveClock) time.Duration { return clk.Since(l.fetchedAt) }

// byNodeClaim returns the pool launched for the NodeClaim, if any: the pool with its tag, or else,
// among the pools that carry no NodeClaim's tag, with its name as the pool's label, which Create
// sets and which stays when someone replaces the pool's tags (adoption hands a pool to another
// NodeClaim by its tag alone). Should an earlier bug have left two, the oldest one wins, so that
// every caller settles on the same pool.
func (l *poolListing) byNodeClaim(nodeClaimName string) (linodego.LKENodePool, bool) {
	tag := nodeprovider.NodeClaimTag(nodeClaimName)
	for _, pool := range l.pools {
		if nodeprovider.SoleNodeClaimTag(pool.Tags) == tag {
			return pool, true
		}
	}
	for _, pool := range l.pools {
		if pool.Label != nil && *pool.Label == nodeClaimName && !slices.ContainsFunc(pool.Tags, nodeprovider.IsNodeClaimTag) {
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
// for up to a TTL, kept coherent with the provider's own creates and deletes. A pool an earlier
// listing showed that a new listing misses is read alone before it is dropped (see
// nodeprovider.ListingCache).
type poolCache struct {
	cache *nodeprovider.ListingCache[linodego.LKENodePool]

	mu sync.Mutex
	// strays are the pools of the last listing that carry no ownership tag at all.
	strays []linodego.LKENodePool
}

// newPoolCache lists the pools owned says the provider launched.
func newPoolCache(api API, clusterID int, owned func(pool linodego.LKENodePool) bool, clk clock.PassiveClock) *poolCache {
	c := &poolCache{}
	list := func(ctx context.Context) ([]linodego.LKENodePool, error) {
		all, err := api.ListLKENodePools(ctx, clusterID, &linodego.ListOptions{PageSize: listPageSize})
		if err != nil {
			return nil, err
		}
		var pools, strays []linodego.LKENodePool
		for _, pool := range all {
			switch {
			case owned(pool):
				pools = append(pools, pool)
			case !ownedByAnother(pool):
				strays = append(strays, pool)
			}
		}
		c.mu.Lock()
		c.strays = strays
		c.mu.Unlock()
		return pools, nil
	}
	readAlone := func(ctx context.Context, poolID int) (linodego.LKENodePool, error) {
		pool, err := api.GetLKENodePool(ctx, clusterID, poolID)
		if err != nil {
			return linodego.LKENodePool{}, err
		}
		return *pool, nil
	}
	c.cache = nodeprovider.NewListingCache(list, readAlone, func(pool linodego.LKENodePool) int { return pool.ID }, listPageSize, clk)
	return c
}

// ownedByAnother reports whether a pool that is not the provider's carries another Karpenter's
// ownership tag: another cluster's pools are never ours to resume.
func ownedByAnother(pool linodego.LKENodePool) bool {
	_, cluster := nodeprovider.TagValue(pool.Tags, nodeprovider.TagKeyCluster)
	_, lkeCluster := nodeprovider.TagValue(pool.Tags, nodeprovider.TagKeyLKECluster)
	return cluster || lkeCluster
}

// stray returns the pool the last listing showed launched for the NodeClaim although it lacks the
// ownership tag: someone removed that tag (or replaced all the pool's tags) while its launch was
// under way, and a controller that never saw the pool tagged looks for it here before it launches
// a second one.
func (c *poolCache) stray(nodeClaimName string) (linodego.LKENodePool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (&poolListing{pools: c.strays}).byNodeClaim(nodeClaimName)
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
func (c *poolCache) put(pool linodego.LKENodePool) { c.cache.Put(pool) }

// remove records that a pool is gone.
func (c *poolCache) remove(poolID int) { c.cache.Remove(poolID) }

// invalidate forgets the listing after a change whose outcome is unknown.
func (c *poolCache) invalidate() { c.cache.Invalidate() }
