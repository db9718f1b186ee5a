// Package cloudprovider is Karpenter core's view of Linode: it turns NodeClaims into nodes through
// a node provider (an LKE pool or a plain Linode, depending on the mode) and describes the plans
// those nodes can have through the instance type provider.
package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/awslabs/operatorpkg/status"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// Name is the cloud provider's name in Karpenter's metrics and logs.
const Name = "linode"

// LaunchRejectedReason is the reason of a NodeClaim's Launched condition when Linode refused the
// launch as invalid; the condition's message is Linode's own explanation.
const LaunchRejectedReason = "LaunchRejected"

// AwaitingAPITurnReason is the reason of a NodeClaim's Launched condition while its create waits
// for a turn in the Linode API's rate limit: core retries the launch, and the create leaves once
// a turn comes within its bound (launchTurnBy).
const AwaitingAPITurnReason = "AwaitingLinodeAPITurn"

// launchTurnBy bounds the wait of the NodeClaim's create for its turn in the Linode API's rate
// limit. Core deletes a NodeClaim that has not launched lifecycle.LaunchTimeout after it was
// created: a create sent later would launch a node nobody waits for, so it is better not sent
// and left for the NodeClaim that replaces this one (see handBacks).
func launchTurnBy(ctx context.Context, nodeClaim *karpv1.NodeClaim, m mode.Mode) context.Context {
	if nodeClaim.CreationTimestamp.IsZero() {
		return ctx
	}
	return linode.WithTurnBy(ctx, nodeClaim.CreationTimestamp.Add(launchWindow(m)))
}

// DriftReasonNodeClass: the NodeClass's spec changed since the node was launched.
const DriftReasonNodeClass cloudprovider.DriftReason = "NodeClassDrift"

// InstanceTypeProvider lists the plans a NodeClass can launch, with their offerings and prices.
type InstanceTypeProvider interface {
	List(ctx context.Context, nodeClass *v1.LinodeNodeClass) ([]*cloudprovider.InstanceType, error)
}

// CloudProvider implements Karpenter core's cloudprovider.CloudProvider for Linode.
type CloudProvider struct {
	kubeClient    client.Client
	instanceTypes InstanceTypeProvider
	nodes         nodeprovider.Provider
	// mode decides which NodeClass fields the drift hash covers.
	mode     mode.Mode
	sizer    Sizer
	recorder events.Recorder
	// handBacks picks the NodeClaims refused a turn that core should replace at once.
	handBacks *handBacks
}

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// New returns a cloud provider that launches nodes through nodes, the node provider of mode m.
func New(kubeClient client.Client, instanceTypes InstanceTypeProvider, nodes nodeprovider.Provider, m mode.Mode, opts ...Option) *CloudProvider {
	c := &CloudProvider{kubeClient: kubeClient, instanceTypes: instanceTypes, nodes: nodes, mode: m, handBacks: newHandBacks(clock.RealClock{}, m)}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Create launches a node for the NodeClaim on the cheapest compatible plan and returns the
// NodeClaim as launched: provider ID, the plan's labels, capacity and allocatable resources.
func (c *CloudProvider) Create(ctx context.Context, nodeClaim *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	nodeClass, err := c.resolveNodeClass(ctx, nodeClaim.Spec.NodeClassRef)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// Core deletes the NodeClaim and tries again with what the NodePool says next.
			return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("resolving NodeClass: %w", err))
		}
		return nil, cloudprovider.NewCreateError(fmt.Errorf("resolving NodeClass: %w", err), "NodeClassResolutionFailed", "Failed to resolve the LinodeNodeClass")
	}
	if ready := nodeClass.StatusConditions().Get(status.ConditionReady); !ready.IsTrue() {
		return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("LinodeNodeClass %q is not ready: %s", nodeClass.Name, ready.Message))
	}
	all, err := c.instanceTypes.List(ctx, nodeClass)
	if err != nil {
		return nil, cloudprovider.NewCreateError(fmt.Errorf("listing instance types: %w", err), "InstanceTypeResolutionFailed", "Failed to list the plans")
	}
	if nodeClaim, err = c.onDemandForConsolidationSpot(ctx, nodeClaim); err != nil {
		return nil, err
	}
	compatible := compatibleInstanceTypes(nodeClaim, all)
	if len(compatible) == 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(errors.New("no plan satisfies the NodeClaim's requirements and resources with an available offering"))
	}
	if c.sizer != nil {
		// Core chose the NodeClaim's plans at the prices the NodePool's overlays give; the launch
		// takes the cheapest of them at the same prices, not at Linode's list prices.
		compatible = c.sizer.AsCoreSees(ctx, nodeClaim.Labels[karpv1.NodePoolLabelKey], compatible)
	}
	node, err := c.nodes.Create(launchTurnBy(ctx, nodeClaim, c.mode), nodeClass, nodeClaim, compatible)
	if err != nil {
		if linode.IsNoTurn(err) {
			if c.handBacks.handBack(err) {
				return nil, cloudprovider.NewInsufficientCapacityError(handedBackError(err))
			}
			return nil, cloudprovider.NewCreateError(err, AwaitingAPITurnReason, "Waiting for a turn in the Linode API's rate limit")
		}
		var invalid *nodeprovider.InvalidLaunchError
		if errors.As(err, &invalid) {
			// Retrying cannot help until the NodeClass changes: say so where the user looks.
			if recordErr := c.recordLaunchRejection(ctx, nodeClass, invalid.Reason); recordErr != nil {
				log.FromContext(ctx).Error(recordErr, "recording the launch rejection on the LinodeNodeClass", "linodenodeclass", nodeClass.Name)
			}
			return nil, cloudprovider.NewCreateError(err, LaunchRejectedReason, invalid.Reason)
		}
		return nil, fmt.Errorf("launching node: %w", err)
	}
	instanceType, found := lo.Find(all, func(it *cloudprovider.InstanceType) bool { return it.Name == node.InstanceType })
	if !found {
		return nil, fmt.Errorf("launched plan %s is not in the catalogue", node.InstanceType)
	}
	c.explainLaunch(ctx, nodeClaim)
	launched := c.toNodeClaim(node, instanceType)
	launched.Annotations = map[string]string{
		v1.AnnotationNodeClassHash:        nodeClass.Hash(c.mode),
		v1.AnnotationNodeClassHashVersion: v1.NodeClassHashVersion,
	}
	return launched, nil
}

