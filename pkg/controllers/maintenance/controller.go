// Package maintenance replaces nodes before Linode's host maintenance takes them down, and at once
// when their Linode goes down unexpectedly.
//
// It reads filtered listings, whatever the number of nodes: every interval, the events since the
// last poll that tell a Linode went down (GET /account/events: host_reboot, lassie_reboot,
// linode_shutdown), and less often, the account's maintenance that has not completed
// (GET /account/maintenance). It matches them to the cluster's NodeClaims by the Linode id in
// their provider IDs; everything else on the account is ignored. A NodeClaim may record any
// provider ID: it is acted on only when the node provider shows the Linode as this cluster's and
// the NodeClaim's (nodeprovider.Node.BelongsTo); otherwise an event on the NodeClaim says why not.
//
//   - Maintenance that takes a node down (power_off_on, reboot, cold_migration) and starts within
//     the lead time is recorded on the NodeClaim (AnnotationMaintenanceWindow). The cloud
//     provider's IsDrifted then reports the NodeClaim drifted, and the NodeClaim update makes
//     core check at once: core's drift disruption launches the replacement first, then drains
//     the node under the NodePool's disruption budgets and the pods' PodDisruptionBudgets, and
//     deletes the Linode. This is core's own path for replacing a node that must go; nothing
//     here re-implements it.
//   - Live migrations (live_migration, migrate) are recorded with an event and change nothing.
//   - A Linode that is down now (its maintenance started before the node was replaced, its host
//     failed, it powered off) has its NodeClaim deleted with a termination time of now, so that
//     core does not wait for pods that cannot drain from a Linode that is off (as Karpenter's AWS
//     provider does for instances that fail their health checks). Core's node repair would
//     replace it only after 30 minutes of NotReady, and only with its NodeRepair gate on.
//   - Replacing a node whose Linode is or was down is node repair: like core's, it is vetoed by
//     karpenter.sh/do-not-repair on the Node or its NodeClaim, and not by
//     karpenter.sh/do-not-disrupt or disruption budgets.
//
// A poll that fails waits for the next interval rather than retrying at once, so the controller's
// share of Linode's rate limits stays fixed however the API fails.
package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/metrics"
	nodeclaimutils "sigs.k8s.io/karpenter/pkg/utils/nodeclaim"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

const (
	// DefaultInterval is how often Linode's events are read. With the maintenance list read
	// every MaintenanceListInterval (5 minutes at the default lead time), the controller makes
	// 1.2 listings a minute, 0.6% of Linode's 200 paginated GETs a minute.
	DefaultInterval = options.DefaultMaintenancePollInterval
	// DefaultLeadTime is how long before maintenance that takes a node down its replacement
	// starts: time for core to launch replacements and drain nodes one budget at a time.
	DefaultLeadTime = options.DefaultMaintenanceLeadTime

	// pageSize keeps each listing to one page: the filters leave only what matters.
	pageSize = 500
	// eventsOverlap re-reads events created shortly before the last poll, which the API may list
	// late; events already acted on are remembered and skipped.
	eventsOverlap = time.Minute
	// leadTimeSlices is how many maintenance-list reads fit in the lead time: maintenance is
	// announced days ahead, so reading the list every lead time / 24 replaces a node at most
	// about 4% of the lead time later than polling every interval would, for a fifth of the calls.
	leadTimeSlices = 24
	// eventsLookback is how far back the first poll after a start reads events, so that a Linode
	// that went down while the controller was restarting is still replaced.
	eventsLookback = 10 * time.Minute
)

// apiTimeLayout is the Linode API's timestamp format, in X-Filter values too.
const apiTimeLayout = "2006-01-02T15:04:05"

// Options tune the controller.
type Options struct {
	// Interval is how often Linode's maintenance and events are read.
	Interval time.Duration
	// LeadTime is how long before maintenance that takes a node down the node is replaced.
	LeadTime time.Duration
	Clock    clock.Clock
}

// WithInterval sets how often Linode is polled.
func WithInterval(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.Interval = d }
}

// WithLeadTime sets how long before maintenance nodes are replaced.
func WithLeadTime(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.LeadTime = d }
}

