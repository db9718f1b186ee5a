package lke

import (
	"context"
	"fmt"
	"strings"

	"github.com/samber/lo"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// Reasons a node's pool no longer matches its NodeClass and cluster.
const (
	// DriftReasonKubernetesVersion: an enterprise pool runs another Kubernetes version than the
	// NodeClass pins or, without a pin, than the cluster now runs.
	DriftReasonKubernetesVersion cloudprovider.DriftReason = "KubernetesVersionDrift"
	// DriftReasonFirewall: the pool's firewall is not the one the NodeClass names.
	DriftReasonFirewall cloudprovider.DriftReason = "FirewallDrift"
)

// IsDrifted reports settings of the node's pool that differ from what the NodeClass and the
// cluster now say, including changes made to the pool behind Karpenter's back.
func (p *Provider) IsDrifted(ctx context.Context, nodeClass *v1.LinodeNodeClass, node *nodeprovider.Node) (cloudprovider.DriftReason, error) {
	if node.LKE == nil {
		return "", nil
	}
	if want := lo.FromPtr(nodeClass.Spec.FirewallID); want != 0 && node.LKE.FirewallID != want {
		return DriftReasonFirewall, nil
	}
	if p.cluster.Tier != TierEnterprise || node.LKE.K8sVersion == "" {
		return "", nil
	}
	want := lo.FromPtr(nodeClass.Spec.LKEK8sVersion)
	if want == "" {
		version, err := p.currentClusterVersion(ctx)
		if err != nil {
			return "", err
		}
		want = version
	}
	if minorVersion(node.LKE.K8sVersion) != minorVersion(want) {
		return DriftReasonKubernetesVersion, nil
	}
	return "", nil
}

// currentClusterVersion is the cluster's Kubernetes version, read again every few minutes so that
// an upgrade of the control plane makes unpinned pools drift.
func (p *Provider) currentClusterVersion(ctx context.Context) (string, error) {
	p.versionMu.Lock()
	defer p.versionMu.Unlock()
	if p.opts.Clock.Since(p.clusterVersionAt) < clusterVersionTTL {
		return p.clusterVersion, nil
	}
	cluster, err := p.api.GetLKECluster(ctx, p.cluster.ID)
	if err != nil {
		return "", fmt.Errorf("reading the Kubernetes version of LKE cluster %d: %w", p.cluster.ID, err)
	}
	p.clusterVersion, p.clusterVersionAt = cluster.K8sVersion, p.opts.Clock.Now()
	return p.clusterVersion, nil
}

// minorVersion reduces the API's version spellings ("1.31", "v1.31.8+lke1") to "1.31", the
// precision at which NodeClasses pin versions.
func minorVersion(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}
