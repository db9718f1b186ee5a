package localcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// CheckConsistency compares what Kubernetes and Linode hold once the cluster has settled, and
// names every mismatch: a Linode or LKE pool no NodeClaim accounts for (a leak that Linode
// bills for), a launched NodeClaim without exactly one Node, a Node of a Linode that no longer
// exists. Callers poll it, as launches and deletions in flight are briefly inconsistent.
func (c *Cluster) CheckConsistency(ctx context.Context) error {
	var claims karpv1.NodeClaimList
	if err := c.Kube.List(ctx, &claims); err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := c.Kube.List(ctx, &nodes); err != nil {
		return err
	}
	claimTags := map[string]bool{}
	claimByProviderID := map[string]string{}
	for _, claim := range claims.Items {
		claimTags[nodeprovider.NodeClaimTag(claim.Name)] = true
		if claim.Status.ProviderID != "" {
			claimByProviderID[claim.Status.ProviderID] = claim.Name
		}
	}
	var problems []error
	for _, pool := range c.Pools() {
		if !slices.ContainsFunc(pool.Tags, func(tag string) bool { return claimTags[tag] }) {
			problems = append(problems, fmt.Errorf("LKE pool %d (%s) belongs to no NodeClaim (tags %v)", pool.ID, pool.Type, pool.Tags))
		}
	}
	linodes := map[string]bool{}
	for _, instance := range c.Linodes() {
		providerID := nodeprovider.ProviderID(instance.ID)
		linodes[providerID] = true
		if _, ok := claimByProviderID[providerID]; !ok {
			problems = append(problems, fmt.Errorf("Linode %d (%s, %s) belongs to no NodeClaim", instance.ID, instance.Label, instance.Status))
		}
	}
	nodesByProviderID := map[string][]string{}
	for _, node := range nodes.Items {
		nodesByProviderID[node.Spec.ProviderID] = append(nodesByProviderID[node.Spec.ProviderID], node.Name)
		if !linodes[node.Spec.ProviderID] && node.DeletionTimestamp.IsZero() {
			problems = append(problems, fmt.Errorf("node %s runs on %s, which does not exist", node.Name, node.Spec.ProviderID))
		}
	}
	for _, claim := range claims.Items {
		if !claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched) || !claim.DeletionTimestamp.IsZero() {
			continue
		}
		if names := nodesByProviderID[claim.Status.ProviderID]; len(names) != 1 {
			problems = append(problems, fmt.Errorf("NodeClaim %s (%s) has %d nodes %v, want exactly 1", claim.Name, claim.Status.ProviderID, len(names), names))
		}
	}
	return errors.Join(problems...)
}

// CheckNoLinodeResources reports any Linode or LKE pool of the cluster's left in the emulator's
// account.
func (c *Cluster) CheckNoLinodeResources() error {
	var problems []error
	for _, instance := range c.Linodes() {
		problems = append(problems, fmt.Errorf("Linode %d (%s, %s) is left", instance.ID, instance.Label, instance.Status))
	}
	for _, pool := range c.Pools() {
		problems = append(problems, fmt.Errorf("LKE pool %d (%s) is left", pool.ID, pool.Type))
	}
	return errors.Join(problems...)
}