// WithClock sets the clock that maintenance windows and events are compared with.
func WithClock(clk clock.Clock) option.Function[Options] {
	return func(o *Options) { o.Clock = clk }
}

// NodeGetter finds the node behind a provider ID: the node provider.
type NodeGetter interface {
	Get(ctx context.Context, providerID string) (*nodeprovider.Node, error)
}

// Controller polls Linode's maintenance and events and acts on the nodes they concern.
type Controller struct {
	kubeClient client.Client
	api        linode.AccountAPI
	nodes      NodeGetter
	recorder   events.Recorder
	opts       Options

	// eventsSince is when the next poll's events start; zero before the first poll.
	eventsSince time.Time
	// maintenanceReadAt is when the maintenance list was last read successfully.
	maintenanceReadAt time.Time
	// handledEvents are the events acted on (or not ours), by id, with their creation time, so
	// that overlapping polls act once.
	handledEvents map[int]time.Time
	// reported are the maintenance entries whose wait or no-action decision was published.
	reported map[string]bool
}

// NewController returns the controller for the nodes of the node provider.
func NewController(kubeClient client.Client, api linode.AccountAPI, nodes NodeGetter, recorder events.Recorder, opts ...option.Function[Options]) *Controller {
	resolved := option.Resolve(append([]option.Function[Options]{
		WithInterval(DefaultInterval),
		WithLeadTime(DefaultLeadTime),
		WithClock(clock.RealClock{}),
	}, opts...)...)
	return &Controller{
		kubeClient:    kubeClient,
		api:           api,
		nodes:         nodes,
		recorder:      recorder,
		opts:          *resolved,
		handledEvents: map[int]time.Time{},
		reported:      map[string]bool{},
	}
}

// MaintenanceListInterval is how often the maintenance list is read: every lead time / 24, and
// never more often than the events.
func (o Options) MaintenanceListInterval() time.Duration {
	return max(o.Interval, o.LeadTime/leadTimeSlices)
}

// Reconcile reads Linode's events, and the maintenance list when it is due, and acts on them.
func (c *Controller) Reconcile(ctx context.Context) (reconciler.Result, error) {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("maintenance"))
	now := c.opts.Clock.Now()
	nodeClaims, err := c.nodeClaimsByLinode(ctx)
	if err != nil {
		return reconciler.Result{}, err
	}
	// What the node provider showed of each Linode, for this poll.
	proven := map[int]bool{}
	var maintenanceErr error
	if c.maintenanceReadAt.IsZero() || now.Sub(c.maintenanceReadAt) >= c.opts.MaintenanceListInterval() {
		if maintenanceErr = c.reconcileMaintenance(ctx, nodeClaims, proven, now); maintenanceErr == nil {
			c.maintenanceReadAt = now
		}
	}
	eventsErr := c.reconcileEvents(ctx, nodeClaims, proven, now)
	if err := errors.Join(maintenanceErr, eventsErr); err != nil {
		log.FromContext(ctx).Error(err, "polling Linode maintenance and events; trying again at the next interval", "interval", c.opts.Interval)
	} else {
		LastPoll.Set(float64(now.Unix()), nil)
	}
	return reconciler.Result{RequeueAfter: c.opts.Interval}, nil
}

// nodeClaimsByLinode are the cluster's launched Linode NodeClaims, by Linode id.
func (c *Controller) nodeClaimsByLinode(ctx context.Context) (map[int]*karpv1.NodeClaim, error) {
	list := &karpv1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	out := make(map[int]*karpv1.NodeClaim, len(list.Items))
	for i := range list.Items {
		nodeClaim := &list.Items[i]
		if ref := nodeClaim.Spec.NodeClassRef; ref == nil || ref.Group != apis.Group {
			continue
		}
		if id, err := nodeprovider.ParseProviderID(nodeClaim.Status.ProviderID); err == nil {
			out[id] = nodeClaim
		}
	}
	return out, nil
}

// notCompleted keeps completed maintenance, which concerns no node any more, out of the listing.
var notCompleted = `{"status": {"+neq": "completed"}}`

