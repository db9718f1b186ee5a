package instance

import (
	"context"
	"fmt"
	"sync"

	"github.com/linode/linodego"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// Reasons a node's Linode no longer matches what its NodeClass resolves to now. Changes of the
// NodeClass's spec (userData, firewallID, vpc, placementGroup, image, ...) are the spec hash's
// NodeClassDrift; these catch what changes without a spec change.
const (
	// DriftReasonImage: the Linode runs another image than the class resolves to, e.g. a newer
	// image now matches its imageSelector.
	DriftReasonImage cloudprovider.DriftReason = "ImageDrift"
	// DriftReasonPlacementGroup: the Linode is not in the placement group the class resolves to.
	DriftReasonPlacementGroup cloudprovider.DriftReason = "PlacementGroupDrift"
	// DriftReasonSubnet: the Linode's VPC interface is not on the subnet the class resolves to.
	DriftReasonSubnet cloudprovider.DriftReason = "SubnetDrift"
)

// IsDrifted compares the node's Linode with what this controller resolved its NodeClass to.
func (p *Provider) IsDrifted(ctx context.Context, nodeClass *v1.LinodeNodeClass, node *nodeprovider.Node) (cloudprovider.DriftReason, error) {
	if node.Instance == nil {
		return "", nil
	}
	// Compared with what the controller resolved, not with what the status says; nothing has
	// drifted from a spec not yet resolved.
	nodeClass, err := p.resolved.Trusted(nodeClass)
	if err != nil {
		return "", nil //nolint:nilerr // Not resolved yet: compared again on core's next check.
	}
	if image := nodeClass.Status.Image; image != nil && node.Instance.Image != image.ID {
		return DriftReasonImage, nil
	}
	if group := nodeClass.Status.PlacementGroup; nodeClass.Spec.PlacementGroup != nil && group != nil && node.Instance.PlacementGroupID != group.ID {
		return DriftReasonPlacementGroup, nil
	}
	if subnet := nodeClass.Status.Subnet; hasVPC(nodeClass) && subnet != nil {
		current, err := p.subnets.of(ctx, node.InstanceID, node.Instance.LinodeInterfaces)
		if err != nil {
			return "", err
		}
		if current != subnet.ID {
			return DriftReasonSubnet, nil
		}
	}
	return "", nil
}

// subnetCache remembers the VPC subnet of each Linode: of its configuration profile's VPC
// interface, or of its own with Linode interfaces. A Linode keeps the interfaces it was created
// with, so one read per Linode is enough.
type subnetCache struct {
	api     API
	mu      sync.Mutex
	subnets map[int]int
}

func newSubnetCache(api API) *subnetCache {
	return &subnetCache{api: api, subnets: map[int]int{}}
}

// of returns the subnet of the Linode's VPC interface, 0 when it has none.
func (c *subnetCache) of(ctx context.Context, instanceID int, linodeInterfaces bool) (int, error) {
	c.mu.Lock()
	subnet, known := c.subnets[instanceID]
	c.mu.Unlock()
	if known {
		return subnet, nil
	}
	var err error
	if linodeInterfaces {
		subnet, err = c.ofLinodeInterfaces(ctx, instanceID)
	} else {
		subnet, err = c.ofConfigProfile(ctx, instanceID)
	}
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.subnets[instanceID] = subnet
	c.mu.Unlock()
	return subnet, nil
}

func (c *subnetCache) ofConfigProfile(ctx context.Context, instanceID int) (int, error) {
	configs, err := c.api.ListInstanceConfigs(ctx, instanceID, nil)
	if err != nil {
		return 0, fmt.Errorf("reading the configuration profiles of Linode %d: %w", instanceID, err)
	}
	if len(configs) == 0 {
		return 0, nil
	}
	for _, iface := range configs[0].Interfaces {
		if iface.Purpose == linodego.InterfacePurposeVPC && iface.SubnetID != nil {
			return *iface.SubnetID, nil
		}
	}
	return 0, nil
}

func (c *subnetCache) ofLinodeInterfaces(ctx context.Context, instanceID int) (int, error) {
	interfaces, err := c.api.ListInterfaces(ctx, instanceID, nil)
	if err != nil {
		return 0, fmt.Errorf("reading the interfaces of Linode %d: %w", instanceID, err)
	}
	for _, iface := range interfaces {
		if iface.VPC != nil {
			return iface.VPC.SubnetID, nil
		}
	}
	return 0, nil
}

// forget drops a deleted Linode.
func (c *subnetCache) forget(instanceID int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subnets, instanceID)
}
