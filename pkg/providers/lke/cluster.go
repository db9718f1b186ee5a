package lke

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
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
	// Region is where nodes launch: the cluster's region unless the operator overrides it.
	Region string
	Tier   Tier
	// K8sVersion is the cluster's Kubernetes version, "<major>.<minor>", when it was discovered.
	K8sVersion string
}

// DiscoverCluster finds the LKE cluster labelled name. An empty regionOverride keeps the
// cluster's own region. It fails, saying what to do, when no cluster or several carry the label.
func DiscoverCluster(ctx context.Context, api linode.LKEAPI, name, regionOverride string) (*Cluster, error) {
	filter, err := json.Marshal(map[string]string{"label": name})
	if err != nil {
		return nil, err
	}
	clusters, err := api.ListLKEClusters(ctx, &linodego.ListOptions{Filter: string(filter)})
	if err != nil {
		return nil, fmt.Errorf("looking up LKE cluster %q: %w", name, err)
	}
	switch len(clusters) {
	case 0:
		return nil, fmt.Errorf("no LKE cluster is labelled %q in this Linode account: set CLUSTER_NAME to the label of an existing cluster, and check that the token may read Kubernetes clusters", name)
	case 1:
	default:
		ids := make([]string, 0, len(clusters))
		for _, c := range clusters {
			ids = append(ids, strconv.Itoa(c.ID))
		}
		return nil, fmt.Errorf("%d LKE clusters are labelled %q (ids %s): relabel all but the one Karpenter should manage", len(clusters), name, strings.Join(ids, ", "))
	}
	found := clusters[0]
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
	if regionOverride != "" {
		cluster.Region = regionOverride
	}
	return cluster, nil
}