func (c *Controller) reconcileMaintenance(ctx context.Context, nodeClaims map[int]*karpv1.NodeClaim, proven map[int]bool, now time.Time) error {
	listed, err := c.api.ListMaintenances(ctx, &linodego.ListOptions{PageSize: pageSize, Filter: notCompleted})
	if err != nil {
		return fmt.Errorf("listing Linode maintenance%s: %w", scopeHint(err, "Account"), err)
	}
	var entries []entry
	for _, m := range listed {
		if m.Entity == nil || m.Entity.Type != "linode" || nodeClaims[m.Entity.ID] == nil {
			continue
		}
		// Unproven, the maintenance would withdraw a window recorded for the Linode: the whole
		// list waits for the next poll.
		ours, err := c.proven(ctx, nodeClaims[m.Entity.ID], m.Entity.ID, proven)
		if err != nil {
			return err
		}
		if ours {
			entries = append(entries, newEntry(m, m.Entity.ID, now))
		}
	}
	// A Linode's earliest maintenance that takes it down decides; its node is gone by the next.
	slices.SortStableFunc(entries, func(a, b entry) int { return a.start.Compare(b.start) })
	listedKeys := map[string]bool{}
	replacing := map[int]bool{}
	var errs []error
	for _, e := range entries {
		listedKeys[e.key()] = true
		nodeClaim := nodeClaims[e.linodeID]
		decision := decideMaintenance(e, now, c.opts.LeadTime)
		if decision == ReplaceBeforeWindow || decision == ReplaceNow {
			if replacing[e.linodeID] {
				continue
			}
			replacing[e.linodeID] = true
		}
		if !nodeClaim.DeletionTimestamp.IsZero() {
			continue
		}
		switch decision {
		case NoAction, Wait:
			if c.reported[e.key()] {
				continue
			}
			c.reported[e.key()] = true
		case ReplaceBeforeWindow:
			changed, err := c.recordWindow(ctx, nodeClaim, e)
			if err != nil {
				errs = append(errs, err)
			}
			if !changed {
				continue
			}
		case ReplaceNow:
			if repairVetoed(nodeClaim, c.nodeOf(ctx, nodeClaim)) {
				// Looked at again at each poll, so that removing the veto replaces the node.
				if !c.reported[e.key()] {
					c.reported[e.key()] = true
					c.publish(ctx, nodeClaim, RepairBlocked, e.maintenanceType, blockedMessage(fmt.Sprintf("maintenance %s under way", e.maintenanceType)))
				}
				continue
			}
			if err := c.replace(ctx, nodeClaim, ReplaceNow, now); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		c.publish(ctx, nodeClaim, decision, e.maintenanceType, maintenanceMessage(decision, e, c.opts.LeadTime))
	}
	for key := range c.reported {
		if !listedKeys[key] {
			delete(c.reported, key)
		}
	}
	for id, nodeClaim := range nodeClaims {
		if _, recorded := nodeClaim.Annotations[v1.AnnotationMaintenanceWindow]; !recorded || replacing[id] || !nodeClaim.DeletionTimestamp.IsZero() {
			continue
		}
		cause := nodeClaim.Annotations[v1.AnnotationMaintenanceType]
		if err := c.withdrawWindow(ctx, nodeClaim); err != nil {
			errs = append(errs, err)
			continue
		}
		c.publish(ctx, nodeClaim, Withdrawn, cause, fmt.Sprintf("Linode maintenance (%s) no longer takes this node's Linode down before the lead time: the node is no longer replaced for it", cause))
	}
	return errors.Join(errs...)
}

// recordWindow records the maintenance on the NodeClaim, which makes it drift; it reports
// whether the NodeClaim changed.
func (c *Controller) recordWindow(ctx context.Context, nodeClaim *karpv1.NodeClaim, e entry) (bool, error) {
	window := e.start.UTC().Format(time.RFC3339)
	if nodeClaim.Annotations[v1.AnnotationMaintenanceWindow] == window && nodeClaim.Annotations[v1.AnnotationMaintenanceType] == e.maintenanceType {
		return false, nil
	}
	stored := nodeClaim.DeepCopy()
	if nodeClaim.Annotations == nil {
		nodeClaim.Annotations = map[string]string{}
	}
	nodeClaim.Annotations[v1.AnnotationMaintenanceWindow] = window
	nodeClaim.Annotations[v1.AnnotationMaintenanceType] = e.maintenanceType
	if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFrom(stored)); err != nil {
		return false, client.IgnoreNotFound(fmt.Errorf("recording maintenance on NodeClaim %s: %w", nodeClaim.Name, err))
	}
	return true, nil
}

