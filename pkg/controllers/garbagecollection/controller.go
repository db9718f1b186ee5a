// Package garbagecollection deletes the nodes this cluster's Karpenter launched that no NodeClaim
// owns any more: the pools of launches whose NodeClaim was deleted while Linode was still
// answering, or whose answer was lost. Karpenter core only deletes what a NodeClaim records, so
// without this such pools would run, and be billed, forever.
//
// Only the node provider's nodes are considered, and the provider lists only pools and Linodes
// carrying this cluster's ownership tag; the controller checks that tag again before it deletes.
// A node must stay unowned for longer than a launch can take before it goes, so that a launch in
// progress, whose NodeClaim does not record the node yet, is never mistaken for a leak.
//
// NodeClaims can go missing for reasons that say nothing about the nodes (a backup restored, the
// CRDs reinstalled), so the controller trusts them only so far: it never deletes what backs a
// registered Node still running pods other than DaemonSets' (the adoption controller gives those
// a NodeClaim, and core drains them when it removes them), deletes nothing when it cannot list the
// NodeClaims, the Nodes or their pods, deletes at most a few nodes per run, and announces each
// deletion with an event.
//
// One case needs no grace period: a Node that core's termination finalizer drained, deleted while
// no NodeClaim owns its Linode. No kubelet registers it again, and a launch in progress never had
// a Node; the DeletedNodeController deletes that Linode as soon as the Node is gone. It is how the
// nodes of lost NodeClaims end: Kubernetes' garbage collector deletes their Nodes, which the
// NodeClaims own. A Node deleted without that drain (its finalizer removed by hand, or one core
// never managed) may have left pods running on its Linode, which therefore waits for the grace
// period like any other unowned node.
package garbagecollection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/awslabs/operatorpkg/option"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/metrics"
	nodeutils "sigs.k8s.io/karpenter/pkg/utils/node"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

const (
	// DefaultInterval is how often the nodes are compared with the NodeClaims: as old as the
	// listing core's garbage collection and drift checks read, so that one listing serves all.
	DefaultInterval = nodeprovider.PollingListingAge
	// DefaultGracePeriod is how long a node may stay unowned: twice core's five-minute launch
	// timeout, so that no launch in progress is collected.
	DefaultGracePeriod = 10 * time.Minute
	// DefaultMaxDeletionsPerRun bounds the damage of a run that is wrong about what is unowned:
	// a real leak is a few nodes, and the rest waits for the next run.
	DefaultMaxDeletionsPerRun = 5
	// backlogInterval is how soon the next run comes when the cap left unowned nodes behind.
	backlogInterval = 10 * time.Second
)

// NodesDeleted counts the nodes deleted for having no NodeClaim.
var NodesDeleted = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
	Namespace: metrics.Namespace,
	Subsystem: "linode_garbage_collection",
	Name:      "nodes_deleted_total",
	Help:      "Nodes deleted because no NodeClaim owned them, for longer than the grace period or when their Node was deleted, by the NodePool they were launched for.",
}, []opmetrics.Label{{Name: metrics.NodePoolLabel, Help: "The NodePool the node was launched for."}}, opmetrics.Beta)

// NodeProvider is the part of the node provider the controller uses.
type NodeProvider interface {
	List(ctx context.Context) ([]*nodeprovider.Node, error)
	Delete(ctx context.Context, node *nodeprovider.Node) error
}

// Options tune the controller.
type Options struct {
	Interval           time.Duration
	GracePeriod        time.Duration
	MaxDeletionsPerRun int
	Clock              clock.Clock
}

// WithMaxDeletionsPerRun bounds how many nodes one run deletes.
func WithMaxDeletionsPerRun(n int) option.Function[Options] {
	return func(o *Options) { o.MaxDeletionsPerRun = n }
}

// WithInterval sets how often the controller runs.
func WithInterval(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.Interval = d }
}

// WithGracePeriod sets how long a node may stay unowned before it is deleted; keep it longer than
// a launch can take.
func WithGracePeriod(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.GracePeriod = d }
}

// WithClock sets the clock that times the grace period.
func WithClock(clk clock.Clock) option.Function[Options] {
	return func(o *Options) { o.Clock = clk }
}