// recordLaunchRejection marks the class not Ready with Linode's reason, until its spec changes.
// The optimistic lock keeps a status the NodeClass controller wrote meanwhile from being lost.
func (c *CloudProvider) recordLaunchRejection(ctx context.Context, nodeClass *v1.LinodeNodeClass, apiReason string) error {
	stored := nodeClass.DeepCopy()
	nodeClass.RejectLaunch(apiReason)
	if err := c.kubeClient.Status().Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the launch rejection on LinodeNodeClass %s: %w", nodeClass.Name, err)
	}
	return nil
}

// onDemandForConsolidationSpot returns the NodeClaim asking for on-demand capacity where core's
// consolidation asked a replacement for spot alone, if its NodePool allows on-demand. Core adds
// that spot-only requirement when the NodePool leaves both open, so that a replacement whose spot
// launch fails cannot fall back to on-demand that costs more than the node it replaces. Linode
// sells on-demand only, and core priced the replacement's plans at the offerings we list, all of
// them on-demand: on-demand is the capacity it chose. A NodePool that asks for spot itself still
// gets nothing.
func (c *CloudProvider) onDemandForConsolidationSpot(ctx context.Context, nodeClaim *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	index := slices.IndexFunc(nodeClaim.Spec.Requirements, func(r karpv1.NodeSelectorRequirementWithMinValues) bool {
		return r.Key == karpv1.CapacityTypeLabelKey && r.Operator == corev1.NodeSelectorOpIn && slices.Equal(r.Values, []string{karpv1.CapacityTypeSpot})
	})
	if index < 0 {
		return nodeClaim, nil
	}
	nodePool := &karpv1.NodePool{}
	if err := c.kubeClient.Get(ctx, types.NamespacedName{Name: nodeClaim.Labels[karpv1.NodePoolLabelKey]}, nodePool); err != nil {
		return nil, client.IgnoreNotFound(fmt.Errorf("reading the NodeClaim's NodePool: %w", err))
	}
	allowed := scheduling.NewNodeSelectorRequirementsWithMinValues(nodePool.Spec.Template.Spec.Requirements...)
	if !allowed.Get(karpv1.CapacityTypeLabelKey).Has(karpv1.CapacityTypeOnDemand) {
		return nodeClaim, nil
	}
	onDemand := nodeClaim.DeepCopy()
	onDemand.Spec.Requirements[index] = karpv1.NodeSelectorRequirementWithMinValues{
		Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand},
	}
	return onDemand, nil
}

