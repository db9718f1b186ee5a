package lke

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// API is the part of the Linode API the LKE provider calls.
type API interface {
	linode.LKEAPI
	// GetInstance tells which pool a Linode missing from the listing belongs to, by its label.
	GetInstance(ctx context.Context, linodeID int) (*linodego.Instance, error)
	RebootInstance(ctx context.Context, linodeID int, configID int) error
}

const (
	// DefaultListingTTL is how long one listing of the pools answers Get and List.
	DefaultListingTTL = 5 * time.Second
	// DefaultLaunchTimeout bounds how long Create waits for LKE to create a pool's Linode. LKE
	// takes about 10 s; the enterprise tier lists a new node only after another 30-60 s.
	DefaultLaunchTimeout = 2 * time.Minute
	// DefaultPollInterval is the first wait before reading a new pool back; waits double from
	// there up to maxPollInterval.
	DefaultPollInterval = 2 * time.Second

	maxPollInterval = 10 * time.Second
	// missRefreshAge is how old a listing may be and still prove a node gone: a Linode missing from
	// an older listing is looked for in a new one first.
	missRefreshAge = time.Second
	// DefaultClusterVersionTTL is how long the cluster's Kubernetes version is trusted for drift:
	// core checks a NodeClaim's drift every 5 minutes, so an upgrade starts replacing nodes as soon
	// as reading it more often would, and a fleet at rest reads it once in 5 minutes.
	DefaultClusterVersionTTL = 5 * time.Minute
)

// Options tune the provider; the defaults suit the live API.
type Options struct {
	ListingTTL    time.Duration
	LaunchTimeout time.Duration
	PollInterval  time.Duration
	// ClusterVersionTTL is how often the cluster's Kubernetes version is read again.
	ClusterVersionTTL time.Duration
	Clock             clock.Clock
	Recorder          events.Recorder
}

// WithRecorder sets where the provider tells the operator about plans Linode refused.
func WithRecorder(recorder events.Recorder) option.Function[Options] {
	return func(o *Options) { o.Recorder = recorder }
}

// WithListingTTL sets how long one pool listing answers Get and List.
func WithListingTTL(ttl time.Duration) option.Function[Options] {
	return func(o *Options) { o.ListingTTL = ttl }
}

// WithLaunchTimeout sets how long Create waits for a new pool's Linode before it gives up and
// lets Karpenter retry.
func WithLaunchTimeout(timeout time.Duration) option.Function[Options] {
	return func(o *Options) { o.LaunchTimeout = timeout }
}

// WithPollInterval sets the first wait before a new pool is read back.
func WithPollInterval(interval time.Duration) option.Function[Options] {
	return func(o *Options) { o.PollInterval = interval }
}

// WithClusterVersionTTL sets how often the cluster's Kubernetes version is read again, and so how
// soon after an upgrade of the control plane the nodes on the old version drift.
func WithClusterVersionTTL(ttl time.Duration) option.Function[Options] {
	return func(o *Options) { o.ClusterVersionTTL = ttl }
}

// WithClock sets the clock that times listings and waits.
func WithClock(clk clock.Clock) option.Function[Options] {
	return func(o *Options) { o.Clock = clk }
}

// Provider launches each NodeClaim as a single-node pool of the LKE cluster.
type Provider struct {
	api     API
	cluster *Cluster
	// ownershipTag is on every pool the provider launches: the cluster's id.
	ownershipTag string
	// legacyTags marked the pools of earlier versions, by the cluster's name: CLUSTER_NAME and
	// the cluster's label now.
	legacyTags  []string
	unavailable *cache.UnavailableOfferings
	pools       *poolCache
	opts        Options

	versionMu        sync.Mutex
	clusterVersion   string
	clusterVersionAt time.Time
}

var (
	_ nodeprovider.Provider      = (*Provider)(nil)
	_ nodeprovider.DriftDetector = (*Provider)(nil)
)

