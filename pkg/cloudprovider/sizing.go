package cloudprovider

import (
	"context"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// Sizer narrows the plans offered to a NodePool to those that suit its pending pods, by marking
// the other plans' offerings unavailable for now (pkg/providers/sizing). It is applied where
// core chooses plans (GetInstanceTypes), never in Create: a NodeClaim core made from one round's
// offer launches even if the offer changed since.
type Sizer interface {
	InstanceTypes(ctx context.Context, nodePool *karpv1.NodePool, instanceTypes []*cloudprovider.InstanceType) ([]*cloudprovider.InstanceType, error)
}

// Option configures the cloud provider.
type Option func(*CloudProvider)

// WithSizer offers each NodePool the plans the sizer chooses.
func WithSizer(sizer Sizer) Option {
	return func(c *CloudProvider) { c.sizer = sizer }
}