// compatibleInstanceTypes are the plans that meet the NodeClaim's requirements, fit its resource
// requests and have an available offering it can use.
func compatibleInstanceTypes(nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	requirements := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	return lo.Filter(instanceTypes, func(it *cloudprovider.InstanceType, _ int) bool {
		return requirements.IsCompatible(it.Requirements, scheduling.AllowUndefinedWellKnownLabels) &&
			it.Offerings.Available().HasCompatible(requirements) &&
			resources.Fits(nodeClaim.Spec.Resources.Requests, it.Allocatable())
	})
}

// Get returns the NodeClaim of the node with the provider ID.
func (c *CloudProvider) Get(ctx context.Context, providerID string) (*karpv1.NodeClaim, error) {
	node, err := c.nodes.Get(ctx, providerID)
	if err != nil {
		return nil, fmt.Errorf("getting node: %w", err)
	}
	return c.toNodeClaim(node, nil), nil
}

// List returns a NodeClaim for every node the provider launched for this cluster.
func (c *CloudProvider) List(ctx context.Context) ([]*karpv1.NodeClaim, error) {
	// Core's garbage collection is the caller, every 2 minutes, to find the NodeClaims whose node
	// is gone; the provider's own creates and deletes keep the listing current meanwhile.
	nodes, err := c.nodes.List(nodeprovider.WithListingAge(ctx, nodeprovider.PollingListingAge))
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return lo.Map(nodes, func(node *nodeprovider.Node, _ int) *karpv1.NodeClaim { return c.toNodeClaim(node, nil) }), nil
}

// Delete removes the NodeClaim's node; it returns a NodeClaimNotFoundError once the node is gone.
// The Linode its provider ID names is deleted only when it is this cluster's and carries the
// NodeClaim's tag: a NodeClaim may record any provider ID. Otherwise an event on the NodeClaim
// names the Linode and why, and the NodeClaim waits in termination.
func (c *CloudProvider) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	node, err := c.nodeOf(ctx, nodeClaim, "deleting")
	if err != nil {
		return fmt.Errorf("finding node to delete: %w", err)
	}
	return c.nodes.Delete(ctx, node)
}

// Reboot restarts the NodeClaim's node in place, on the same terms as Delete.
func (c *CloudProvider) Reboot(ctx context.Context, nodeClaim *karpv1.NodeClaim, _ string) error {
	node, err := c.nodeOf(ctx, nodeClaim, "rebooting")
	if err != nil {
		return fmt.Errorf("finding node to reboot: %w", err)
	}
	return c.nodes.Reboot(ctx, node)
}

// nodeOf is the NodeClaim's node, as its provider ID names it, for an action that changes it; a
// Linode that is not proven the NodeClaim's is a ForeignNodeError, told on the NodeClaim.
func (c *CloudProvider) nodeOf(ctx context.Context, nodeClaim *karpv1.NodeClaim, action string) (*nodeprovider.Node, error) {
	node, err := c.nodes.Get(ctx, nodeClaim.Status.ProviderID)
	if err == nil {
		err = node.BelongsTo(nodeClaim.Name)
	}
	if foreign, ok := nodeprovider.AsForeignNode(err); ok {
		log.FromContext(ctx).WithValues("provider-id", nodeClaim.Status.ProviderID).Error(err, "refusing to act on a Linode that is not the NodeClaim's", "action", action)
		if c.recorder != nil {
			c.recorder.Publish(nodeprovider.RefusalEvent(nodeClaim, action, foreign))
		}
	}
	return node, err
}

// GetInstanceTypes returns every plan of the NodePool's NodeClass, available or not; with a
// sizer, plans that do not suit the NodePool's pending pods are offered as unavailable.
func (c *CloudProvider) GetInstanceTypes(ctx context.Context, nodePool *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	nodeClass, err := c.resolveNodeClass(ctx, nodePool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// Without its NodeClass the NodePool can launch nothing; core reports the NodePool.
			log.FromContext(ctx).WithValues("NodePool", nodePool.Name).V(1).Info("NodePool's LinodeNodeClass not found")
			return nil, nil
		}
		return nil, fmt.Errorf("resolving NodeClass: %w", err)
	}
	instanceTypes, err := c.instanceTypes.List(ctx, nodeClass)
	if err != nil || c.sizer == nil {
		return instanceTypes, err
	}
	return c.sizer.InstanceTypes(ctx, nodePool, instanceTypes)
}

