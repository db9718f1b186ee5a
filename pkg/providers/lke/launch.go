package lke

import (
	"maps"
	"slices"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// cheapestLaunchable picks the plan whose offering in the cluster's region is the cheapest one
// that is available and compatible with the NodeClaim.
func (p *Provider) cheapestLaunchable(nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (string, error) {
	cheapest, err := nodeprovider.CheapestLaunchable(nodeClaim, instanceTypes, p.cluster.Region, p.unavailable)
	if err != nil {
		return "", err
	}
	return cheapest.Name, nil
}

// poolCreateOptions describe the NodeClaim's single-node pool. The autoscaler stays off: the
// pool's size is Karpenter's decision alone.
func (p *Provider) poolCreateOptions(nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceType string) linode.NodePoolCreateOptions {
	opts := linode.NodePoolCreateOptions{
		Count:      1,
		Type:       instanceType,
		Tags:       p.poolTags(nodeClass, nodeClaim),
		Labels:     poolLabels(nodeClaim),
		Taints:     poolTaints(nodeClaim.Spec.Taints),
		Label:      nodeClaim.Name,
		Autoscaler: &linodego.LKENodePoolAutoscaler{Enabled: false, Min: 1, Max: 1},
		FirewallID: nodeClass.Spec.FirewallID,
	}
	if encryption := nodeClass.Spec.DiskEncryption; encryption != nil {
		opts.DiskEncryption = lo.ToPtr(linodego.InstanceDiskEncryption(*encryption))
	}
	// The standard tier refuses per-pool versions; there the NodeClass controller reports the
	// fields as unusable instead of every launch failing.
	if p.cluster.Tier == TierEnterprise {
		opts.K8sVersion = nodeClass.Spec.LKEK8sVersion
		if strategy := nodeClass.Spec.UpdateStrategy; strategy != nil {
			opts.UpdateStrategy = lo.ToPtr(linodego.LKENodePoolUpdateStrategy(*strategy))
		}
	}
	return opts
}

// poolTags are the ownership tags followed by the NodeClass's own tags.
func (p *Provider) poolTags(nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim) []string {
	tags := []string{
		p.ownershipTag,
		nodeprovider.NodeClaimTag(nodeClaim.Name),
		nodeprovider.NodePoolTag(nodeClaim.Labels[karpv1.NodePoolLabelKey]),
	}
	for _, tag := range nodeClass.Spec.Tags {
		if !slices.Contains(tags, string(tag)) {
			tags = append(tags, string(tag))
		}
	}
	return tags
}

// poolLabels are the NodeClaim's labels and single-valued requirements that LKE may put on the
// node. LKE applies them to the node for as long as the pool lives, so the node carries them from
// its first moment instead of waiting for Karpenter's registration to copy them over. Those the
// pool may not carry (poolMaySetLabel) reach the node that way all the same: core's registration
// puts every label of the NodeClaim on its Node.
func poolLabels(nodeClaim *karpv1.NodeClaim) linodego.LKENodePoolLabels {
	labels := linodego.LKENodePoolLabels{}
	for _, requirement := range nodeClaim.Spec.Requirements {
		if requirement.Operator == corev1.NodeSelectorOpIn && len(requirement.Values) == 1 {
			labels[requirement.Key] = requirement.Values[0]
		}
	}
	maps.Copy(labels, nodeClaim.Labels)
	maps.DeleteFunc(labels, func(key, value string) bool { return !poolMaySetLabel(key, value) })
	// The Node webhook finds a joining node's NodeClaim by this label; a name too long to be a
	// label value leaves that to the provider ID.
	if len(validation.IsValidLabelValue(nodeClaim.Name)) == 0 && linodeAcceptsPoolLabel(v1.LabelNodeClaim, nodeClaim.Name) {
		labels[v1.LabelNodeClaim] = nodeClaim.Name
	}
	return labels
}

// poolMaySetLabel excludes the labels of the kubernetes.io and k8s.io domains, which belong to the
// kubelet and the cloud controller manager (zone, instance type, hostname) and which the
// NodeRestriction admission plugin keeps off a node's own registration; the labels Karpenter
// core sets to mark a node's progress, as a node labelled registered before it is would skip that
// step; and any label Linode refuses on a pool.
func poolMaySetLabel(key, value string) bool {
	if key == karpv1.NodeRegisteredLabelKey || key == karpv1.NodeInitializedLabelKey {
		return false
	}
	domain := karpv1.GetLabelDomain(key)
	for _, reserved := range []string{"kubernetes.io", "k8s.io"} {
		if domain == reserved || strings.HasSuffix(domain, "."+reserved) {
			return false
		}
	}
	return linodeAcceptsPoolLabel(key, value)
}

// poolTaints are the NodePool's taints that Linode accepts on a pool. Start-up taints stay off
// the pool: LKE re-applies pool taints forever, and a start-up taint must go once the node's
// daemons have removed it. The Node webhook adds the taints kept off the pool, start-up taints
// and all, as the node joins, and core's registration puts them on the Node too.
func poolTaints(taints []corev1.Taint) []linode.PoolTaint {
	var out []linode.PoolTaint
	for _, taint := range taints {
		if !linodeAcceptsPoolTaint(taint) {
			continue
		}
		out = append(out, linode.PoolTaint{
			Key:    taint.Key,
			Value:  taint.Value,
			Effect: linodego.LKENodePoolTaintEffect(taint.Effect),
		})
	}
	return out
}