// NewProvider returns a provider for the cluster. Its pools carry the cluster's id as their
// ownership tag; pools an earlier version tagged with the cluster's name (clusterName, the
// CLUSTER_NAME setting, or the cluster's label) are its own too until MigrateOwnership retags
// them. unavailable learns of plans a region has no capacity for.
func NewProvider(api API, cluster *Cluster, clusterName string, unavailable *cache.UnavailableOfferings, opts ...option.Function[Options]) *Provider {
	resolved := option.Resolve(append([]option.Function[Options]{
		WithListingTTL(DefaultListingTTL),
		WithLaunchTimeout(DefaultLaunchTimeout),
		WithPollInterval(DefaultPollInterval),
		WithClusterVersionTTL(DefaultClusterVersionTTL),
		WithClock(clock.RealClock{}),
	}, opts...)...)
	p := &Provider{
		api:              api,
		cluster:          cluster,
		ownershipTag:     nodeprovider.LKEClusterTag(cluster.ID),
		legacyTags:       lo.Uniq([]string{nodeprovider.ClusterTag(clusterName), nodeprovider.ClusterTag(cluster.Label)}),
		unavailable:      unavailable,
		opts:             *resolved,
		clusterVersion:   cluster.K8sVersion,
		clusterVersionAt: resolved.Clock.Now(),
	}
	p.pools = newPoolCache(api, cluster.ID, p.owns, resolved.Clock)
	return p
}

// OwnershipTag is the tag on every pool the provider launches; garbage collection touches no pool
// without it.
func (p *Provider) OwnershipTag() string { return p.ownershipTag }

// owns reports whether the provider launched the pool, in this version or an earlier one.
func (p *Provider) owns(pool linodego.LKENodePool) bool {
	return slices.Contains(pool.Tags, p.ownershipTag) || slices.ContainsFunc(p.legacyTags, func(tag string) bool { return slices.Contains(pool.Tags, tag) })
}

// foreign returns why a pool of the cluster (the API path proves that much) is not the provider's,
// nil when it is: it carries the ownership tag (or an earlier version's) or, that tag removed by
// hand, a NodeClaim's tag and no other cluster's ownership tag. The cluster's other pools (its
// default pool, those another tool manages) carry no tag of ours and are never touched.
func (p *Provider) foreign(pool linodego.LKENodePool, instanceID int, label string) *nodeprovider.ForeignNodeError {
	switch {
	case p.owns(pool):
		return nil
	case ownedByAnother(pool):
		another, _ := lo.Find(pool.Tags, nodeprovider.IsOwnershipTag)
		return nodeprovider.NewForeignNodeError(instanceID, label, fmt.Sprintf("its node pool %d carries another cluster's ownership tag %s, not %s", pool.ID, another, p.ownershipTag))
	case slices.ContainsFunc(pool.Tags, nodeprovider.IsNodeClaimTag):
		return nil
	default:
		return nodeprovider.NewForeignNodeError(instanceID, label, fmt.Sprintf("its node pool %d carries no tag of ours: neither the ownership tag %s nor a NodeClaim's", pool.ID, p.ownershipTag))
	}
}

// MigrateOwnership retags the pools an earlier version tagged with the cluster's name with the
// cluster's id, so that they stay the provider's, and garbage collection's to look at, whatever
// the cluster is called later; so too the pools whose tag someone removed while the provider
// held them (see poolCache). It returns how many pools it retagged.
func (p *Provider) MigrateOwnership(ctx context.Context) (int, error) {
	listing, err := p.pools.get(ctx, 0)
	if err != nil {
		return 0, fmt.Errorf("listing node pools: %w", err)
	}
	migrated := 0
	var errs []error
	for _, pool := range listing.pools {
		// A pool this controller listed may have been stripped of our tags, or given another
		// cluster's, since: it is not ours to tag back.
		if slices.Contains(pool.Tags, p.ownershipTag) || p.foreign(pool, 0, "") != nil {
			continue
		}
		tags := append(slices.DeleteFunc(slices.Clone(pool.Tags), func(tag string) bool { return slices.Contains(p.legacyTags, tag) }), p.ownershipTag)
		updated, err := p.api.UpdateLKENodePool(ctx, p.cluster.ID, pool.ID, linodego.LKENodePoolUpdateOptions{Tags: &tags})
		if err != nil {
			errs = append(errs, fmt.Errorf("retagging node pool %d: %w", pool.ID, err))
			continue
		}
		p.pools.put(*updated)
		migrated++
		log.FromContext(ctx).WithValues("pool-id", pool.ID).Info("node pool now owned by the LKE cluster's id")
	}
	return migrated, errors.Join(errs...)
}

