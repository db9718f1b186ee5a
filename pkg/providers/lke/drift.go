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
	// DriftReasonKubernetesVersion: the node runs another Kubernetes minor version than the
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
	// An enterprise pool names its version; a standard pool's nodes run the version LKE installed
	// when it created or last recycled them, which only their kubelets report.
	running := node.LKE.K8sVersion
	if running == "" {
		running = node.KubeletVersion
	}
	if running == "" {
		return "", nil
	}
	want, err := p.wantedVersion(ctx, nodeClass)
	if err != nil {
		return "", err
	}
	if minorVersion(running) != want {
		return DriftReasonKubernetesVersion, nil
	}
	return "", nil
}

// wantedVersion is the minor version the class's nodes should run: the one its status records, or,
// before the NodeClass controller first recorded one, the pin or the cluster's.
func (p *Provider) wantedVersion(ctx context.Context, nodeClass *v1.LinodeNodeClass) (string, error) {
	if nodeClass.Status.KubernetesVersion != "" {
		return nodeClass.Status.KubernetesVersion, nil
	}
	if pin := lo.FromPtr(nodeClass.Spec.LKEK8sVersion); pin != "" {
		return minorVersion(pin), nil
	}
	version, err := p.currentClusterVersion(ctx)
	if err != nil {
		return "", err
	}
	return minorVersion(version), nil
}

// currentClusterVersion is the cluster's Kubernetes version, read again once ClusterVersionTTL
// has passed so that an upgrade of the control plane makes unpinned nodes drift.
func (p *Provider) currentClusterVersion(ctx context.Context) (string, error) {
	p.versionMu.Lock()
	defer p.versionMu.Unlock()
	if p.opts.Clock.Since(p.clusterVersionAt) < p.opts.ClusterVersionTTL {
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
