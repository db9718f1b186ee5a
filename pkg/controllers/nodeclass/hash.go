package nodeclass

import (
	"context"
	"errors"
	"fmt"

	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// HashController keeps the drift hashes on NodeClaims comparable across upgrades of the
// provider. A NodeClaim records the hash of its NodeClass at launch, and the version of the
// hashing (v1.NodeClassHashVersion); the cloud provider compares hashes of the current version
// only. When a release changes the hashing, the controller re-stamps the NodeClaims of an older
// version with the current version and the hash their class has now, so that the upgrade itself
// replaces no node and later edits of the class are noticed again. A NodeClaim already drifted
// keeps its old hash, and stays drifted.
type HashController struct {
	kubeClient client.Client
	mode       mode.Mode
}

// NewHashController returns the controller for the running mode, whose fields the hash covers.
func NewHashController(kubeClient client.Client, running mode.Mode) *HashController {
	return &HashController{kubeClient: kubeClient, mode: running}
}

// Reconcile re-stamps the class's NodeClaims of an older hash version.
func (c *HashController) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	nodeClaims := &karpv1.NodeClaimList{}
	if err := c.kubeClient.List(ctx, nodeClaims); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeClaims: %w", err)
	}
	var errs []error
	for i := range nodeClaims.Items {
		nodeClaim := &nodeClaims.Items[i]
		if v1.NodeClassName(nodeClaim) != nodeClass.Name || !hashedByAnOlderVersion(nodeClaim) {
			continue
		}
		stored := nodeClaim.DeepCopy()
		nodeClaim.Annotations[v1.AnnotationNodeClassHashVersion] = v1.NodeClassHashVersion
		// A drift the old hash found cannot be judged with the new one; the node stays drifted.
		if nodeClaim.StatusConditions().Get(karpv1.ConditionTypeDrifted) == nil {
			nodeClaim.Annotations[v1.AnnotationNodeClassHash] = nodeClass.Hash(c.mode)
		}
		if err := c.kubeClient.Patch(ctx, nodeClaim, client.MergeFrom(stored)); err != nil {
			errs = append(errs, client.IgnoreNotFound(fmt.Errorf("re-stamping NodeClaim %s: %w", nodeClaim.Name, err)))
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// hashedByAnOlderVersion is true of a launched NodeClaim whose hash another version computed.
// A NodeClaim not launched yet has no hash: its launch stamps the current one.
func hashedByAnOlderVersion(nodeClaim *karpv1.NodeClaim) bool {
	version, ok := nodeClaim.Annotations[v1.AnnotationNodeClassHashVersion]
	return ok && version != v1.NodeClassHashVersion
}

// Register watches classes, and NodeClaims hashed by an older version: a NodeClaim the previous
// release launched while this one started is re-stamped too.
func (c *HashController) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("nodeclass.hash").
		For(&v1.LinodeNodeClass{}).
		Watches(&karpv1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodeClassOf), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			nodeClaim, ok := o.(*karpv1.NodeClaim)
			return ok && hashedByAnOlderVersion(nodeClaim)
		}))).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

func nodeClassOf(_ context.Context, o client.Object) []reconcile.Request {
	nodeClaim, ok := o.(*karpv1.NodeClaim)
	if !ok || v1.NodeClassName(nodeClaim) == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: v1.NodeClassName(nodeClaim)}}}
}
