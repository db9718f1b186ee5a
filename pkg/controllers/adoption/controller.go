// Package adoption gives a NodeClaim to a registered Node of this cluster's pools that no
// NodeClaim accounts for. LKE recycles a pool (by hand, in a cluster recycle, or in an upgrade) by
// replacing its Linode: the node that comes back has a new provider ID and a new name, and the
// NodeClaim that launched the pool records the old ones, so Karpenter core lets that NodeClaim go
// with the old Linode. NodeClaims can also be lost behind the nodes' back (a backup restored, the
// CRDs reinstalled). Either way a live node, often running pods, would be left without a
// NodeClaim: invisible to consolidation and drift, and, after its grace period, garbage. (A Node
// core registered is owned by its NodeClaim, so Kubernetes' garbage collector deletes it with a
// lost NodeClaim and core drains it: such a Node is not adopted, and package garbagecollection
// deletes its Linode once it is gone. What is left to adopt is a Node without that owner.)
//
// The controller hands such a node's pool to a new NodeClaim of the pool's NodePool, describing
// the node as it is (plan, region, taints): core launches that NodeClaim, the provider's Create
// finds the pool by its NodeClaim tag instead of creating one, and core registers the running Node
// as that NodeClaim's. From then on core manages it as any other node: it drifts if its NodePool
// or NodeClass has moved on, and goes through core's drain when it goes.
package adoption

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/rand"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/events"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

const (
	// launchingRetry is how soon a node is looked at again while its NodeClaim is still launching.
	launchingRetry = 30 * time.Second
	// withoutNodePoolRetry is how soon a node whose NodePool is gone is looked at again.
	withoutNodePoolRetry = 5 * time.Minute
)

// NodeProvider finds the node behind a provider ID and hands its pool to another NodeClaim.
type NodeProvider interface {
	Get(ctx context.Context, providerID string) (*nodeprovider.Node, error)
	Adopt(ctx context.Context, node *nodeprovider.Node, nodeClaimName string) error
}

// Controller adopts the Nodes of this cluster's pools that no NodeClaim accounts for.
type Controller struct {
	kubeClient client.Client
	// apiReader reads NodeClaims past the cache, so that a NodeClaim just created for a node is
	// seen before the node is adopted twice.
	apiReader client.Reader
	recorder  events.Recorder
	nodes     NodeProvider
}

// NewController returns the controller.
func NewController(kubeClient client.Client, apiReader client.Reader, recorder events.Recorder, nodes NodeProvider) *Controller {
	return &Controller{kubeClient: kubeClient, apiReader: apiReader, recorder: recorder, nodes: nodes}
}

// Reconcile gives the Node a NodeClaim if it is one of this cluster's pools' nodes and none
// accounts for it.
func (c *Controller) Reconcile(ctx context.Context, node *corev1.Node) (reconcile.Result, error) {
	if !node.DeletionTimestamp.IsZero() || !isOurs(node) {
		return reconcile.Result{}, nil
	}
	cached := &karpv1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, cached); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	if recordsNode(cached.Items, node) {
		return reconcile.Result{}, nil
	}
	// The cache may lag behind a NodeClaim created for this node a moment ago.
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.apiReader.List(ctx, nodeClaims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	if recordsNode(nodeClaims.Items, node) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("Node", node.Name, "provider-id", node.Spec.ProviderID))
	launched, err := c.nodes.Get(ctx, node.Spec.ProviderID)
	if err != nil {
		// Not a node of this cluster's pools, or already gone.
		return reconcile.Result{}, c.ignoreForeign(ctx, node, cloudprovider.IgnoreNodeClaimNotFoundError(err))
	}
	if owner, found := lo.Find(nodeClaims.Items, func(nc karpv1.NodeClaim) bool {
		return slices.Contains(launched.Tags, nodeprovider.NodeClaimTag(nc.Name))
	}); found && owner.Status.ProviderID == "" {
		// The pool's NodeClaim is still launching it; core registers the node when it is done.
		return reconcile.Result{RequeueAfter: launchingRetry}, nil
	}
	nodePool := &karpv1.NodePool{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: node.Labels[karpv1.NodePoolLabelKey]}, nodePool); err != nil {
		if apierrors.IsNotFound(err) {
			log.FromContext(ctx).Info("not adopting a node without a NodeClaim: its NodePool is gone", "NodePool", node.Labels[karpv1.NodePoolLabelKey])
			return reconcile.Result{RequeueAfter: withoutNodePoolRetry}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading NodePool: %w", err)
	}
	if nodePool.Spec.Template.Spec.NodeClassRef == nil || !nodePool.DeletionTimestamp.IsZero() {
		return reconcile.Result{RequeueAfter: withoutNodePoolRetry}, nil
	}
	nodeClaim := NodeClaimFor(nodePool, node, launched)
	// The pool names its new NodeClaim first: a NodeClaim whose launch found no pool would create one.
	if err := c.nodes.Adopt(ctx, launched, nodeClaim.Name); err != nil {
		return reconcile.Result{}, c.ignoreForeign(ctx, node, err)
	}
	if err := c.kubeClient.Create(ctx, nodeClaim); err != nil {
		// The pool names a NodeClaim that does not exist: the next attempt adopts it again.
		return reconcile.Result{}, fmt.Errorf("creating NodeClaim %s for node %s: %w", nodeClaim.Name, node.Name, err)
	}
	c.recorder.Publish(adoptedEvent(nodeClaim, node, launched))
	log.FromContext(ctx).Info("adopted a node no NodeClaim accounted for", "NodeClaim", nodeClaim.Name, "was", launched.NodeClaimName)
	return reconcile.Result{}, nil
}

