package garbagecollection

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/metrics"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// DeletedNodeDelay is how long after its Node is gone a Linode is looked at: long enough for a
// Linode that goes away on its own (LKE replacing it in a recycle, core terminating it) to be
// seen gone by a fresh listing rather than deleted a second time.
const DeletedNodeDelay = 10 * time.Second

// NodeGetter is the part of the node provider the deleted-Node controller uses.
type NodeGetter interface {
	Get(ctx context.Context, providerID string) (*nodeprovider.Node, error)
	Delete(ctx context.Context, node *nodeprovider.Node) error
}

// DeletedNodeController deletes at once the Linode of a Node that Karpenter drained and that was
// deleted while no NodeClaim owned the Linode. That is what becomes of the nodes whose NodeClaims were lost behind the
// controller's back (a backup restored, the CRDs reinstalled): Kubernetes' garbage collector
// deletes their Nodes, which the NodeClaims own; core drains each Node (its termination finalizer)
// but terminates an instance only through a NodeClaim, so the Linode is left running with no Node,
// no pods and no kubelet registration to come. The grace period of the periodic collection exists
// for launches in progress, which have NodeClaims and have never had a Node; waiting it out here
// would only keep an unused Linode billed and the cluster's Linodes out of step with its NodeClaims.
type DeletedNodeController struct {
	kubeClient client.Client
	// apiReader reads NodeClaims past the cache: a NodeClaim that owns the Linode must never be
	// missed because the cache lags.
	apiReader    client.Reader
	recorder     events.Recorder
	nodes        NodeGetter
	ownershipTag string
}

// NewDeletedNodeController returns the controller for the Linodes that carry ownershipTag.
func NewDeletedNodeController(kubeClient client.Client, apiReader client.Reader, recorder events.Recorder, nodes NodeGetter, ownershipTag string) *DeletedNodeController {
	return &DeletedNodeController{kubeClient: kubeClient, apiReader: apiReader, recorder: recorder, nodes: nodes, ownershipTag: ownershipTag}
}

// Reconcile deletes the Linode with the provider ID (the request's name) if no Node and no
// NodeClaim account for it.
func (c *DeletedNodeController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	providerID := req.Name
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("provider-id", providerID))
	node, err := c.nodes.Get(ctx, providerID)
	if err != nil {
		if nodeprovider.IsForeignNode(err) {
			return reconcile.Result{}, nil
		}
		// Gone already: LKE replaced it, or core terminated it through its NodeClaim.
		return reconcile.Result{}, cloudprovider.IgnoreNodeClaimNotFoundError(err)
	}
	if !slices.Contains(node.Tags, c.ownershipTag) {
		return reconcile.Result{}, nil
	}
	kubeNodes := &corev1.NodeList{}
	if err := c.kubeClient.List(ctx, kubeNodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing Nodes: %w", err)
	}
	if slices.ContainsFunc(kubeNodes.Items, func(n corev1.Node) bool { return n.Spec.ProviderID == providerID }) {
		// Registered again: the adoption controller and the periodic collection look after it.
		return reconcile.Result{}, nil
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.apiReader.List(ctx, nodeClaims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	if newOwners(nodeClaims.Items).own(node) {
		return reconcile.Result{}, nil
	}
	if err := c.nodes.Delete(ctx, node); err != nil && !cloudprovider.IsNodeClaimNotFoundError(err) {
		return reconcile.Result{}, fmt.Errorf("deleting the Linode of a deleted Node: %w", err)
	}
	NodesDeleted.Inc(map[string]string{metrics.NodePoolLabel: node.NodePoolName})
	c.recorder.Publish(deletedNodeEvent(node))
	log.FromContext(ctx).Info("deleted the Linode of a Node deleted without a NodeClaim", "nodeclaim-tag", node.NodeClaimName)
	return reconcile.Result{}, nil
}

// DrainedByKarpenter reports whether core's termination finalizer drained the Node before it went,
// from the Node's last state: core taints a Node karpenter.sh/disrupted:NoSchedule before it
// drains it, and removes only its finalizer after. A Node deleted without that finalizer (removed
// by hand, `kubectl delete node` on a Node core never managed) may have gone with its pods still
// running on the Linode: deleting the Linode at once would kill them undrained, so such a Linode
// is left to the periodic collection, whose grace period gives its owner time to notice.
func DrainedByKarpenter(node *corev1.Node) bool {
	return !node.DeletionTimestamp.IsZero() && slices.ContainsFunc(node.Spec.Taints, func(taint corev1.Taint) bool {
		return karpv1.DisruptedNoScheduleTaint.MatchTaint(&taint)
	})
}

func deletedNodeEvent(node *nodeprovider.Node) events.Event {
	return garbageCollectedEvent(node, fmt.Sprintf("Deleted %s, launched for NodeClaim %s: its Node was deleted (and drained) while no NodeClaim owned it",
		describe(node), node.NodeClaimName))
}

// Register watches for Nodes of Linodes going away.
func (c *DeletedNodeController) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("garbagecollection.deletednode").
		WatchesRawSource(source.Kind(m.GetCache(), &corev1.Node{}, handler.TypedFuncs[*corev1.Node, reconcile.Request]{
			DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*corev1.Node], queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				providerID := e.Object.Spec.ProviderID
				if !strings.HasPrefix(providerID, nodeprovider.ProviderIDPrefix) {
					return
				}
				if !DrainedByKarpenter(e.Object) {
					log.FromContext(ctx).WithValues("Node", e.Object.Name, "provider-id", providerID).
						Info("a Node was deleted without Karpenter draining it; its Linode, if no NodeClaim owns it, is deleted only after garbage collection's grace period")
					return
				}
				queue.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Name: providerID}}, DeletedNodeDelay)
			},
		})).
		Complete(c)
}
