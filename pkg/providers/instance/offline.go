package instance

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

const (
	// OfflineToleration is how long a node's Linode may stay powered off before the node is
	// replaced: longer than a reboot or a power-cycling maintenance takes, far shorter than the 30
	// minutes core's node repair waits for a kubelet that stopped reporting.
	OfflineToleration = 5 * time.Minute
	// offlineCheckInterval is how often the Linodes' statuses are checked, from the listing the
	// provider shares with garbage collection and drift (up to nodeprovider.PollingListingAge old
	// for each page): a Linode is seen offline that much later, and checking costs no listing of
	// its own at rest.
	offlineCheckInterval = time.Minute
)

// NodeLister lists the provider's nodes.
type NodeLister interface {
	List(ctx context.Context) ([]*nodeprovider.Node, error)
}

// OfflineController repairs nodes whose Linode was powered off (by its owner, Linode's Lassie
// watchdog giving up, a failed boot): it deletes their NodeClaim once the Linode has been offline
// for OfflineToleration, so that core drains the node and launches a replacement, and the Linode
// is deleted. A Linode nobody turns back on would otherwise hold its NodeClaim, and its pods,
// until core's node repair, which is off by default, gives up on it.
type OfflineController struct {
	kube       client.Client
	nodes      NodeLister
	recorder   events.Recorder
	clock      clock.Clock
	toleration time.Duration
	// offlineSince is when each Linode was first seen offline, by Linode id. After a restart the
	// count starts again, which only ever delays a repair.
	offlineSince map[int]time.Time
}

// NewOfflineController returns the controller for the provider's nodes.
func NewOfflineController(kube client.Client, nodes NodeLister, recorder events.Recorder, clk clock.Clock, toleration time.Duration) *OfflineController {
	return &OfflineController{kube: kube, nodes: nodes, recorder: recorder, clock: clk, toleration: toleration, offlineSince: map[int]time.Time{}}
}

// Reconcile deletes the NodeClaims of Linodes offline for longer than the toleration.
func (c *OfflineController) Reconcile(ctx context.Context) (reconciler.Result, error) {
	nodes, err := c.nodes.List(nodeprovider.WithListingAge(ctx, nodeprovider.PollingListingAge))
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	now := c.clock.Now()
	offline := map[int]bool{}
	var due []*nodeprovider.Node
	for _, node := range nodes {
		if node.Status != string(linodego.InstanceOffline) {
			continue
		}
		offline[node.InstanceID] = true
		since, known := c.offlineSince[node.InstanceID]
		if !known {
			c.offlineSince[node.InstanceID] = now
			continue
		}
		if now.Sub(since) >= c.toleration {
			due = append(due, node)
		}
	}
	for id := range c.offlineSince {
		if !offline[id] {
			delete(c.offlineSince, id)
		}
	}
	if len(due) == 0 {
		return reconciler.Result{RequeueAfter: offlineCheckInterval}, nil
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.kube.List(ctx, nodeClaims); err != nil {
		return reconciler.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	byProviderID := map[string]*karpv1.NodeClaim{}
	for i := range nodeClaims.Items {
		byProviderID[nodeClaims.Items[i].Status.ProviderID] = &nodeClaims.Items[i]
	}
	var errs []error
	for _, node := range due {
		nodeClaim, found := byProviderID[node.ProviderID()]
		if !found || !nodeClaim.DeletionTimestamp.IsZero() {
			continue
		}
		// A NodeClaim may record another NodeClaim's provider ID: only the Linode's own tag says
		// whose it is.
		if err := node.BelongsTo(nodeClaim.Name); err != nil {
			if foreign, ok := nodeprovider.AsForeignNode(err); ok {
				c.recorder.Publish(nodeprovider.RefusalEvent(nodeClaim, "replacing this NodeClaim for the state of", foreign))
			}
			continue
		}
		if err := c.kube.Delete(ctx, nodeClaim); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting NodeClaim %s of offline Linode %d: %w", nodeClaim.Name, node.InstanceID, err))
			continue
		}
		offlineFor := now.Sub(c.offlineSince[node.InstanceID]).Round(time.Second)
		c.recorder.Publish(events.Event{
			InvolvedObject: nodeClaim,
			Type:           corev1.EventTypeWarning,
			Reason:         "LinodeOffline",
			Message:        fmt.Sprintf("Linode %d has been offline for %s; replacing the node", node.InstanceID, offlineFor),
			DedupeValues:   []string{string(nodeClaim.UID)},
		})
		log.FromContext(ctx).WithValues("NodeClaim", nodeClaim.Name, "linode-id", node.InstanceID, "offline-for", offlineFor).Info("replacing a node whose Linode is offline")
	}
	return reconciler.Result{RequeueAfter: offlineCheckInterval}, errors.Join(errs...)
}

// Register runs the controller as a singleton.
func (c *OfflineController) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("instance.offline").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}