// IsDrifted reports a NodeClaim whose Linode has host maintenance coming that takes it down,
// whose NodeClass spec changed since launch, or whose node no longer matches the NodeClass and
// cluster in ways the node provider can see.
func (c *CloudProvider) IsDrifted(ctx context.Context, nodeClaim *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	if reason := maintenanceDrift(nodeClaim); reason != "" {
		return reason, nil
	}
	nodeClass, err := c.resolveNodeClass(ctx, nodeClaim.Spec.NodeClassRef)
	if err != nil {
		return "", client.IgnoreNotFound(fmt.Errorf("resolving NodeClass: %w", err))
	}
	// A NodeClaim hashed by another version of the hashing cannot be compared; it is not drifted
	// for that reason alone.
	if nodeClaim.Annotations[v1.AnnotationNodeClassHashVersion] == v1.NodeClassHashVersion &&
		nodeClaim.Annotations[v1.AnnotationNodeClassHash] != nodeClass.Hash(c.mode) {
		return DriftReasonNodeClass, nil
	}
	detector, ok := c.nodes.(nodeprovider.DriftDetector)
	if !ok || nodeClaim.Status.ProviderID == "" {
		return "", nil
	}
	// Core checks each NodeClaim for drift every 5 minutes: a check that wanted a listing of a few
	// seconds would list again every few seconds on a fleet at rest, however large.
	node, err := c.nodes.Get(nodeprovider.WithListingAge(ctx, nodeprovider.PollingListingAge), nodeClaim.Status.ProviderID)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClaimNotFoundError(fmt.Errorf("getting node: %w", err))
	}
	if nodeClaim.Status.NodeName != "" {
		registered := &corev1.Node{}
		if err := c.kubeClient.Get(ctx, types.NamespacedName{Name: nodeClaim.Status.NodeName}, registered); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("getting Node: %w", err)
		}
		node.KubeletVersion = registered.Status.NodeInfo.KubeletVersion
	}
	return detector.IsDrifted(ctx, nodeClass, node)
}

// Name is "linode".
func (c *CloudProvider) Name() string { return Name }

// GetSupportedNodeClasses returns the LinodeNodeClass.
func (c *CloudProvider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&v1.LinodeNodeClass{}}
}

func (c *CloudProvider) resolveNodeClass(ctx context.Context, ref *karpv1.NodeClassReference) (*v1.LinodeNodeClass, error) {
	if ref == nil {
		return nil, apierrors.NewNotFound(v1.SchemeGroupVersion.WithResource("linodenodeclasses").GroupResource(), "")
	}
	nodeClass := &v1.LinodeNodeClass{}
	if err := c.kubeClient.Get(ctx, types.NamespacedName{Name: ref.Name}, nodeClass); err != nil {
		return nil, err
	}
	// A NodeClass being deleted launches nothing more; its nodes are being replaced.
	if !nodeClass.DeletionTimestamp.IsZero() {
		return nil, apierrors.NewNotFound(v1.SchemeGroupVersion.WithResource("linodenodeclasses").GroupResource(), ref.Name)
	}
	return nodeClass, nil
}

// toNodeClaim describes a node as a NodeClaim. The instance type, when known, adds the plan's
// labels and resources; Get and List leave them out, core only needs the identity there.
func (c *CloudProvider) toNodeClaim(node *nodeprovider.Node, instanceType *cloudprovider.InstanceType) *karpv1.NodeClaim {
	labels := map[string]string{}
	if instanceType != nil {
		for key, requirement := range instanceType.Requirements {
			if requirement.Len() == 1 && requirement.Operator() == corev1.NodeSelectorOpIn {
				labels[key] = requirement.Values()[0]
			}
		}
	}
	labels[corev1.LabelInstanceTypeStable] = node.InstanceType
	labels[corev1.LabelTopologyRegion] = node.Region
	// Linode has no zones; the region is the smallest placement unit and serves as the zone.
	labels[corev1.LabelTopologyZone] = node.Region
	labels[karpv1.CapacityTypeLabelKey] = karpv1.CapacityTypeOnDemand
	if node.NodePoolName != "" {
		labels[karpv1.NodePoolLabelKey] = node.NodePoolName
	}
	nodeClaim := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:              node.NodeClaimName,
			Labels:            labels,
			CreationTimestamp: metav1.NewTime(node.Created),
		},
		Status: karpv1.NodeClaimStatus{ProviderID: node.ProviderID()},
	}
	if instanceType != nil {
		nodeClaim.Status.Capacity = lo.PickBy(instanceType.Capacity, func(_ corev1.ResourceName, quantity resource.Quantity) bool { return !quantity.IsZero() })
		nodeClaim.Status.Allocatable = lo.PickBy(instanceType.Allocatable(), func(_ corev1.ResourceName, quantity resource.Quantity) bool { return !quantity.IsZero() })
	}
	return nodeClaim
}
