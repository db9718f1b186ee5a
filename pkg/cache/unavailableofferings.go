// Package cache holds the provider's short-lived, in-memory knowledge of the Linode API.
package cache

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/patrickmn/go-cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// How long a plan stays out of a region after Linode refused to launch it there, by the kind of
// refusal. Long enough that the next scheduling rounds pick another plan, short enough that the
// plan comes back once what stood in the way is likely gone.
const (
	// UnavailableOfferingsTTL follows a lack of capacity, which Linode makes up within minutes.
	UnavailableOfferingsTTL = 3 * time.Minute
	// AccountLimitTTL follows an account limit (e.g. the vCPUs of a plan class), which lifts when
	// the account's other nodes of the class go or Support raises it.
	AccountLimitTTL = 10 * time.Minute
	// RefusedPlanTTL follows a refusal of the plan itself (the account or LKE may not use it),
	// which only Linode's side changes.
	RefusedPlanTTL = 30 * time.Minute
	// UnexplainedRefusalTTL follows a refusal whose cause is not known: the plan is tried again
	// soon, and meanwhile launches go on with the other plans.
	UnexplainedRefusalTTL = 5 * time.Minute
)

// UnavailableOfferings remembers plan+region pairs whose last launch Linode refused for a reason
// that outlives a retry: capacity, account limits, a refused plan. Rate limits and outages say
// nothing about an offering and must not hide one.
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

// MarkUnavailable takes the plan out of the region until the cache's TTL passes.
func (u *UnavailableOfferings) MarkUnavailable(ctx context.Context, reason, instanceType, region string) {
	u.MarkUnavailableFor(ctx, reason, u.ttl, instanceType, region)
}

// MarkUnavailableFor takes the plan out of the region for ttl.
func (u *UnavailableOfferings) MarkUnavailableFor(ctx context.Context, reason string, ttl time.Duration, instanceType, region string) {
	log.FromContext(ctx).WithValues("reason", reason, "instance-type", instanceType, "region", region,
		"ttl", ttl).V(1).Info("removing offering from offerings")
	u.cache.Set(key(instanceType, region), struct{}{}, ttl)
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
