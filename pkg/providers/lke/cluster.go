package lke

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// Tier is an LKE cluster's service tier.
type Tier string

const (
	TierStandard Tier = "standard"
	// TierEnterprise pins Kubernetes versions per pool and copies pool tags onto the nodes'
	// Linodes, but lists a pool's new nodes only 30-60 s after creating them.
	TierEnterprise Tier = "enterprise"
)

// Cluster is the LKE cluster the provider launches nodes into.
type Cluster struct {
	ID    int
	Label string
	// Region is the cluster's region, where LKE launches its pools' nodes.
	Region string
	Tier   Tier
	// K8sVersion is the cluster's Kubernetes version, "<major>.<minor>", when it was discovered.
	K8sVersion string
}

// Discover finds the LKE cluster labelled name, once, at start-up. LKE launches a cluster's nodes
// in the cluster's region, whatever a client says: a region setting (LINODE_REGION) other than
// the cluster's is refused, since nodes described as elsewhere would be mislabelled and mispriced. When no cluster or several carry the label it returns an
// *options.ConfigError naming CLUSTER_NAME and the clusters the token sees; any other error is
// the API's own failure, worth retrying.
func Discover(ctx context.Context, api linode.LKEAPI, name, regionSetting string) (*Cluster, error) {
	clusters, err := api.ListLKEClusters(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing LKE clusters: %w", err)
	}
	labelled := lo.Filter(clusters, func(c linodego.LKECluster, _ int) bool { return c.Label == name })
	switch len(labelled) {
	case 0:
		visible := "this token sees no LKE clusters (does it have the Kubernetes read/write scope?)"
		if len(clusters) > 0 {
			visible = "clusters this token sees: " + strings.Join(lo.Map(clusters, func(c linodego.LKECluster, _ int) string { return strconv.Quote(c.Label) }), ", ")
		}
		return nil, &options.ConfigError{Message: fmt.Sprintf("CLUSTER_NAME %q matches no LKE cluster; %s. Set it to the cluster's label (helm: settings.clusterName)", name, visible)}
	case 1:
	default:
		ids := lo.Map(labelled, func(c linodego.LKECluster, _ int) string { return strconv.Itoa(c.ID) })
		return nil, &options.ConfigError{Message: fmt.Sprintf("CLUSTER_NAME %q matches %d LKE clusters (ids %s): relabel all but the one Karpenter should manage",
			name, len(labelled), strings.Join(ids, ", "))}
	}
	found := labelled[0]
	cluster := &Cluster{
		ID:         found.ID,
		Label:      found.Label,
		Region:     found.Region,
		Tier:       TierStandard,
		K8sVersion: found.K8sVersion,
	}
	// The v4 API omits the tier; only enterprise clusters need it, and those require v4beta.
	if Tier(found.Tier) == TierEnterprise {
		cluster.Tier = TierEnterprise
	}
	if regionSetting != "" && regionSetting != cluster.Region {
		return nil, &options.ConfigError{Message: fmt.Sprintf("LINODE_REGION %q is not the region of LKE cluster %q (%s), where LKE launches all its nodes: unset LINODE_REGION in LKE mode (helm: region)",
			regionSetting, cluster.Label, cluster.Region)}
	}
	return cluster, nil
}

// String describes the cluster for the start-up log.
func (c *Cluster) String() string {
	return fmt.Sprintf("%s (id %d, %s tier)", c.Label, c.ID, c.Tier)
}
