package cloudprovider_test

import (
	"context"
	"fmt"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
)

// emulatorCatalogue lists the emulator's plans the way the instance type provider presents
// them: one on-demand offering per plan in the cluster's region, priced at the plan's hourly
// price and unavailable while the plan is out of capacity there. The plans come from the real
// API path (GET /linode/types through linodego); only the translation is kept minimal.
type emulatorCatalogue struct {
	api         *linodego.Client
	region      string
	unavailable *cache.UnavailableOfferings
}

func (c *emulatorCatalogue) List(ctx context.Context, _ *v1.LinodeNodeClass) ([]*cloudprovider.InstanceType, error) {
	types, err := c.api.ListTypes(ctx, nil)
	if err != nil {
		return nil, err
	}
	instanceTypes := make([]*cloudprovider.InstanceType, 0, len(types))
	for _, plan := range types {
		// LKE runs no Nanodes, so the LKE-mode catalogue leaves them out.
		if plan.Price == nil || plan.Class == linodego.ClassNanode {
			continue
		}
		instanceTypes = append(instanceTypes, &cloudprovider.InstanceType{
			Name: plan.ID,
			Requirements: scheduling.NewRequirements(
				scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, plan.ID),
				scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, karpv1.ArchitectureAmd64),
				scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)),
				scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, c.region),
				scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, c.region),
				scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
				scheduling.NewRequirement(v1.LabelInstanceClass, corev1.NodeSelectorOpIn, string(plan.Class)),
				scheduling.NewRequirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpIn, fmt.Sprint(plan.VCPUs)),
				scheduling.NewRequirement(v1.LabelInstanceMemory, corev1.NodeSelectorOpIn, fmt.Sprint(plan.Memory)),
			),
			Offerings: cloudprovider.Offerings{{
				Requirements: scheduling.NewRequirements(
					scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
					scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, c.region),
				),
				Price:     float64(plan.Price.Hourly),
				Available: !c.unavailable.IsUnavailable(plan.ID, c.region),
			}},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:              *resource.NewQuantity(int64(plan.VCPUs), resource.DecimalSI),
				corev1.ResourceMemory:           *resource.NewQuantity(int64(plan.Memory)*1024*1024, resource.BinarySI),
				corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(plan.Disk)*1024*1024, resource.BinarySI),
				corev1.ResourcePods:             *resource.NewQuantity(110, resource.DecimalSI),
			},
			Overhead: &cloudprovider.InstanceTypeOverhead{},
		})
	}
	return instanceTypes, nil
}