// Create launches a single-node pool for the NodeClaim, or resumes waiting for the pool an
// earlier attempt created, and returns the node once LKE has created its Linode.
func (p *Provider) Create(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (*nodeprovider.Node, error) {
	listing, err := p.pools.get(ctx, p.opts.ListingTTL)
	if err != nil {
		return nil, fmt.Errorf("listing node pools to find an earlier launch: %w", err)
	}
	pool, found := listing.byNodeClaim(nodeClaim.Name)
	if found {
		log.FromContext(ctx).WithValues("pool-id", pool.ID).V(1).Info("resuming the launch of an existing node pool")
		return p.awaitInstance(ctx, pool)
	}
	// A pool that lost its ownership tag while its launch was under way is missing from the
	// listing of a controller that never saw it tagged; launching another would leave it running,
	// and billed, out of garbage collection's sight. The launch tags it back and waits for it.
	if pool, found = p.pools.stray(nodeClaim.Name); found {
		log.FromContext(ctx).WithValues("pool-id", pool.ID).Info("resuming the launch of a node pool that lost its ownership tag")
		if pool, err = p.tagBack(ctx, pool, nodeClaim.Name); err != nil {
			return nil, err
		}
		return p.awaitInstance(ctx, pool)
	}
	instanceType, err := p.cheapestLaunchable(nodeClaim, instanceTypes)
	if err != nil {
		return nil, err
	}
	created, err := p.api.CreateLKENodePool(ctx, p.cluster.ID, p.poolCreateOptions(nodeClass, nodeClaim, instanceType))
	if err != nil {
		return nil, p.launchError(ctx, err, nodeClass, instanceType)
	}
	p.pools.put(*created)
	log.FromContext(ctx).WithValues("pool-id", created.ID, "instance-type", instanceType).V(1).Info("created node pool")
	return p.awaitInstance(ctx, *created)
}

// tagBack gives a pool of the NodeClaim that lost its tags (found by its NodeClaim tag, or by its
// label, which Create sets to the NodeClaim's name) the ownership tag and the NodeClaim's tag
// again, so that it is this cluster's, and the NodeClaim's, by its tags once more.
func (p *Provider) tagBack(ctx context.Context, pool linodego.LKENodePool, nodeClaimName string) (linodego.LKENodePool, error) {
	tags := slices.DeleteFunc(slices.Clone(pool.Tags), func(tag string) bool {
		return slices.Contains(p.legacyTags, tag) || tag == p.ownershipTag || nodeprovider.IsNodeClaimTag(tag)
	})
	tags = append(tags, p.ownershipTag, nodeprovider.NodeClaimTag(nodeClaimName))
	updated, err := p.api.UpdateLKENodePool(ctx, p.cluster.ID, pool.ID, linodego.LKENodePoolUpdateOptions{Tags: &tags})
	if err != nil {
		return linodego.LKENodePool{}, fmt.Errorf("tagging node pool %d, whose tags someone removed, as NodeClaim %s's again: %w", pool.ID, nodeClaimName, err)
	}
	p.pools.put(*updated)
	return *updated, nil
}

// nodeClassFields are the pool fields a LinodeNodeClass sets: a refusal naming one of them can
// only be lifted by changing the class.
var nodeClassFields = []string{"firewall_id", "disk_encryption", "tags", "k8s_version", "update_strategy"}

// nodeClaimFields are the pool fields the NodeClaim's labels and taints, its NodePool's, fill.
var nodeClaimFields = []string{"labels", "taints"}

// ReasonPoolMetadataRefused is the reason of a NodeClaim's Launched condition when Linode refused
// its labels or taints on its pool.
const ReasonPoolMetadataRefused = "PoolLabelsOrTaintsRefused"

// namesAny reports whether the refusal names one of fields, or a part of one ("labels.team").
func namesAny(refusal linode.Refusal, fields []string) bool {
	return slices.ContainsFunc(refusal.Fields, func(field string) bool {
		return slices.ContainsFunc(fields, func(name string) bool {
			return field == name || strings.HasPrefix(field, name+".") || strings.HasPrefix(field, name+"[")
		})
	})
}

// launchError classifies a failed pool create. A refusal about the NodeClass's own fields needs
// the class changed; one about the labels or taints, which the pool carries only as far as
// Linode's known rules accept them, is the NodeClaim's and says so on its Launched condition
// (core retries it, and replaces it once the launch times out); any other refusal (capacity, an account limit, a plan the account or LKE may
// not use, one Linode does not explain) takes the plan out of the region for a while and sends
// Karpenter to the other plans; anything else (rate limit, "Linode busy.", outage, lost answer)
// is retried by Karpenter after a fresh look for the pool.
func (p *Provider) launchError(ctx context.Context, err error, nodeClass *v1.LinodeNodeClass, instanceType string) error {
	refusal, refused := linode.AsRefusal(err)
	switch {
	case !refused:
		// The pool may exist although the answer never arrived: the next attempt must list anew.
		// A create never sent (no turn in the rate limit) leaves the listing whole.
		if !linode.IsNoTurn(err) {
			p.pools.invalidate()
		}
		return fmt.Errorf("creating node pool of %s: %w", instanceType, err)
	case refusal.Kind == linode.RefusalInvalid && namesAny(refusal, nodeClassFields):
		return nodeprovider.NewInvalidLaunchError(err, instanceType, refusal.Reason)
	case refusal.Kind == linode.RefusalInvalid && namesAny(refusal, nodeClaimFields):
		message := fmt.Sprintf("Linode refused the labels or taints of the NodeClaim, from its NodePool, on its LKE pool: %s", refusal.Reason)
		return cloudprovider.NewCreateError(fmt.Errorf("creating node pool of %s: %w", instanceType, err), ReasonPoolMetadataRefused, message)
	default:
		ttl := offeringRefusalTTL(refusal)
		p.unavailable.MarkUnavailableFor(ctx, refusal.Reason, ttl, instanceType, p.cluster.Region)
		if p.opts.Recorder != nil {
			p.opts.Recorder.Publish(offeringRefusedEvent(nodeClass, instanceType, p.cluster.Region, refusal, ttl))
		}
		return cloudprovider.NewInsufficientCapacityError(fmt.Errorf("Linode refused to launch %s in %s: %w", instanceType, p.cluster.Region, err))
	}
}

// offeringRefusalTTL is how long a refused plan stays out of the region, by what the refusal says.
func offeringRefusalTTL(refusal linode.Refusal) time.Duration {
	switch {
	case refusal.Kind == linode.RefusalCapacity:
		return cache.UnavailableOfferingsTTL
	case refusal.Kind == linode.RefusalAccountLimit:
		return cache.AccountLimitTTL
	case slices.Contains(refusal.Fields, "type"):
		return cache.RefusedPlanTTL
	default:
		return cache.UnexplainedRefusalTTL
	}
}

func offeringRefusedEvent(nodeClass *v1.LinodeNodeClass, instanceType, region string, refusal linode.Refusal, ttl time.Duration) events.Event {
	return events.Event{
		InvolvedObject: nodeClass,
		Type:           corev1.EventTypeWarning,
		Reason:         "OfferingUnavailable",
		Message: fmt.Sprintf("Linode refused to launch %s in %s (%s): %s; launching other plans, and this one again in %s",
			instanceType, region, refusal.Kind, refusal.Reason, ttl),
		DedupeValues: []string{string(nodeClass.UID), instanceType, region, string(refusal.Kind)},
	}
}

// awaitInstance reads the pool back until LKE has created its node's Linode, for at most the
// launch timeout. Giving up is an ordinary error: Karpenter retries Create, which finds this pool
// by its tag and waits again instead of launching a second one.
func (p *Provider) awaitInstance(ctx context.Context, pool linodego.LKENodePool) (*nodeprovider.Node, error) {
	deadline := p.opts.Clock.Now().Add(p.opts.LaunchTimeout)
	interval := p.opts.PollInterval
	for {
		if member, ok := launchedNode(pool); ok {
			p.pools.put(pool)
			return p.nodeOf(pool, member), nil
		}
		remaining := deadline.Sub(p.opts.Clock.Now())
		if remaining <= 0 {
			return nil, fmt.Errorf("LKE has not created the Linode of node pool %d within %s; the next attempt waits for the same pool", pool.ID, p.opts.LaunchTimeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.opts.Clock.After(min(interval, remaining)):
		}
		interval = min(2*interval, maxPollInterval)
		refreshed, err := p.api.GetLKENodePool(ctx, p.cluster.ID, pool.ID)
		if err != nil {
			if linode.IsNotFound(err) {
				p.pools.remove(pool.ID)
				return nil, fmt.Errorf("node pool %d was deleted before its Linode was created: %w", pool.ID, err)
			}
			return nil, fmt.Errorf("reading node pool %d: %w", pool.ID, err)
		}
		pool = *refreshed
	}
}

// Get finds the node by its Linode in the pool listing, or, when the listing misses it, by reading
// the Linode and its pool.
func (p *Provider) Get(ctx context.Context, providerID string) (*nodeprovider.Node, error) {
	id, err := nodeprovider.ParseProviderID(providerID)
	if err != nil {
		return nil, err
	}
	listing, err := p.pools.get(ctx, p.pools.cache.AcceptedAge(ctx, p.opts.ListingTTL))
	if err != nil {
		return nil, fmt.Errorf("listing node pools: %w", err)
	}
	pool, member, found := listing.byInstance(id)
	if !found && listing.age(p.opts.Clock) >= missRefreshAge {
		if listing, err = p.pools.get(ctx, missRefreshAge); err != nil {
			return nil, fmt.Errorf("listing node pools: %w", err)
		}
		pool, member, found = listing.byInstance(id)
	}
	if !found {
		return p.lookUp(ctx, id)
	}
	if foreign := p.foreign(pool, id, p.linodeLabel(member)); foreign != nil {
		return nil, foreign
	}
	return p.nodeOf(pool, member), nil
}

// lookUp finds a Linode the listing does not show by asking the API about it and its pool alone.
// A listing misses the pool whose ownership tag someone removed, and can miss one that moved
// between pages while they were read: neither is a node gone, and calling it gone would finalize
// its NodeClaim and leave the pool running, and billed. Only a 404 for the Linode or its pool is.
// A Linode that is not a node of this cluster, or whose pool carries no tag of ours (the cluster's
// other pools), is a ForeignNodeError.
func (p *Provider) lookUp(ctx context.Context, instanceID int) (*nodeprovider.Node, error) {
	instance, err := p.api.GetInstance(ctx, instanceID)
	if err != nil {
		if linode.IsNotFound(err) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("Linode %d is gone: %w", instanceID, err))
		}
		return nil, fmt.Errorf("reading Linode %d, which no listed node pool holds: %w", instanceID, err)
	}
	poolID, ok := p.poolOfLabel(instance.Label)
	if instance.LKEClusterID != p.cluster.ID || !ok {
		return nil, nodeprovider.NewForeignNodeError(instanceID, instance.Label, notANodeOf(p.cluster.ID, instance.LKEClusterID))
	}
	pool, err := p.api.GetLKENodePool(ctx, p.cluster.ID, poolID)
	if err != nil {
		if linode.IsNotFound(err) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("node pool %d of Linode %d is gone: %w", poolID, instanceID, err))
		}
		return nil, fmt.Errorf("reading node pool %d of Linode %d: %w", poolID, instanceID, err)
	}
	member, found := lo.Find(pool.Linodes, func(member linodego.LKENodePoolLinode) bool { return member.InstanceID == instanceID })
	if !found {
		// LKE takes a Linode out of its pool before it deletes it (a recycle, a node deleted):
		// it is gone once its own GET says so.
		return nil, fmt.Errorf("node pool %d no longer holds Linode %d, which LKE has not deleted yet", poolID, instanceID)
	}
	if foreign := p.foreign(*pool, instanceID, instance.Label); foreign != nil {
		return nil, foreign
	}
	p.pools.put(*pool)
	return p.nodeOf(*pool, member), nil
}

