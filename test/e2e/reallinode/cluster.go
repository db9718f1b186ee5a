package reallinode

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linode/linodego"
)

// NewLinodeClient is a client of the Linode API at cfg.URL, with cfg's token, at apiVersion.
func NewLinodeClient(cfg Config, apiVersion string) *linodego.Client {
	client := linodego.NewClient(&http.Client{Timeout: time.Minute})
	client.SetBaseURL(cfg.URL)
	client.SetAPIVersion(apiVersion)
	client.SetToken(cfg.Token)
	client.SetUserAgent("karpenter-provider-linode-e2e")
	return &client
}

// Cluster is a tier's LKE cluster for the run.
type Cluster struct {
	ID    int
	Label string
	Tier  string
	// Created is true when the run created it: it is the run's to delete, and to pay for.
	Created bool
}

// FindCluster is the account's LKE cluster labelled label, which must be of tier.
func FindCluster(ctx context.Context, linode *linodego.Client, label, tier string) (*Cluster, error) {
	clusters, err := linode.ListLKEClusters(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing the LKE clusters: %w", err)
	}
	i := slices.IndexFunc(clusters, func(c linodego.LKECluster) bool { return c.Label == label })
	if i < 0 {
		return nil, fmt.Errorf("the account has no LKE cluster labelled %q", label)
	}
	found := clusters[i]
	if found.Tier != "" && found.Tier != tier {
		return nil, fmt.Errorf("LKE cluster %q is of the %s tier, not %s", label, found.Tier, tier)
	}
	return &Cluster{ID: found.ID, Label: found.Label, Tier: tier}, nil
}

// CreateCluster creates an LKE cluster of the tier in region, at the tier's newest Kubernetes
// version (the tier is named to the API for the enterprise tier only: v4 knows no tiers), with a
// base pool for the cluster's own pods; the cluster and its pool carry the run's
// tag. linode must be at the tier's API version (APIVersion).
func CreateCluster(ctx context.Context, linode *linodego.Client, region, tier, runTag string, now time.Time) (*Cluster, error) {
	versions, err := tierVersions(ctx, linode, tier)
	if err != nil {
		return nil, err
	}
	// LKE labels are at most 32 characters; the run's start keeps two runs' labels apart.
	label := "karpenter-e2e-" + tier[:3] + "-" + strconv.FormatInt(now.Unix(), 36)
	apiTier := ""
	if tier == TierEnterprise {
		apiTier = TierEnterprise
	}
	created, err := linode.CreateLKECluster(ctx, linodego.LKEClusterCreateOptions{
		Label:      label,
		Region:     region,
		K8sVersion: newest(versions),
		Tier:       apiTier,
		Tags:       []string{runTag},
		NodePools:  []linodego.LKENodePoolCreateOptions{{Count: BasePoolSize, Type: BasePoolPlan, Tags: []string{runTag}}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the %s tier's LKE cluster in %s: %w", tier, region, err)
	}
	return &Cluster{ID: created.ID, Label: created.Label, Tier: tier, Created: true}, nil
}

// Kubeconfig waits, asking every poll, until LKE serves the cluster's kubeconfig (a new cluster's
// takes minutes), and returns it.
func Kubeconfig(ctx context.Context, linode *linodego.Client, clusterID int, poll time.Duration) ([]byte, error) {
	for {
		config, err := linode.GetLKEClusterKubeconfig(ctx, clusterID)
		if err == nil && config.KubeConfig != "" {
			return base64.StdEncoding.DecodeString(config.KubeConfig)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for LKE cluster %d's kubeconfig: %w (last answer: %v)", clusterID, ctx.Err(), err)
		case <-time.After(poll):
		}
	}
}

// tierVersions are the Kubernetes versions the tier offers: GET /lke/versions for the standard
// tier (API v4), GET /lke/tiers/enterprise/versions for the enterprise tier, which only v4beta
// serves.
func tierVersions(ctx context.Context, linode *linodego.Client, tier string) ([]string, error) {
	var ids []string
	if tier == TierEnterprise {
		versions, err := linode.ListLKETierVersions(ctx, tier, nil)
		if err != nil {
			return nil, fmt.Errorf("listing the enterprise tier's Kubernetes versions: %w", err)
		}
		for _, v := range versions {
			ids = append(ids, v.ID)
		}
	} else {
		versions, err := linode.ListLKEVersions(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("listing the standard tier's Kubernetes versions: %w", err)
		}
		for _, v := range versions {
			ids = append(ids, v.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("the %s tier offers no Kubernetes version", tier)
	}
	return ids, nil
}

// newest is the highest of the versions, whichever order the API lists them in: "1.35" above
// "1.34", "v1.31.8+lke2" above "v1.31.8+lke1".
func newest(versions []string) string {
	numbers := func(id string) []int {
		var out []int
		for _, field := range strings.FieldsFunc(id, func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(field)
			out = append(out, n)
		}
		return out
	}
	return slices.MaxFunc(versions, func(a, b string) int { return slices.Compare(numbers(a), numbers(b)) })
}