// Controller deletes nodes no NodeClaim owns.
type Controller struct {
	kubeClient   client.Client
	recorder     events.Recorder
	nodes        NodeProvider
	ownershipTag string
	opts         Options
	// unownedSince is when each node was first seen without a NodeClaim, by node key. The
	// provider's listing carries no creation time for LKE pools, and after a restart the count
	// starts again, which only ever delays a deletion.
	unownedSince map[string]time.Time
}

// NewController returns a controller for the nodes that carry ownershipTag.
func NewController(kubeClient client.Client, recorder events.Recorder, nodes NodeProvider, ownershipTag string, opts ...option.Function[Options]) *Controller {
	resolved := option.Resolve(append([]option.Function[Options]{
		WithInterval(DefaultInterval),
		WithGracePeriod(DefaultGracePeriod),
		WithMaxDeletionsPerRun(DefaultMaxDeletionsPerRun),
		WithClock(clock.RealClock{}),
	}, opts...)...)
	return &Controller{
		kubeClient:   kubeClient,
		recorder:     recorder,
		nodes:        nodes,
		ownershipTag: ownershipTag,
		opts:         *resolved,
		unownedSince: map[string]time.Time{},
	}
}

// Reconcile deletes the nodes that have been unowned for longer than the grace period.
func (c *Controller) Reconcile(ctx context.Context) (reconciler.Result, error) {
	// Core's garbage collection and drift checks read every node as well: a listing up to one
	// interval old (for each page it takes), theirs or this controller's last, finds the nodes
	// unowned for the grace period all the same, and a fleet at rest is listed once for all.
	nodes, err := c.nodes.List(nodeprovider.WithListingAge(ctx, c.opts.Interval))
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, nodeClaims); err != nil {
		return reconciler.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	owners := newOwners(nodeClaims.Items)
	now := c.opts.Clock.Now()
	seen := make(map[string]bool, len(nodes))
	var due []*nodeprovider.Node
	for _, node := range nodes {
		if owners.own(node) || !slices.Contains(node.Tags, c.ownershipTag) {
			continue
		}
		key := keyOf(node)
		seen[key] = true
		since, known := c.unownedSince[key]
		if !known {
			c.unownedSince[key] = now
			continue
		}
		if now.Sub(since) < c.opts.GracePeriod || (!node.Created.IsZero() && now.Sub(node.Created) < c.opts.GracePeriod) {
			continue
		}
		due = append(due, node)
	}
	// A node that was adopted or went away starts its grace period afresh if it is ever unowned again.
	for key := range c.unownedSince {
		if !seen[key] {
			delete(c.unownedSince, key)
		}
	}
	if len(due) == 0 {
		return reconciler.Result{RequeueAfter: c.opts.Interval}, nil
	}
	kubeNodes, err := c.kubeNodesByProviderID(ctx)
	if err != nil {
		return reconciler.Result{}, err
	}
	var errs []error
	deleted := 0
	for _, node := range due {
		if deleted == c.opts.MaxDeletionsPerRun {
			log.FromContext(ctx).Info("deleting the other unowned nodes in the next run", "deleted", deleted, "left", len(due)-deleted)
			return reconciler.Result{RequeueAfter: backlogInterval}, errors.Join(errs...)
		}
		if kubeNode := kubeNodes[node.ProviderID()]; kubeNode != nil {
			keep, err := c.runsWorkloads(ctx, kubeNode)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if keep {
				log.FromContext(ctx).WithValues("provider-id", node.ProviderID(), "Node", kubeNode.Name).
					Info("keeping an unowned node that runs pods; it is deleted once it has a NodeClaim and Karpenter drains it")
				continue
			}
		}
		if err := c.delete(ctx, node, now.Sub(c.unownedSince[keyOf(node)])); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(c.unownedSince, keyOf(node))
		deleted++
	}
	return reconciler.Result{RequeueAfter: c.opts.Interval}, errors.Join(errs...)
}

// kubeNodesByProviderID are the registered Nodes, by provider ID.
func (c *Controller) kubeNodesByProviderID(ctx context.Context) (map[string]*corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := c.kubeClient.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	byProviderID := make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		if id := list.Items[i].Spec.ProviderID; id != "" {
			byProviderID[id] = &list.Items[i]
		}
	}
	return byProviderID, nil
}