func (c *Controller) withdrawWindow(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	stored := nodeClaim.DeepCopy()
	delete(nodeClaim.Annotations, v1.AnnotationMaintenanceWindow)
	delete(nodeClaim.Annotations, v1.AnnotationMaintenanceType)
	if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFrom(stored)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("withdrawing maintenance from NodeClaim %s: %w", nodeClaim.Name, err))
	}
	return nil
}

func (c *Controller) reconcileEvents(ctx context.Context, nodeClaims map[int]*karpv1.NodeClaim, proven map[int]bool, now time.Time) error {
	since := c.eventsSince
	if since.IsZero() {
		since = now.Add(-max(eventsLookback, 2*c.opts.Interval))
	}
	filter, err := downEventsFilter(since)
	if err != nil {
		return err
	}
	listed, err := c.api.ListEvents(ctx, &linodego.ListOptions{PageSize: pageSize, Filter: filter})
	if err != nil {
		return fmt.Errorf("listing Linode events%s: %w", scopeHint(err, "Events"), err)
	}
	next := now.Add(-eventsOverlap)
	var errs []error
	for _, ev := range listed {
		if _, handled := c.handledEvents[ev.ID]; handled || ev.Created == nil {
			continue
		}
		nodeClaim := nodeClaims[linodeOf(ev)]
		if nodeClaim != nil && nodeClaim.DeletionTimestamp.IsZero() {
			ours, err := c.proven(ctx, nodeClaim, linodeOf(ev), proven)
			if err != nil {
				errs = append(errs, err)
				next = minTime(next, *ev.Created)
				continue
			}
			if !ours {
				c.handledEvents[ev.ID] = *ev.Created
				continue
			}
			node := c.nodeOf(ctx, nodeClaim)
			decision := decideDown(ev, node != nil && nodeReady(node))
			message := downMessage(ev, decision)
			if repairVetoed(nodeClaim, node) {
				// Core's node repair takes over once the veto is removed, if the node is not Ready.
				decision, message = RepairBlocked, blockedMessage(string(ev.Action))
			} else if err := c.replace(ctx, nodeClaim, decision, now); err != nil {
				errs = append(errs, err)
				// Listed again until acted on.
				next = minTime(next, *ev.Created)
				continue
			}
			c.publish(ctx, nodeClaim, decision, string(ev.Action), message)
		}
		c.handledEvents[ev.ID] = *ev.Created
	}
	c.eventsSince = next
	for id, created := range c.handledEvents {
		if created.Before(next) {
			delete(c.handledEvents, id)
		}
	}
	return errors.Join(errs...)
}

