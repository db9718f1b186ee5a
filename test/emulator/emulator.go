package emulator

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linode/linodego"
	"k8s.io/utils/clock"
)

// Emulator is a stateful Linode API server. Create it with New, serve it
// with Start (or mount Handler yourself) and stop it with Close.
type Emulator struct {
	cfg   config
	clock clock.PassiveClock
	cat   *catalogue

	// mu guards st and cat. Only the router and reading/writing (server.go) take it: shared
	// for routes that read, exclusive for those that write and for clock-driven transitions.
	mu sync.RWMutex
	st *state

	// token is the bearer token requests must carry; empty while revoked.
	token   atomic.Pointer[string]
	faults  *faultSet
	limiter *rateLimiter
	obs     *observer
	refused refusals
	handler http.Handler

	// events guards hooks and outbox; delivering is set while a goroutine delivers.
	events     guard
	hooks      []func(InstanceEvent)
	outbox     []InstanceEvent
	delivering atomic.Bool

	server   *http.Server
	url      string
	stopTick chan struct{}
	tickDone chan struct{}
}

// tickInterval is how often a real-clock emulator advances state when no
// requests arrive, so instance events fire on time.
const tickInterval = 200 * time.Millisecond

// New returns an emulator with the seeded catalogue and no other objects.
// It panics if the embedded catalogue is corrupt, which is a build defect.
func New(opts ...Option) *Emulator {
	cfg := defaultConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	cat, err := loadCatalogue()
	if err != nil {
		panic(err)
	}
	for regionID, capabilities := range cfg.withoutCapabilities {
		if err := cat.removeCapabilities(regionID, capabilities); err != nil {
			panic(err)
		}
	}
	e := &Emulator{
		cfg:     cfg,
		clock:   cfg.clock,
		cat:     cat,
		st:      newState(cfg.seed, cat),
		faults:  newFaultSet(cfg.seed),
		limiter: newRateLimiter(cfg.rateLimits),
		obs:     newObserver(cfg.requestLogSize),
	}
	e.token.Store(&cfg.token)
	e.handler = e.enforceRequestRules(e.buildHandler())
	return e
}

// Handler serves the API (under /v4 and /v4beta) and the admin endpoints
// (under /_emulator).
func (e *Emulator) Handler() http.Handler { return e.handler }

// Start listens on the configured address (127.0.0.1:0 by default) and
// serves in the background.
func (e *Emulator) Start() error {
	if e.server != nil {
		return errors.New("emulator already started")
	}
	ln, err := net.Listen("tcp", e.cfg.address)
	if err != nil {
		return err
	}
	e.server = &http.Server{Handler: e.handler, ReadHeaderTimeout: 10 * time.Second}
	e.url = "http://" + ln.Addr().String()
	go func() { _ = e.server.Serve(ln) }()
	if e.cfg.realClock {
		e.stopTick, e.tickDone = make(chan struct{}), make(chan struct{})
		go e.tickLoop()
	}
	return nil
}

func (e *Emulator) tickLoop() {
	defer close(e.tickDone)
	t := time.NewTicker(tickInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stopTick:
			return
		case <-t.C:
			e.Tick()
		}
	}
}

// Close stops serving; requests held by faults are released.
func (e *Emulator) Close() error {
	if e.server == nil {
		return nil
	}
	if e.stopTick != nil {
		close(e.stopTick)
		<-e.tickDone
	}
	return e.server.Close()
}

// URL is the server's base URL without a version, e.g. http://127.0.0.1:8080.
func (e *Emulator) URL() string { return e.url }

// Token is the bearer token the emulator accepts; empty while it is revoked.
func (e *Emulator) Token() string { return *e.token.Load() }

// SetToken makes the emulator accept token, and only token, from now on, as a token rotated on
// Linode's side would: requests with the previous one are answered 401.
func (e *Emulator) SetToken(token string) { e.token.Store(&token) }

// RevokeToken makes every API request fail with 401 "Invalid Token" until SetToken, as a token
// revoked or expired on Linode's side does.
func (e *Emulator) RevokeToken() { e.SetToken("") }

// NewClient returns a linodego client for the emulator: v4 API, response
// cache off (so tests see the emulator's current state) and no retries (so
// injected faults reach the caller). Adjust it as needed.
func (e *Emulator) NewClient() *linodego.Client {
	c := linodego.NewClient(&http.Client{Timeout: 30 * time.Second})
	c.SetBaseURL(e.URL())
	c.SetAPIVersion("v4")
	c.SetToken(e.Token())
	c.SetRetryCount(0)
	c.SetRetryWaitTime(10 * time.Millisecond)
	c.SetRetryMaxWaitTime(100 * time.Millisecond)
	c.UseCache(false)
	return &c
}

