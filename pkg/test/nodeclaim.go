package test

import (
	"k8s.io/apimachinery/pkg/util/rand"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

// NodeClaimFor is the NodeClaim Karpenter core's scheduler makes of the NodePool's template for
// the instance types that fit its pods (core's own NodeClaimTemplate): the template's labels and
// taints, the NodePool and NodeClass labels, and an instance-type requirement of those types.
func NodeClaimFor(nodePool *karpv1.NodePool, instanceTypes ...*cloudprovider.InstanceType) *karpv1.NodeClaim {
	template := scheduling.NewNodeClaimTemplate(nodePool)
	template.InstanceTypeOptions = instanceTypes
	nodeClaim := template.ToNodeClaim()
	nodeClaim.Name = nodeClaim.GenerateName + rand.String(5)
	return nodeClaim
}
