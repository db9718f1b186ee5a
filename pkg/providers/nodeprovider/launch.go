package nodeprovider

import (
	"context"
	"fmt"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// CheapestLaunchable picks, among instanceTypes, the instance type whose offering in the region
// is the cheapest one that is available and compatible with the NodeClaim. Plans that just ran
// out of capacity are skipped even if the instance types Karpenter passed predate that news.
func CheapestLaunchable(nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType, region string, unavailable *cache.UnavailableOfferings) (*cloudprovider.InstanceType, error) {
	requirements := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	var cheapest *cloudprovider.InstanceType
	var cheapestPrice float64
	for _, instanceType := range instanceTypes {
		if unavailable.IsUnavailable(instanceType.Name, region) {
			continue
		}
		for _, offering := range instanceType.Offerings.Compatible(requirements) {
			if !offering.Launchable() || offering.Zone() != region {
				continue
			}
			// Ties go to the plan that sorts first, so the choice does not depend on input order.
			if cheapest == nil || offering.Price < cheapestPrice || (offering.Price == cheapestPrice && instanceType.Name < cheapest.Name) {
				cheapest, cheapestPrice = instanceType, offering.Price
			}
		}
	}
	if cheapest == nil {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("none of the %d instance types has a launchable offering in %s", len(instanceTypes), region))
	}
	return cheapest, nil
}

// Rebooter restarts a Linode.
type Rebooter interface {
	RebootInstance(ctx context.Context, linodeID int, configID int) error
}

// Reboot restarts the Linode in place with its current configuration profile. A 404 is the only
// answer that makes the node gone; a refusal (the Linode is being deleted, the token may not
// reboot it) fails the reboot, and anything else is returned to be retried.
func Reboot(ctx context.Context, api Rebooter, instanceID int) error {
	err := api.RebootInstance(ctx, instanceID, 0)
	switch {
	case err == nil:
		return nil
	case linode.IsNotFound(err):
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("rebooting Linode %d: %w", instanceID, err))
	case linode.IsInvalidRequest(err), linode.IsUnauthorized(err):
		return cloudprovider.NewNodeRebootFailedError(fmt.Errorf("rebooting Linode %d: %w", instanceID, err))
	default:
		return fmt.Errorf("rebooting Linode %d: %w", instanceID, err)
	}
}