// Tick applies every state transition due by the clock's current time and
// delivers the resulting instance events. Requests do the same, so Tick is
// only needed to observe events without making a request (e.g. after
// stepping a fake clock).
func (e *Emulator) Tick() {
	e.sync()
	e.deliver()
}

// sync applies due transitions. The lock-free check keeps the common case
// (nothing due) on the shared lock path.
func (e *Emulator) sync() {
	if !e.st.isDue(e.clock.Now()) {
		return
	}
	e.writing(func() { e.st.advance(e.clock.Now()) })
}

// SetCapacity sets how many more Linodes of plan the region can launch
// (pool nodes included). At zero, creates answer the capacity error and
// /regions/availability reports the plan unavailable there. A negative n
// makes the capacity unlimited again.
func (e *Emulator) SetCapacity(regionID, planID string, n int) {
	e.writing(func() {
		key := capacityKey{regionID, planID}
		if n < 0 {
			delete(e.st.capacity, key)
			return
		}
		e.st.capacity[key] = n
	})
}

// SetDelays changes the state machine's delays for what starts from now on; Linodes already on
// their way keep the delays they started with. Tests use it to slow launches down for one
// scenario without a new emulator.
func (e *Emulator) SetDelays(d Delays) {
	e.writing(func() { e.cfg.delays = d })
}

// Delays returns the state machine's delays in effect.
func (e *Emulator) Delays() (d Delays) {
	e.reading(func() { d = e.cfg.delays })
	return d
}

// AddLKECluster creates an LKE cluster without pools on the tier's newest
// version and returns its id. The region must offer the tier.
func (e *Emulator) AddLKECluster(label, regionID, tier string) (int, error) {
	if tier == "" {
		tier = tierStandard
	}
	var c *lkeCluster
	var err *apiError
	e.writing(func() {
		c, err = e.createClusterLocked(clusterCreateRequest{
			Label: label, Region: regionID, Tier: tier, K8sVersion: e.cat.latestLKEVersion(tier),
		})
	})
	if err != nil {
		return 0, fmt.Errorf("add LKE cluster %q: %w", label, err)
	}
	return c.ID, nil
}

// ReleaseLKEVersion makes a new Kubernetes version available on an LKE tier, as the newest, the
// way LKE releases versions over time: clusters can then be upgraded to it.
func (e *Emulator) ReleaseLKEVersion(tier, version string) {
	e.writing(func() {
		if slices.Contains(e.cat.lkeVersions[tier], version) {
			return
		}
		// A new slice, so that a list being encoded keeps the one it read.
		e.cat.lkeVersions[tier] = append([]string{version}, e.cat.lkeVersions[tier]...)
	})
}

// AddFirewall creates a firewall with default rules and returns its id.
func (e *Emulator) AddFirewall(label string) (id int) {
	e.writing(func() { id = e.addFirewallLocked(label, nil).ID })
	return id
}

// SetPlacementGroupCompliance makes the group report is_compliant as given, as Linode reports a
// flexible group that had to break its policy until it restores it.
func (e *Emulator) SetPlacementGroupCompliance(groupID int, compliant bool) error {
	found := false
	e.writing(func() {
		if pg, ok := e.st.placementGroups[groupID]; ok {
			pg.NonCompliant, found = !compliant, true
		}
	})
	if !found {
		return fmt.Errorf("placement group %d not found", groupID)
	}
	return nil
}

// AddVPC creates a VPC and returns its id.
func (e *Emulator) AddVPC(label, regionID string) (id int, err error) {
	e.writing(func() {
		if _, invalid := e.validateRegion("region", regionID, capVPCs); invalid != nil {
			err = fmt.Errorf("add VPC %q: %w", label, invalid)
			return
		}
		id = e.addVPCLocked(label, regionID).ID
	})
	return id, err
}

// AddVPCSubnet creates a subnet in a VPC and returns its id.
func (e *Emulator) AddVPCSubnet(vpcID int, label, cidr string) (int, error) {
	if err := validateSubnet("", subnetCreateRequest{Label: label, IPv4: cidr}); err != nil {
		return 0, fmt.Errorf("add subnet %q: %w", label, err)
	}
	id := 0
	e.writing(func() {
		if _, ok := e.st.vpcs[vpcID]; ok {
			id = e.addSubnetLocked(vpcID, label, cidr).ID
		}
	})
	if id == 0 {
		return 0, fmt.Errorf("add subnet %q: VPC %d not found", label, vpcID)
	}
	return id, nil
}