// notANodeOf says why a Linode is not a node of the LKE cluster.
func notANodeOf(clusterID, itsCluster int) string {
	if itsCluster == 0 {
		return fmt.Sprintf("it is not a node of LKE cluster %d, but a plain Linode", clusterID)
	}
	return fmt.Sprintf("it is a node of LKE cluster %d, not of LKE cluster %d", itsCluster, clusterID)
}

// linodeLabel is the label of a pool node's Linode, lke<clusterID>-<nodeID> (its Node's name);
// empty while LKE does not list the node.
func (p *Provider) linodeLabel(member linodego.LKENodePoolLinode) string {
	if member.ID == "" {
		return ""
	}
	return fmt.Sprintf("lke%d-%s", p.cluster.ID, member.ID)
}

// poolOfLabel reads the pool id out of an LKE node's Linode label, lke<clusterID>-<poolID>-<hex>.
func (p *Provider) poolOfLabel(label string) (int, bool) {
	rest, ok := strings.CutPrefix(label, fmt.Sprintf("lke%d-", p.cluster.ID))
	if !ok {
		return 0, false
	}
	poolID, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(poolID)
	return id, err == nil && id > 0
}

// List returns the nodes of every pool the provider launched for this cluster; a pool whose node
// LKE does not list yet counts as one node without a Linode.
func (p *Provider) List(ctx context.Context) ([]*nodeprovider.Node, error) {
	listing, err := p.pools.get(ctx, p.pools.cache.AcceptedAge(ctx, p.opts.ListingTTL))
	if err != nil {
		return nil, fmt.Errorf("listing node pools: %w", err)
	}
	nodes := make([]*nodeprovider.Node, 0, len(listing.pools))
	for _, pool := range listing.pools {
		if p.foreign(pool, 0, "") == nil {
			nodes = append(nodes, p.nodesOf(pool)...)
		}
	}
	return nodes, nil
}