// proven reports whether the node provider shows the Linode as this cluster's and the NodeClaim's;
// proven keeps the answers of this poll. A Linode that is not is told on the NodeClaim, and one
// that is gone is left to core, which finds it gone.
func (c *Controller) proven(ctx context.Context, nodeClaim *karpv1.NodeClaim, linodeID int, proven map[int]bool) (bool, error) {
	if ours, known := proven[linodeID]; known {
		return ours, nil
	}
	// The listing the readers that poll every node share serves: a Linode's tags do not change
	// under a launched node.
	node, err := c.nodes.Get(nodeprovider.WithListingAge(ctx, nodeprovider.PollingListingAge), nodeClaim.Status.ProviderID)
	if err == nil {
		err = node.BelongsTo(nodeClaim.Name)
	}
	switch foreign, isForeign := nodeprovider.AsForeignNode(err); {
	case err == nil:
		proven[linodeID] = true
	case isForeign:
		log.FromContext(ctx).Info("not acting on Linode maintenance or events of a Linode that is not the NodeClaim's", "NodeClaim", nodeClaim.Name, "reason", foreign.Reason)
		c.recorder.Publish(nodeprovider.RefusalEvent(nodeClaim, "replacing this NodeClaim for what Linode reports of", foreign))
		proven[linodeID] = false
	case cloudprovider.IsNodeClaimNotFoundError(err):
		proven[linodeID] = false
	default:
		return false, fmt.Errorf("finding the Linode of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return proven[linodeID], nil
}

// downEventsFilter selects the events since a time that tell a Linode went down.
func downEventsFilter(since time.Time) (string, error) {
	actions := make([]map[string]linodego.EventAction, 0, len(downActions))
	for _, action := range downActions {
		actions = append(actions, map[string]linodego.EventAction{"action": action})
	}
	raw, err := json.Marshal(map[string]any{
		"created":   map[string]string{"+gte": since.UTC().Format(apiTimeLayout)},
		"+or":       actions,
		"+order_by": "created",
	})
	return string(raw), err
}

// scopeHint names the token scope a refused listing needs.
func scopeHint(err error, scope string) string {
	if linode.IsUnauthorized(err) {
		return fmt.Sprintf(" (the token needs read-only access to %s)", scope)
	}
	return ""
}

// linodeOf is the Linode an event is about, 0 when it is about something else.
func linodeOf(ev linodego.Event) int {
	if ev.Entity == nil || ev.Entity.Type != linodego.EntityLinode {
		return 0
	}
	if id, ok := ev.Entity.ID.(float64); ok {
		return int(id)
	}
	return 0
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// replace deletes the NodeClaim; ReplaceNow first sets its termination time to now, so that core
// deletes its pods instead of waiting for a drain that cannot happen.
func (c *Controller) replace(ctx context.Context, nodeClaim *karpv1.NodeClaim, decision Decision, now time.Time) error {
	if decision == ReplaceNow {
		if err := nodeclaimutils.TightenTerminationTimestampAnnotation(ctx, c.kubeClient, nodeClaim, now); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("setting the termination time of NodeClaim %s: %w", nodeClaim.Name, err))
		}
	}
	if err := c.kubeClient.Delete(ctx, nodeClaim); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("deleting NodeClaim %s: %w", nodeClaim.Name, err))
	}
	return nil
}

// repairVetoed reports whether the operator vetoed replacing the node of a Linode that went down
// with karpenter.sh/do-not-repair, on its Node or its NodeClaim: replacing such a node is what
// core's node repair does, and core honours the same annotation. karpenter.sh/do-not-disrupt does
// not hold it back, as it does not hold back core's repair: the node's pods are down with it.
func repairVetoed(nodeClaim *karpv1.NodeClaim, node *corev1.Node) bool {
	if node != nil && node.Annotations[karpv1.DoNotRepairAnnotationKey] == "true" {
		return true
	}
	return nodeClaim.Annotations[karpv1.DoNotRepairAnnotationKey] == "true"
}

func (c *Controller) nodeOf(ctx context.Context, nodeClaim *karpv1.NodeClaim) *corev1.Node {
	if nodeClaim.Status.NodeName == "" {
		return nil
	}
	node := &corev1.Node{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: nodeClaim.Status.NodeName}, node); err != nil {
		return nil
	}
	return node
}

func nodeReady(node *corev1.Node) bool {
	for _, condition := range node.Status.Conditions {
		if condition.Type == corev1.NodeReady {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// publish logs the decision, publishes its Kubernetes events and counts it.
func (c *Controller) publish(ctx context.Context, nodeClaim *karpv1.NodeClaim, decision Decision, cause, message string) {
	node := c.nodeOf(ctx, nodeClaim)
	log.FromContext(ctx).Info(message, "NodeClaim", nodeClaim.Name, "provider-id", nodeClaim.Status.ProviderID, "decision", decision, "cause", cause)
	c.recorder.Publish(decisionEvents(nodeClaim, node, decision, cause, message)...)
	Decisions.Inc(map[string]string{
		causeLabel.Name:       cause,
		decisionLabel.Name:    string(decision),
		metrics.NodePoolLabel: nodeClaim.Labels[karpv1.NodePoolLabelKey],
	})
}

// Register runs the controller as a singleton.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("maintenance").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}
