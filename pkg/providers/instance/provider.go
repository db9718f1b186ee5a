package instance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	"github.com/samber/lo"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// API is the part of the Linode API the instance provider calls.
type API interface {
	ListInstances(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Instance, error)
	GetInstance(ctx context.Context, linodeID int) (*linodego.Instance, error)
	CreateInstance(ctx context.Context, opts linode.InstanceCreateOptions) (*linodego.Instance, error)
	DeleteInstance(ctx context.Context, linodeID int) error
	RebootInstance(ctx context.Context, linodeID int, configID int) error
	ListInstanceConfigs(ctx context.Context, linodeID int, opts *linodego.ListOptions) ([]linodego.InstanceConfig, error)
	ListInterfaces(ctx context.Context, linodeID int, opts *linodego.ListOptions) ([]linodego.LinodeInterface, error)
	GetInstanceIPAddresses(ctx context.Context, linodeID int) (*linodego.InstanceIPAddressResponse, error)
	CreateIPv6Range(ctx context.Context, opts linodego.IPv6RangeCreateOptions) (*linodego.IPv6Range, error)
	GetPlacementGroup(ctx context.Context, id int) (*linodego.PlacementGroup, error)
	linode.InstanceDiskAPI
}

const (
	// DefaultListingTTL is how long one listing of the cluster's Linodes answers Get and List.
	DefaultListingTTL = 5 * time.Second
	// listPageSize is the largest page the API serves: 500 Linodes cost one call.
	listPageSize = 500
	// missRefreshAge is how old a listing may be and still be trusted to show a Linode missing; a
	// Linode missing from an older listing is looked for in a new one first.
	missRefreshAge = time.Second
)

// Options tune the provider; the defaults suit the live API.
type Options struct {
	ListingTTL time.Duration
	Clock      clock.Clock
}

// WithListingTTL sets how long one listing answers Get and List.
func WithListingTTL(ttl time.Duration) option.Function[Options] {
	return func(o *Options) { o.ListingTTL = ttl }
}

// WithClock sets the clock that times listings.
func WithClock(clk clock.Clock) option.Function[Options] {
	return func(o *Options) { o.Clock = clk }
}

// TokenSource gives the bootstrap token a NodeClaim's kubelet joins with (bootstraptoken.KeyFile):
// the token the node identity component issues for the NodeClaim.
type TokenSource interface {
	Token(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error)
}

// KubeletConfigSource is the cluster's own kubelet configuration, which a node's starts from.
type KubeletConfigSource interface {
	Get(ctx context.Context) (*kubeletv1beta1.KubeletConfiguration, error)
}

// Provider launches each NodeClaim as a plain Linode that joins the cluster through cloud-init
// and the kubelet's TLS bootstrap.
type Provider struct {
	api         API
	region      string
	cluster     *Cluster
	resolved    *Resolved
	tokens      TokenSource
	kubelet     KubeletConfigSource
	unavailable *cache.UnavailableOfferings
	instances   *nodeprovider.ListingCache[linodego.Instance]
	subnets     *subnetCache
	opts        Options
}

var (
	_ nodeprovider.Provider      = (*Provider)(nil)
	_ nodeprovider.DriftDetector = (*Provider)(nil)
)

// NewProvider returns the provider for nodes of the cluster in the region, which launches with
// what the NodeClass controller's resolvers recorded in resolved.
func NewProvider(api API, region string, cluster *Cluster, resolved *Resolved, tokens TokenSource, kubelet KubeletConfigSource, unavailable *cache.UnavailableOfferings, opts ...option.Function[Options]) *Provider {
	o := option.Resolve(append([]option.Function[Options]{
		WithListingTTL(DefaultListingTTL),
		WithClock(clock.RealClock{}),
	}, opts...)...)
	ownerTag := cluster.OwnerTag()
	list := func(ctx context.Context) ([]linodego.Instance, error) {
		// The filter keeps the listing to this cluster's Linodes: one page for up to 500 nodes,
		// whatever else the account runs.
		filter := fmt.Sprintf(`{"tags": %q}`, ownerTag)
		listed, err := api.ListInstances(ctx, &linodego.ListOptions{PageSize: listPageSize, Filter: filter})
		// Anyone may tag a Linode with this cluster's tag, an enterprise LKE pool's user too (its
		// tags go to its Linodes): the tag alone does not make an LKE node this cluster's.
		return slices.DeleteFunc(listed, func(in linodego.Instance) bool { return foreign(in, ownerTag) != nil }), err
	}
	readAlone := func(ctx context.Context, id int) (linodego.Instance, error) {
		in, err := api.GetInstance(ctx, id)
		if err != nil {
			return linodego.Instance{}, err
		}
		return *in, nil
	}
	return &Provider{
		api:         api,
		region:      region,
		cluster:     cluster,
		resolved:    resolved,
		tokens:      tokens,
		kubelet:     kubelet,
		unavailable: unavailable,
		instances:   nodeprovider.NewListingCache(list, readAlone, func(in linodego.Instance) int { return in.ID }, listPageSize, o.Clock),
		subnets:     newSubnetCache(api),
		opts:        *o,
	}
}