// Delete removes the node's pool, or only the node when the pool holds others. A node that is not
// of this cluster's pools, by what Get or List read of it, is refused with a ForeignNodeError,
// whoever found it.
func (p *Provider) Delete(ctx context.Context, node *nodeprovider.Node) error {
	if err := p.checkOurs(node); err != nil {
		return err
	}
	poolID, nodeID := node.LKE.PoolID, node.LKE.NodeID
	onlyTheNode := node.LKE.PoolSize > 1
	if onlyTheNode && nodeID == "" {
		// Deleting the pool would take its other nodes along.
		return fmt.Errorf("node pool %d holds %d nodes and LKE does not list this one yet; it is deleted alone once LKE does", poolID, node.LKE.PoolSize)
	}
	var err error
	if onlyTheNode {
		err = p.api.DeleteLKENodePoolNode(ctx, p.cluster.ID, nodeID)
	} else {
		err = p.api.DeleteLKENodePool(ctx, p.cluster.ID, poolID)
	}
	if err != nil && !linode.IsNotFound(err) {
		return fmt.Errorf("deleting node pool %d: %w", poolID, err)
	}
	if onlyTheNode {
		p.pools.invalidate()
	} else {
		p.pools.remove(poolID)
	}
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("node pool %d is gone: %w", poolID, err))
	}
	log.FromContext(ctx).WithValues("pool-id", poolID, "node-id", nodeID).V(1).Info("deleted LKE node")
	return nil
}

