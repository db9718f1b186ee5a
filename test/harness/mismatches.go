package harness

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// FleetMismatches counts, as things stand, the cluster's Linodes no NodeClaim accounts for (by its
// provider ID or by the tag of the LKE pool the Linode is in) and the Linodes or Nodes beyond one
// per NodeClaim.
func FleetMismatches(ctx context.Context, cluster *localcluster.Cluster) (leaked, duplicates int, err error) {
	var claims karpv1.NodeClaimList
	if err := cluster.Kube.List(ctx, &claims); err != nil {
		return 0, 0, err
	}
	var nodes corev1.NodeList
	if err := cluster.Kube.List(ctx, &nodes); err != nil {
		return 0, 0, err
	}
	leaked, duplicates = countMismatches(claims.Items, nodes.Items, cluster.Pools(), cluster.Linodes())
	return leaked, duplicates, nil
}

func countMismatches(claims []karpv1.NodeClaim, nodes []corev1.Node, pools []emulator.PoolInfo,
	instances []emulator.InstanceInfo) (leaked, duplicates int) {
	claimByProviderID := map[string]string{}
	claimByTag := map[string]string{}
	for _, claim := range claims {
		claimByTag[nodeprovider.NodeClaimTag(claim.Name)] = claim.Name
		if claim.Status.ProviderID != "" {
			claimByProviderID[claim.Status.ProviderID] = claim.Name
		}
	}
	claimByPool := map[int]string{}
	for _, pool := range pools {
		for _, tag := range pool.Tags {
			if name, ok := claimByTag[tag]; ok {
				claimByPool[pool.ID] = name
			}
		}
	}
	claimByLinode := map[string]string{}
	linodesOf := map[string]int{}
	for _, instance := range instances {
		providerID := nodeprovider.ProviderID(instance.ID)
		name, ok := claimByProviderID[providerID]
		if !ok {
			name, ok = claimByPool[instance.LKEPoolID]
		}
		if !ok {
			leaked++
			continue
		}
		claimByLinode[providerID] = name
		linodesOf[name]++
	}
	nodesOf := map[string]int{}
	for _, node := range nodes {
		if name, ok := claimByLinode[node.Spec.ProviderID]; ok && node.DeletionTimestamp.IsZero() {
			nodesOf[name]++
		}
	}
	for _, claim := range claims {
		duplicates += max(0, max(linodesOf[claim.Name], nodesOf[claim.Name])-1)
	}
	return leaked, duplicates
}
