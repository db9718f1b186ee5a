// Package cache holds the provider's short-lived, in-memory knowledge of the Linode API.
package cache

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/patrickmn/go-cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// UnavailableOfferingsTTL is how long a plan stays out of a region after a launch failed for
// lack of capacity. Long enough that the next scheduling round picks another plan, short enough
// that the plan comes back when Linode has capacity again.
const UnavailableOfferingsTTL = 3 * time.Minute

// UnavailableOfferings remembers plan+region pairs whose last launch failed for lack of capacity.
// Only capacity failures belong here: validation errors, rate limits and outages say nothing
// about capacity and must not hide an offering.
type UnavailableOfferings struct {
	cache *cache.Cache
	ttl   time.Duration
	// seq changes on every mark, so the instance type provider can tell its memoised offerings
	// are stale without comparing cache contents.
	seq atomic.Uint64
}

// NewUnavailableOfferings returns an empty cache whose entries expire after ttl.
func NewUnavailableOfferings(ttl time.Duration) *UnavailableOfferings {
	// Expired entries are swept often, so that SeqNum moves soon after an offering returns.
	u := &UnavailableOfferings{cache: cache.New(ttl, ttl/6), ttl: ttl}
	u.cache.OnEvicted(func(string, any) { u.seq.Add(1) })
	return u
}

// MarkUnavailable takes the plan out of the region until the TTL passes.
func (u *UnavailableOfferings) MarkUnavailable(ctx context.Context, reason, instanceType, region string) {
	log.FromContext(ctx).WithValues("reason", reason, "instance-type", instanceType, "region", region,
		"ttl", u.ttl).V(1).Info("removing offering from offerings")
	u.cache.SetDefault(key(instanceType, region), struct{}{})
	u.seq.Add(1)
}

// IsUnavailable reports whether the plan is out of the region for now.
func (u *UnavailableOfferings) IsUnavailable(instanceType, region string) bool {
	_, found := u.cache.Get(key(instanceType, region))
	return found
}

// SeqNum changes whenever an offering becomes unavailable or available again.
func (u *UnavailableOfferings) SeqNum() uint64 { return u.seq.Load() }

// Flush makes every offering available again.
func (u *UnavailableOfferings) Flush() {
	u.cache.Flush()
	u.seq.Add(1)
}

func key(instanceType, region string) string { return instanceType + "/" + region }
