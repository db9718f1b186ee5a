package cloudprovider

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Sizer narrows the plans offered to a NodePool to those that suit its pending pods, by marking
// the other plans' offerings unavailable for now (pkg/sizing). It is applied where
// core chooses plans (GetInstanceTypes), never in Create: a NodeClaim core made from one round's
// offer launches even if the offer changed since.
type Sizer interface {
	InstanceTypes(ctx context.Context, nodePool *karpv1.NodePool, instanceTypes []*cloudprovider.InstanceType) ([]*cloudprovider.InstanceType, error)
	// Explain says, as an event message, what the sizer last offered the NodePool and why,
	// without calling anything.
	Explain(nodePool string) string
	// AsCoreSees returns the instance types priced as core prices them for the NodePool, with
	// its NodeOverlays applied, so that a launch takes the plan core found cheapest.
	AsCoreSees(ctx context.Context, nodePool string, instanceTypes []*cloudprovider.InstanceType) []*cloudprovider.InstanceType
}

// ReasonSizingDecision is the reason of the event on each launched NodeClaim that says what its
// NodePool was offered and why.
const ReasonSizingDecision = "SizingDecision"

// Option configures the cloud provider.
type Option func(*CloudProvider)

// WithSizer offers each NodePool the plans the sizer chooses.
func WithSizer(sizer Sizer) Option {
	return func(c *CloudProvider) { c.sizer = sizer }
}

// WithRecorder tells each NodeClaim launched why its NodePool was offered the plans it was.
func WithRecorder(recorder events.Recorder) Option {
	return func(c *CloudProvider) { c.recorder = recorder }
}

// explainLaunch records on the NodeClaim, and logs, what the sizer last offered its NodePool: the
// round that made the NodeClaim, unless a later one of the NodePool's rounds came first.
func (c *CloudProvider) explainLaunch(ctx context.Context, nodeClaim *karpv1.NodeClaim) {
	nodePool := nodeClaim.Labels[karpv1.NodePoolLabelKey]
	if nodePool == "" {
		return
	}
	message := "The sizing policy offered NodePool " + nodePool + " every plan: SIZING_POLICY is " + v1.SizingPolicyDisabled
	if c.sizer != nil {
		message = c.sizer.Explain(nodePool)
	}
	log.FromContext(ctx).V(1).Info("launching for the plans the sizing policy offered", "NodeClaim", nodeClaim.Name, "NodePool", nodePool, "offered", message)
	if c.recorder == nil {
		return
	}
	c.recorder.Publish(events.Event{
		InvolvedObject: nodeClaim,
		Type:           corev1.EventTypeNormal,
		Reason:         ReasonSizingDecision,
		Message:        message,
		DedupeValues:   []string{string(nodeClaim.UID)},
	})
}