// InstanceInfo is a snapshot of a Linode for inspection.
type InstanceInfo struct {
	ID           int      `json:"id"`
	Label        string   `json:"label"`
	Type         string   `json:"type"`
	Region       string   `json:"region"`
	Status       string   `json:"status"`
	Tags         []string `json:"tags"`
	UserData     string   `json:"user_data,omitempty"` // base64, as submitted
	FirewallID   int      `json:"firewall_id,omitempty"`
	LKEClusterID int      `json:"lke_cluster_id,omitempty"`
	LKEPoolID    int      `json:"lke_pool_id,omitempty"`
	NodeID       string   `json:"node_id,omitempty"`
}

// NodeInfo is a snapshot of an LKE pool node.
type NodeInfo struct {
	ID         string `json:"id"`
	InstanceID int    `json:"instance_id"` // 0 while the node has no Linode
	Status     string `json:"status"`
	K8sVersion string `json:"k8s_version"`
}

// PoolInfo is a snapshot of an LKE pool, hidden enterprise nodes included.
type PoolInfo struct {
	ID        int        `json:"id"`
	ClusterID int        `json:"cluster_id"`
	Type      string     `json:"type"`
	Count     int        `json:"count"`
	Tags      []string   `json:"tags"`
	Nodes     []NodeInfo `json:"nodes"`
	// Labels and Taints are what LKE gives each node of the pool.
	Labels map[string]string           `json:"labels,omitempty"`
	Taints []linodego.LKENodePoolTaint `json:"taints,omitempty"`
}

// ClusterInfo is a snapshot of an LKE cluster.
type ClusterInfo struct {
	ID         int    `json:"id"`
	Label      string `json:"label"`
	Region     string `json:"region"`
	Tier       string `json:"tier"`
	K8sVersion string `json:"k8s_version"`
}

// Instances returns every Linode, by id.
func (e *Emulator) Instances() []InstanceInfo {
	e.sync()
	out := []InstanceInfo{}
	e.reading(func() {
		for _, id := range sortedKeys(e.st.instances) {
			in := e.st.instances[id]
			out = append(out, InstanceInfo{
				ID: in.ID, Label: in.Label, Type: in.Type, Region: in.Region, Status: in.Status,
				Tags: nonNil(slices.Clone(in.Tags)), UserData: in.UserData, FirewallID: in.FirewallID,
				LKEClusterID: in.LKEClusterID, LKEPoolID: in.LKEPoolID, NodeID: in.NodeID,
			})
		}
	})
	return out
}

// Pools returns the pools of an LKE cluster (all clusters when clusterID is
// 0), by id.
func (e *Emulator) Pools(clusterID int) []PoolInfo {
	e.sync()
	out := []PoolInfo{}
	e.reading(func() {
		for _, id := range sortedKeys(e.st.pools) {
			p := e.st.pools[id]
			if clusterID != 0 && p.ClusterID != clusterID {
				continue
			}
			info := PoolInfo{ID: p.ID, ClusterID: p.ClusterID, Type: p.Type, Count: p.Count, Tags: nonNil(slices.Clone(p.Tags)), Labels: maps.Clone(p.Labels)}
			for _, t := range p.Taints {
				info.Taints = append(info.Taints, linodego.LKENodePoolTaint{Key: t.Key, Value: t.Value, Effect: linodego.LKENodePoolTaintEffect(t.Effect)})
			}
			for _, n := range p.Nodes {
				info.Nodes = append(info.Nodes, NodeInfo{ID: n.ID, InstanceID: n.InstanceID, Status: n.Status, K8sVersion: n.K8sVersion})
			}
			out = append(out, info)
		}
	})
	return out
}

// Clusters returns every LKE cluster, by id.
func (e *Emulator) Clusters() []ClusterInfo {
	out := []ClusterInfo{}
	e.reading(func() {
		for _, id := range sortedKeys(e.st.clusters) {
			c := e.st.clusters[id]
			out = append(out, ClusterInfo{ID: c.ID, Label: c.Label, Region: c.Region, Tier: c.Tier, K8sVersion: c.K8sVersion})
		}
	})
	return out
}