// Create launches a Linode for the NodeClaim, or returns the one an earlier, interrupted attempt
// launched.
func (p *Provider) Create(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (*nodeprovider.Node, error) {
	nodeClass, err := p.resolved.Trusted(nodeClass)
	if err != nil {
		return nil, err
	}
	listing, err := p.instances.Get(ctx, p.opts.ListingTTL)
	if err != nil {
		return nil, fmt.Errorf("listing Linodes to find an earlier launch: %w", err)
	}
	if existing, found := byNodeClaim(listing.Items, nodeClaim.Name); found {
		log.FromContext(ctx).WithValues("linode-id", existing.ID).V(1).Info("found the Linode an earlier launch created")
		return p.launched(ctx, nodeClass, existing, true)
	}
	instanceType, err := nodeprovider.CheapestLaunchable(nodeClaim, instanceTypes, p.region, p.unavailable)
	if err != nil {
		return nil, err
	}
	if err := p.placementGroupCompliant(ctx, nodeClass); err != nil {
		return nil, err
	}
	createOptions, err := p.createOptions(ctx, nodeClass, nodeClaim, instanceType)
	if err != nil {
		return nil, err
	}
	created, err := p.api.CreateInstance(ctx, createOptions)
	if err != nil {
		if labelTaken(err) {
			return p.earlierLaunch(ctx, nodeClass, nodeClaim, createOptions.Label, err)
		}
		return nil, p.launchError(ctx, err, instanceType.Name)
	}
	p.instances.Put(*created)
	log.FromContext(ctx).WithValues("linode-id", created.ID, "instance-type", instanceType.Name).V(1).Info("created Linode")
	return p.launched(ctx, nodeClass, *created, needsFinishing(&nodeClass.Spec))
}

// launched completes the launch of the NodeClaim's Linode with what Linode sets up only once a
// Linode exists: its IPv6 ranges and, when it was left powered off (unfinished says it may
// be), its disks and first boot. A launch retried after an interrupted one gets here with the
// Linode the first created, so each step must do only what is still missing.
func (p *Provider) launched(ctx context.Context, nodeClass *v1.LinodeNodeClass, in linodego.Instance, unfinished bool) (*nodeprovider.Node, error) {
	if err := p.routeIPv6Ranges(ctx, nodeClass, in.ID); err != nil {
		return nil, err
	}
	node := p.nodeOf(in)
	if unfinished {
		if err := p.finishLaunch(ctx, nodeClass, node); err != nil {
			return nil, err
		}
	}
	return node, nil
}

// labelTaken reports whether Linode refused a create because another of the account's Linodes has
// its label.
func labelTaken(err error) bool {
	refusal, refused := linode.AsRefusal(err)
	return refused && refusal.Kind == linode.RefusalInvalid && slices.Contains(refusal.Fields, "label")
}

// earlierLaunch finds, by its label, the Linode an earlier launch of the NodeClaim created that
// the listing misses: someone removed its ownership tag, and this controller never saw it tagged
// (it restarted since). Linode labels are unique in an account and Create makes the label from the
// NodeClaim's name, so the launch was refused for the label; launching under another would leave
// the first Linode running, and billed, out of garbage collection's sight. The Linode is the
// NodeClaim's only if it still carries the NodeClaim's tag (see foreign); one that does not keeps the
// NodeClaim from launching, and the error names it.
func (p *Provider) earlierLaunch(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, label string, refused error) (*nodeprovider.Node, error) {
	holders, err := p.api.ListInstances(ctx, &linodego.ListOptions{Filter: fmt.Sprintf(`{"label": %q}`, label)})
	if err != nil {
		return nil, fmt.Errorf("looking for the Linode labelled %s, which Linode says exists (%w): %w", label, refused, err)
	}
	tag := nodeprovider.NodeClaimTag(nodeClaim.Name)
	earlier, found := lo.Find(holders, func(in linodego.Instance) bool {
		return nodeprovider.SoleNodeClaimTag(in.Tags) == tag && foreign(in, p.cluster.OwnerTag()) == nil
	})
	if !found {
		ids := lo.Map(holders, func(in linodego.Instance, _ int) int { return in.ID })
		return nil, fmt.Errorf("the label %s of NodeClaim %s's Linode is taken by Linode %v, which lacks the tag %s (or is another cluster's): %w", label, nodeClaim.Name, ids, tag, refused)
	}
	p.instances.Put(earlier)
	log.FromContext(ctx).WithValues("linode-id", earlier.ID).Info("found the Linode an earlier launch created, without this cluster's ownership tag")
	return p.launched(ctx, nodeClass, earlier, true)
}

// launchError classifies a failed create: capacity sends Karpenter to another offering, a refused
// request needs the NodeClass changed, and anything else (rate limit, outage, lost answer) is
// retried by Karpenter after a fresh look for the Linode.
func (p *Provider) launchError(ctx context.Context, err error, instanceType string) error {
	switch {
	case linode.IsInsufficientCapacity(err):
		p.unavailable.MarkUnavailable(ctx, linode.Reason(err), instanceType, p.region)
		return cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching %s in %s: %w", instanceType, p.region, err))
	case linode.IsInvalidRequest(err):
		return nodeprovider.NewInvalidLaunchError(err, instanceType, linode.Reason(err))
	case linode.IsNoTurn(err):
		// Never sent: the listing still holds every Linode there is.
		return fmt.Errorf("creating a Linode of %s: %w", instanceType, err)
	default:
		// The Linode may exist although the answer never arrived: the next attempt must list anew.
		p.instances.Invalidate()
		return fmt.Errorf("creating a Linode of %s: %w", instanceType, err)
	}
}

// Get finds the node's Linode in the listing, or asks for it when the listing misses it: only the
// API's 404 makes a node gone. A Linode that answers without the ownership tag (someone removed
// it) is still the node if it carries a NodeClaim's tag and no cluster's (see foreign), so that
// deleting its NodeClaim deletes it; any other Linode of the account (another cluster's, an LKE
// node, one with no tag of ours) is a ForeignNodeError: not this cluster's node, nor gone.
func (p *Provider) Get(ctx context.Context, providerID string) (*nodeprovider.Node, error) {
	id, err := nodeprovider.ParseProviderID(providerID)
	if err != nil {
		return nil, err
	}
	listing, err := p.instances.Get(ctx, p.instances.AcceptedAge(ctx, p.opts.ListingTTL))
	if err != nil {
		return nil, fmt.Errorf("listing Linodes: %w", err)
	}
	if found, ok := byID(listing.Items, id); ok {
		return p.ownNode(found)
	}
	if listing.Age(p.opts.Clock) >= missRefreshAge {
		if listing, err = p.instances.Get(ctx, missRefreshAge); err != nil {
			return nil, fmt.Errorf("listing Linodes: %w", err)
		}
		if found, ok := byID(listing.Items, id); ok {
			return p.ownNode(found)
		}
	}
	found, err := p.api.GetInstance(ctx, id)
	if err != nil {
		if linode.IsNotFound(err) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("Linode %d is gone: %w", id, err))
		}
		return nil, fmt.Errorf("reading Linode %d: %w", id, err)
	}
	node, err := p.ownNode(*found)
	if err != nil {
		return nil, err
	}
	p.instances.Put(*found)
	return node, nil
}