// runsWorkloads reports whether a Node runs pods that deleting its Linode would kill undrained:
// any but DaemonSets' and static pods, and those finished or already going.
func (c *Controller) runsWorkloads(ctx context.Context, node *corev1.Node) (bool, error) {
	pods, err := nodeutils.ReschedulablePods(ctx, c.kubeClient, node.Name)
	if err != nil {
		return false, fmt.Errorf("listing the pods of Node %s: %w", node.Name, err)
	}
	return len(pods) > 0, nil
}

func (c *Controller) delete(ctx context.Context, node *nodeprovider.Node, unownedFor time.Duration) error {
	logger := log.FromContext(ctx).WithValues("provider-id", node.ProviderID(), "nodeclaim-tag", node.NodeClaimName, "unowned-for", unownedFor.Round(time.Second))
	if node.LKE != nil {
		logger = logger.WithValues("pool-id", node.LKE.PoolID)
	}
	if err := c.nodes.Delete(ctx, node); err != nil && !cloudprovider.IsNodeClaimNotFoundError(err) {
		return fmt.Errorf("deleting unowned node %s: %w", keyOf(node), err)
	}
	NodesDeleted.Inc(map[string]string{metrics.NodePoolLabel: node.NodePoolName})
	c.recorder.Publish(deletedEvent(node, unownedFor))
	logger.Info("deleted a node no NodeClaim owns")
	return nil
}

// deletedEvent tells, on the NodePool the node was launched for, that an unowned node went.
func deletedEvent(node *nodeprovider.Node, unownedFor time.Duration) events.Event {
	return garbageCollectedEvent(node, fmt.Sprintf("Deleted %s, launched for NodeClaim %s, which no NodeClaim has owned for %s",
		describe(node), node.NodeClaimName, unownedFor.Round(time.Second)))
}

func garbageCollectedEvent(node *nodeprovider.Node, message string) events.Event {
	return events.Event{
		InvolvedObject: &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: node.NodePoolName}},
		Type:           corev1.EventTypeWarning,
		Reason:         "GarbageCollected",
		Message:        message,
		DedupeValues:   []string{keyOf(node)},
	}
}

// describe names the node as Linode's API knows it: its pool in LKE mode, else its Linode.
func describe(node *nodeprovider.Node) string {
	if node.LKE == nil {
		return "Linode " + strconv.Itoa(node.InstanceID)
	}
	what := fmt.Sprintf("LKE node pool %d", node.LKE.PoolID)
	if node.InstanceID != 0 {
		what += fmt.Sprintf(" (Linode %d)", node.InstanceID)
	}
	return what
}

// keyOf identifies a node across listings: by its Linode, or by its pool while LKE has not
// created the Linode yet.
func keyOf(node *nodeprovider.Node) string {
	if node.InstanceID != 0 {
		return node.ProviderID()
	}
	if node.LKE != nil {
		return "lke-pool/" + strconv.Itoa(node.LKE.PoolID)
	}
	return ""
}

// owners answers whether a NodeClaim owns a node: one records its provider ID, or its name's tag
// is on the node (a launch that has not recorded the node yet).
type owners struct {
	providerIDs   map[string]bool
	nodeClaimTags map[string]bool
}

func newOwners(nodeClaims []karpv1.NodeClaim) owners {
	o := owners{providerIDs: map[string]bool{}, nodeClaimTags: map[string]bool{}}
	for i := range nodeClaims {
		if id := nodeClaims[i].Status.ProviderID; id != "" {
			o.providerIDs[id] = true
		}
		o.nodeClaimTags[nodeprovider.NodeClaimTag(nodeClaims[i].Name)] = true
	}
	return o
}

func (o owners) own(node *nodeprovider.Node) bool {
	if node.InstanceID != 0 && o.providerIDs[node.ProviderID()] {
		return true
	}
	return slices.ContainsFunc(node.Tags, func(tag string) bool { return o.nodeClaimTags[tag] })
}

// Register runs the controller as a singleton.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("garbagecollection").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}