// ignoreForeign tells, on the Node, why its Linode is not adopted when it is not one of this
// cluster's pools' nodes, which no retry changes; it returns any other error.
func (c *Controller) ignoreForeign(ctx context.Context, node *corev1.Node, err error) error {
	foreign, ok := nodeprovider.AsForeignNode(err)
	if !ok {
		return err
	}
	log.FromContext(ctx).Info("not adopting a node whose Linode is not one of this cluster's", "reason", foreign.Reason)
	c.recorder.Publish(nodeprovider.RefusalEvent(node, "adopting", foreign))
	return nil
}

// isOurs reports whether the Node says it comes from a Linode Karpenter launched from a NodePool.
func isOurs(node *corev1.Node) bool {
	return strings.HasPrefix(node.Spec.ProviderID, nodeprovider.ProviderIDPrefix) && node.Labels[karpv1.NodePoolLabelKey] != ""
}

func recordsNode(nodeClaims []karpv1.NodeClaim, node *corev1.Node) bool {
	return slices.ContainsFunc(nodeClaims, func(nc karpv1.NodeClaim) bool { return nc.Status.ProviderID == node.Spec.ProviderID })
}

// NodeClaimFor is a NodeClaim of nodePool describing node as it runs: its plan, its region, and
// the taints it carries, without start-up taints (its start-up is over, and core would put them
// back on a running node). Its NodePool hash is that of the NodePool with those taints, so that
// the NodeClaim drifts exactly when the NodePool asks for something else.
func NodeClaimFor(nodePool *karpv1.NodePool, node *corev1.Node, launched *nodeprovider.Node) *karpv1.NodeClaim {
	taints := lo.Filter(node.Spec.Taints, func(taint corev1.Taint, _ int) bool {
		return !isSystemTaint(taint) && !slices.ContainsFunc(nodePool.Spec.Template.Spec.StartupTaints, func(startup corev1.Taint) bool { return startup.MatchTaint(&taint) })
	})
	asLaunched := nodePool.DeepCopy()
	// No taints is nil in a NodePool, and the hash tells nil from empty.
	asLaunched.Spec.Template.Spec.Taints = lo.Ternary(len(taints) == 0, nil, taints)
	template := scheduling.NewNodeClaimTemplate(asLaunched)
	// The NodeClaim describes the node, not the NodePool's wishes: requirements the node does not
	// meet show as drift, which core resolves by replacing it.
	template.Requirements = corescheduling.NewRequirements(append(corescheduling.NewLabelRequirements(template.Labels).Values(),
		corescheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, launched.InstanceType),
		corescheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, launched.Region),
		corescheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
	)...)
	// Its plan is the node's, not one chosen among the NodePool's.
	template.IsStaticNodeClaim = true
	nodeClaim := template.ToNodeClaim()
	nodeClaim.GenerateName = ""
	nodeClaim.Name = fmt.Sprintf("%s-%s", nodePool.Name, rand.String(5))
	nodeClaim.Spec.StartupTaints = nil
	return nodeClaim
}

// isSystemTaint reports taints that Kubernetes or Karpenter core manage on their own.
func isSystemTaint(taint corev1.Taint) bool {
	for _, prefix := range []string{"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "karpenter.sh/"} {
		if strings.HasPrefix(taint.Key, prefix) {
			return true
		}
	}
	return false
}

func adoptedEvent(nodeClaim *karpv1.NodeClaim, node *corev1.Node, launched *nodeprovider.Node) events.Event {
	was := "no NodeClaim"
	if launched.NodeClaimName != "" {
		was = "NodeClaim " + launched.NodeClaimName
	}
	return events.Event{
		InvolvedObject: nodeClaim,
		Type:           corev1.EventTypeNormal,
		Reason:         "AdoptedNode",
		Message: fmt.Sprintf("Node %s (%s) was launched for %s and no NodeClaim accounted for it (LKE recycled its Linode, or NodeClaims were lost): this NodeClaim takes it over",
			node.Name, node.Spec.ProviderID, was),
		DedupeValues: []string{string(nodeClaim.UID)},
	}
}

// Register watches the Nodes of NodePools.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("adoption").
		For(&corev1.Node{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			node, ok := o.(*corev1.Node)
			return ok && isOurs(node)
		}))).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}