// Reboot restarts the node's Linode in place.
func (p *Provider) Reboot(ctx context.Context, node *nodeprovider.Node) error {
	if err := p.checkOurs(node); err != nil {
		return err
	}
	return nodeprovider.Reboot(ctx, p.api, node.InstanceID)
}

// checkOurs refuses a node that is not of this cluster's pools.
func (p *Provider) checkOurs(node *nodeprovider.Node) error {
	if node.LKE == nil || node.LKE.ClusterID != p.cluster.ID {
		return nodeprovider.NewForeignNodeError(node.InstanceID, node.Label, fmt.Sprintf("it is not a node of LKE cluster %d's pools", p.cluster.ID))
	}
	if foreign := p.foreign(linodego.LKENodePool{ID: node.LKE.PoolID, Tags: node.Tags}, node.InstanceID, node.Label); foreign != nil {
		return foreign
	}
	return nil
}

// nodesOf turns a pool into its nodes; a pool whose node LKE does not list yet gives one node
// without a Linode, so that the pool is never invisible.
func (p *Provider) nodesOf(pool linodego.LKENodePool) []*nodeprovider.Node {
	if len(pool.Linodes) == 0 {
		return []*nodeprovider.Node{p.nodeOf(pool, linodego.LKENodePoolLinode{})}
	}
	nodes := make([]*nodeprovider.Node, 0, len(pool.Linodes))
	for _, member := range pool.Linodes {
		nodes = append(nodes, p.nodeOf(pool, member))
	}
	return nodes
}

