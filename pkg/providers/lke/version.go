package lke

import (
	"context"

	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// KubernetesVersionResolver keeps each class's status.kubernetesVersion at the version its nodes
// should run: the class's lkeK8sVersion pin, or else the cluster's version, read again every
// check interval. Karpenter core re-checks the drift of a class's NodeClaims whenever the class
// changes, so an upgrade of the control plane, by the user or by LKE at a version's end of life,
// starts the replacement of the nodes within one interval.
type KubernetesVersionResolver struct {
	provider *Provider
}

// NewKubernetesVersionResolver returns the resolver over the provider's reads of the cluster.
func NewKubernetesVersionResolver(provider *Provider) *KubernetesVersionResolver {
	return &KubernetesVersionResolver{provider: provider}
}

// Reconcile sets status.kubernetesVersion. A failed read of the cluster keeps the version the
// class had: nothing drifts on a guess.
func (r *KubernetesVersionResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	next := reconcile.Result{RequeueAfter: r.provider.opts.ClusterVersionTTL}
	version := lo.FromPtr(nodeClass.Spec.LKEK8sVersion)
	if version == "" {
		current, err := r.provider.currentClusterVersion(ctx)
		if err != nil {
			log.FromContext(ctx).Error(err, "keeping the class's Kubernetes version")
			return next, nil
		}
		version = current
	}
	nodeClass.Status.KubernetesVersion = minorVersion(version)
	return next, nil
}
