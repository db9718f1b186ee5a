package emulator

import (
	"time"

	"k8s.io/utils/clock"
)

// Delays are the durations of the emulated state machines, measured on the
// emulator's clock.
type Delays struct {
	// NodeInstance is how long a new LKE pool node shows "instance_id": null
	// before its Linode exists.
	NodeInstance time.Duration
	// Provisioning is how long a new Linode stays "provisioning" before it
	// starts "booting".
	Provisioning time.Duration
	// Booting is how long a Linode stays "booting" (or "rebooting") before it
	// is "running".
	Booting time.Duration
	// EnterpriseNodeListing is how long an enterprise-tier pool hides a new
	// node from its "nodes" list (the API documents a 30-60 s lag).
	EnterpriseNodeListing time.Duration
	// ShuttingDown is how long a Linode stays "shutting_down" before it is
	// "offline".
	ShuttingDown time.Duration
	// RecycleDrainTimeout bounds how long LKE waits for a node it recycles
	// to be drained before it deletes the node's Linode anyway.
	RecycleDrainTimeout time.Duration
}

// DefaultDelays are close to what LKE shows: a node gets its Linode within
// seconds, and a Linode takes about two and a half minutes from create to
// "running".
func DefaultDelays() Delays {
	return Delays{
		NodeInstance:          10 * time.Second,
		Provisioning:          60 * time.Second,
		Booting:               90 * time.Second,
		EnterpriseNodeListing: 45 * time.Second,
		ShuttingDown:          25 * time.Second,
		RecycleDrainTimeout:   5 * time.Minute,
	}
}

// Scaled multiplies every delay by factor; 0 makes every transition happen
// on the next request or Tick.
func (d Delays) Scaled(factor float64) Delays {
	scale := func(v time.Duration) time.Duration { return time.Duration(float64(v) * factor) }
	return Delays{
		NodeInstance:          scale(d.NodeInstance),
		Provisioning:          scale(d.Provisioning),
		Booting:               scale(d.Booting),
		EnterpriseNodeListing: scale(d.EnterpriseNodeListing),
		ShuttingDown:          scale(d.ShuttingDown),
		RecycleDrainTimeout:   scale(d.RecycleDrainTimeout),
	}
}

// RateLimits are per-token request budgets over fixed windows. A zero limit
// disables that budget.
type RateLimits struct {
	// ListsPerMinute bounds paginated GETs (collection lists).
	ListsPerMinute int
	// OtherPerMinute bounds every other request.
	OtherPerMinute int
	// LinodeCreates bounds POST /linode/instances per LinodeCreateWindow.
	LinodeCreates      int
	LinodeCreateWindow time.Duration
	// LKEPoolCreates bounds POST /lke/clusters/{clusterId}/pools per LKEPoolCreateWindow, for
	// tests of a client that paces them. Linode publishes no such limit: zero (the default)
	// counts them against OtherPerMinute, as every other request.
	LKEPoolCreates      int
	LKEPoolCreateWindow time.Duration
}

// DefaultRateLimits are Linode's published figures.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		ListsPerMinute:     200,
		OtherPerMinute:     1600,
		LinodeCreates:      20,
		LinodeCreateWindow: 15 * time.Second,
	}
}

// DefaultToken is the bearer token the emulator accepts unless told otherwise.
const DefaultToken = "emulator-token"

type config struct {
	clock          clock.PassiveClock
	realClock      bool
	token          string
	address        string
	delays         Delays
	rateLimits     RateLimits
	seed           int64
	requestLogSize int
	// withoutCapabilities are region capabilities taken away, by region.
	withoutCapabilities map[string][]string
	// interfacesForNewLinodes is the account's interfaces_for_new_linodes setting.
	interfacesForNewLinodes string
}

func defaultConfig() config {
	return config{
		clock:          clock.RealClock{},
		realClock:      true,
		token:          DefaultToken,
		address:        "127.0.0.1:0",
		delays:         DefaultDelays(),
		rateLimits:     DefaultRateLimits(),
		seed:           1,
		requestLogSize: 10000,

		interfacesForNewLinodes: "legacy_config_default_but_linode_allowed",
	}
}

// Option configures an Emulator.
type Option func(*config)

// WithClock makes the emulator read time from c (e.g. a
// k8s.io/utils/clock/testing.FakeClock). With a clock other than the real
// one, state advances only on requests and Tick, never in the background.
func WithClock(c clock.PassiveClock) Option {
	return func(cfg *config) {
		cfg.clock = c
		_, cfg.realClock = c.(clock.RealClock)
	}
}

// WithToken sets the bearer token requests must carry.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithAddress sets the listen address used by Start (default 127.0.0.1:0).
func WithAddress(addr string) Option { return func(c *config) { c.address = addr } }

// WithDelays replaces the state machine delays.
func WithDelays(d Delays) Option { return func(c *config) { c.delays = d } }

// WithDelayScale multiplies the configured delays by factor (0 = instant).
// It applies to the delays in effect when the option is evaluated, so put it
// after WithDelays.
func WithDelayScale(factor float64) Option {
	return func(c *config) { c.delays = c.delays.Scaled(factor) }
}

// WithoutRegionCapability takes a capability (e.g. "Metadata") away from a region, as regions
// that lack it on Linode do; creates that need it are refused there.
func WithoutRegionCapability(regionID, capability string) Option {
	return func(c *config) {
		if c.withoutCapabilities == nil {
			c.withoutCapabilities = map[string][]string{}
		}
		c.withoutCapabilities[regionID] = append(c.withoutCapabilities[regionID], capability)
	}
}

// WithRateLimits replaces the rate limits.
func WithRateLimits(l RateLimits) Option { return func(c *config) { c.rateLimits = l } }

// WithoutRateLimits disables rate limiting.
func WithoutRateLimits() Option { return func(c *config) { c.rateLimits = RateLimits{} } }

// WithSeed seeds the randomness (node id suffixes, host ids, fault error
// rates) so runs are reproducible.
func WithSeed(seed int64) Option { return func(c *config) { c.seed = seed } }

// WithRequestLogSize bounds the request log (oldest entries are dropped).
func WithRequestLogSize(n int) Option { return func(c *config) { c.requestLogSize = n } }
