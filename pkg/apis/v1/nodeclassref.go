package v1

import (
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
)

// Kind is the kind NodePools and NodeClaims name a LinodeNodeClass by.
const Kind = "LinodeNodeClass"

// NodeClassName is the name of the LinodeNodeClass the NodeClaim was launched with, "" when it
// names another kind of class or none.
func NodeClassName(nodeClaim *karpv1.NodeClaim) string {
	ref := nodeClaim.Spec.NodeClassRef
	if ref == nil || ref.Group != apis.Group || ref.Kind != Kind {
		return ""
	}
	return ref.Name
}