// ownNode is the Linode as a node of this cluster, or a ForeignNodeError when it is not one: a
// Linode the listing showed may have been retagged since.
func (p *Provider) ownNode(in linodego.Instance) (*nodeprovider.Node, error) {
	if err := foreign(in, p.cluster.OwnerTag()); err != nil {
		return nil, err
	}
	return p.nodeOf(in), nil
}

// foreign returns why a Linode is not one of the nodes of the cluster whose ownership tag is
// ownerTag, nil when it is one: it is no LKE node (LKE clusters, an LKE-mode Karpenter's among
// them, own those) and it carries the ownership tag or, that tag removed by hand, a NodeClaim's
// tag and no cluster's ownership tag. A Linode stripped of all its tags cannot be told from any
// other Linode of the account: a NodeClaim (its provider ID) naming it must not make the
// controller delete it, nor call it gone and leave it running unseen.
func foreign(in linodego.Instance, ownerTag string) *nodeprovider.ForeignNodeError {
	reason := func(format string, args ...any) *nodeprovider.ForeignNodeError {
		return nodeprovider.NewForeignNodeError(in.ID, in.Label, fmt.Sprintf(format, args...))
	}
	if in.LKEClusterID != 0 {
		return reason("it is a node of LKE cluster %d, not a plain Linode of this cluster", in.LKEClusterID)
	}
	if slices.Contains(in.Tags, ownerTag) {
		return nil
	}
	if another, found := lo.Find(in.Tags, nodeprovider.IsOwnershipTag); found {
		return reason("it carries another cluster's ownership tag %s, not this cluster's %s", another, ownerTag)
	}
	if !slices.ContainsFunc(in.Tags, nodeprovider.IsNodeClaimTag) {
		return reason("it carries neither this cluster's ownership tag %s nor a NodeClaim's tag", ownerTag)
	}
	return nil
}