func (p *Provider) nodeOf(pool linodego.LKENodePool, member linodego.LKENodePoolLinode) *nodeprovider.Node {
	nodeClaimName, _ := nodeprovider.TagValue(pool.Tags, nodeprovider.TagKeyNodeClaim)
	nodePoolName, _ := nodeprovider.TagValue(pool.Tags, nodeprovider.TagKeyNodePool)
	return &nodeprovider.Node{
		InstanceID:    member.InstanceID,
		Label:         p.linodeLabel(member),
		NodeClaimName: nodeClaimName,
		NodePoolName:  nodePoolName,
		NodeClaimTag:  nodeprovider.SoleNodeClaimTag(pool.Tags),
		InstanceType:  pool.Type,
		Region:        p.cluster.Region,
		Status:        string(member.Status),
		Tags:          pool.Tags,
		LKE: &nodeprovider.LKENode{
			ClusterID:  p.cluster.ID,
			PoolID:     pool.ID,
			NodeID:     member.ID,
			PoolSize:   max(pool.Count, len(pool.Linodes)),
			K8sVersion: lo.FromPtr(pool.K8sVersion),
			FirewallID: lo.FromPtr(pool.FirewallID),
		},
	}
}

// Adopt hands the node's single-node pool over to the NodeClaim named nodeClaimName: the pool's
// NodeClaim tag, and the NodeClaim label LKE puts on its nodes, name the new NodeClaim, so that
// its launch finds this pool instead of creating another; the pool carries the ownership tag
// from then on. A pool that is not the provider's, as read now, is refused with a
// ForeignNodeError.
func (p *Provider) Adopt(ctx context.Context, node *nodeprovider.Node, nodeClaimName string) error {
	if err := p.checkOurs(node); err != nil {
		return err
	}
	pool, err := p.api.GetLKENodePool(ctx, p.cluster.ID, node.LKE.PoolID)
	if err != nil {
		return fmt.Errorf("reading node pool %d: %w", node.LKE.PoolID, err)
	}
	if foreign := p.foreign(*pool, node.InstanceID, node.Label); foreign != nil {
		return foreign
	}
	if pool.Count > 1 {
		return fmt.Errorf("node pool %d holds %d nodes: only a single-node pool can belong to one NodeClaim", pool.ID, pool.Count)
	}
	tags := slices.DeleteFunc(slices.Clone(pool.Tags), func(tag string) bool {
		return nodeprovider.IsNodeClaimTag(tag) || tag == p.ownershipTag || slices.Contains(p.legacyTags, tag)
	})
	tags = append(tags, p.ownershipTag, nodeprovider.NodeClaimTag(nodeClaimName))
	// The pool's labels go back as they are, but for any Linode's rules now refuse, which would
	// fail the update every time.
	labels := linodego.LKENodePoolLabels{}
	for key, value := range pool.Labels {
		if linodeAcceptsPoolLabel(key, value) {
			labels[key] = value
		}
	}
	labels[v1.LabelNodeClaim] = nodeClaimName
	updated, err := p.api.UpdateLKENodePool(ctx, p.cluster.ID, pool.ID, linodego.LKENodePoolUpdateOptions{Tags: &tags, Labels: &labels})
	if err != nil {
		return fmt.Errorf("handing node pool %d over to NodeClaim %s: %w", pool.ID, nodeClaimName, err)
	}
	p.pools.put(*updated)
	return nil
}

// launchedNode is the node of a single-node pool once LKE lists it with its Linode.
func launchedNode(pool linodego.LKENodePool) (linodego.LKENodePoolLinode, bool) {
	return lo.Find(pool.Linodes, func(member linodego.LKENodePoolLinode) bool { return member.InstanceID != 0 })
}
