package planner

import (
	"context"
	"errors"
	"sync"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// paperNodes is a node provider that launches nothing: it picks the plan for a NodeClaim as both
// of the controller's node providers do (nodeprovider.CheapestLaunchable) and reports a node of
// that plan running, so that the real cloud provider's Create runs end to end.
type paperNodes struct {
	region      string
	unavailable *cache.UnavailableOfferings

	mu       sync.Mutex
	launched int
}

var _ nodeprovider.Provider = (*paperNodes)(nil)

var errPaperNode = errors.New("the planner launches no node")

func (p *paperNodes) Create(_ context.Context, _ *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (*nodeprovider.Node, error) {
	cheapest, err := nodeprovider.CheapestLaunchable(nodeClaim, instanceTypes, p.region, p.unavailable)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launched++
	return &nodeprovider.Node{
		InstanceID:    p.launched,
		NodeClaimName: nodeClaim.Name,
		NodePoolName:  nodeClaim.Labels[karpv1.NodePoolLabelKey],
		InstanceType:  cheapest.Name,
		Region:        p.region,
		Status:        "running",
	}, nil
}

func (p *paperNodes) Get(context.Context, string) (*nodeprovider.Node, error) {
	return nil, errPaperNode
}

func (p *paperNodes) List(context.Context) ([]*nodeprovider.Node, error) { return nil, nil }

func (p *paperNodes) Delete(context.Context, *nodeprovider.Node) error { return errPaperNode }

func (p *paperNodes) Reboot(context.Context, *nodeprovider.Node) error { return errPaperNode }