// List returns every Linode the provider launched for this cluster, those whose ownership tag was
// removed since the provider saw them included.
func (p *Provider) List(ctx context.Context) ([]*nodeprovider.Node, error) {
	listing, err := p.instances.Get(ctx, p.instances.AcceptedAge(ctx, p.opts.ListingTTL))
	if err != nil {
		return nil, fmt.Errorf("listing Linodes: %w", err)
	}
	nodes := make([]*nodeprovider.Node, 0, len(listing.Items))
	for _, in := range listing.Items {
		if node, err := p.ownNode(in); err == nil {
			nodes = append(nodes, node)
		}
	}
	return nodes, nil
}

// Delete deletes the node's Linode; it returns a NodeClaimNotFoundError once the API says the
// Linode is gone. A node whose tags are not this cluster's is refused with a ForeignNodeError,
// whoever found it.
func (p *Provider) Delete(ctx context.Context, node *nodeprovider.Node) error {
	if err := p.checkOurs(node); err != nil {
		return err
	}
	err := p.api.DeleteInstance(ctx, node.InstanceID)
	if err != nil && !linode.IsNotFound(err) {
		return fmt.Errorf("deleting Linode %d: %w", node.InstanceID, err)
	}
	p.instances.Remove(node.InstanceID)
	p.subnets.forget(node.InstanceID)
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("Linode %d is gone: %w", node.InstanceID, err))
	}
	log.FromContext(ctx).WithValues("linode-id", node.InstanceID).V(1).Info("deleted Linode")
	return nil
}

// Reboot restarts the node's Linode in place.
func (p *Provider) Reboot(ctx context.Context, node *nodeprovider.Node) error {
	if err := p.checkOurs(node); err != nil {
		return err
	}
	return nodeprovider.Reboot(ctx, p.api, node.InstanceID)
}

// checkOurs refuses a node that is not a plain Linode of this cluster, by what Get or List read of
// it.
func (p *Provider) checkOurs(node *nodeprovider.Node) error {
	if node.Instance == nil {
		return nodeprovider.NewForeignNodeError(node.InstanceID, node.Label, "it is not a plain Linode")
	}
	if foreign := foreign(linodego.Instance{ID: node.InstanceID, Label: node.Label, Tags: node.Tags, LKEClusterID: node.Instance.LKEClusterID}, p.cluster.OwnerTag()); foreign != nil {
		return foreign
	}
	return nil
}

func (p *Provider) nodeOf(in linodego.Instance) *nodeprovider.Node {
	nodeClaimName, _ := nodeprovider.TagValue(in.Tags, nodeprovider.TagKeyNodeClaim)
	nodePoolName, _ := nodeprovider.TagValue(in.Tags, nodeprovider.TagKeyNodePool)
	node := &nodeprovider.Node{
		InstanceID:    in.ID,
		Label:         in.Label,
		NodeClaimName: nodeClaimName,
		NodePoolName:  nodePoolName,
		NodeClaimTag:  nodeprovider.SoleNodeClaimTag(in.Tags),
		InstanceType:  in.Type,
		Region:        in.Region,
		Status:        string(in.Status),
		Tags:          in.Tags,
		Created:       lo.FromPtr(in.Created),
		Instance:      &nodeprovider.InstanceNode{Image: in.Image, LinodeInterfaces: in.InterfaceGeneration == linodego.GenerationLinode, LKEClusterID: in.LKEClusterID},
	}
	if in.PlacementGroup != nil {
		node.Instance.PlacementGroupID = in.PlacementGroup.ID
	}
	return node
}

// byNodeClaim returns the Linode launched for the NodeClaim, if any. Should an earlier bug have
// left two, the oldest one wins, so that every caller settles on the same Linode.
func byNodeClaim(instances []linodego.Instance, nodeClaimName string) (linodego.Instance, bool) {
	tag := nodeprovider.NodeClaimTag(nodeClaimName)
	return lo.Find(instances, func(in linodego.Instance) bool { return nodeprovider.SoleNodeClaimTag(in.Tags) == tag })
}

func byID(instances []linodego.Instance, id int) (linodego.Instance, bool) {
	i, found := slices.BinarySearchFunc(instances, id, func(in linodego.Instance, id int) int { return in.ID - id })
	if !found {
		return linodego.Instance{}, false
	}
	return instances[i], true
}
