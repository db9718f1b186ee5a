package reallinode

import (
	"context"
	"errors"
	"fmt"

	"github.com/linode/linodego"
)

// Sweep deletes, in the account, the LKE clusters whose tags match (their pools and Linodes go
// with them) and, in every other cluster, the pools whose tags match. It says what it deleted,
// one line each, and goes on past a failed deletion, returning every failure.
//
// The lifecycle specs' pools carry the run's tag (their LinodeNodeClass's tags); the clusters
// and base pools a run creates carry it too. The Linodes of a pool go with the pool, on both
// tiers, so Linodes are not swept one by one.
func Sweep(ctx context.Context, linode *linodego.Client, match func(tags []string) bool) ([]string, error) {
	clusters, err := linode.ListLKEClusters(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing the LKE clusters: %w", err)
	}
	var deleted []string
	var errs []error
	for _, cluster := range clusters {
		if match(cluster.Tags) {
			if err := linode.DeleteLKECluster(ctx, cluster.ID); err != nil && !linodego.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting LKE cluster %d (%s): %w", cluster.ID, cluster.Label, err))
				continue
			}
			deleted = append(deleted, fmt.Sprintf("LKE cluster %d (%s, %s tier)", cluster.ID, cluster.Label, cluster.Tier))
			continue
		}
		pools, err := linode.ListLKENodePools(ctx, cluster.ID, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("listing the pools of LKE cluster %d (%s): %w", cluster.ID, cluster.Label, err))
			continue
		}
		for _, pool := range pools {
			if !match(pool.Tags) {
				continue
			}
			if err := linode.DeleteLKENodePool(ctx, cluster.ID, pool.ID); err != nil && !linodego.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting pool %d of LKE cluster %d (%s): %w", pool.ID, cluster.ID, cluster.Label, err))
				continue
			}
			deleted = append(deleted, fmt.Sprintf("LKE pool %d (%d × %s) of cluster %d (%s)", pool.ID, pool.Count, pool.Type, cluster.ID, cluster.Label))
		}
	}
	return deleted, errors.Join(errs...)
}
