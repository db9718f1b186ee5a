package instancetype

import (
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

const (
	mebibyte = 1 << 20
	// ResourceNVIDIAGPU is the extended resource the NVIDIA device plugin advertises.
	ResourceNVIDIAGPU corev1.ResourceName = "nvidia.com/gpu"
	// defaultMaxPods is the kubelet's own default, which LKE keeps.
	defaultMaxPods = 110
)

// newInstanceType describes a plan for a NodeClass's kubelet settings and disks.
func (p *DefaultProvider) newInstanceType(cat *catalogue, plan *plan, kubelet *v1.KubeletConfiguration, disks diskLayout) *cloudprovider.InstanceType {
	capacity := p.capacityOf(plan, kubelet, disks)
	return &cloudprovider.InstanceType{
		Name:         plan.ID,
		Requirements: p.requirements(plan),
		Offerings:    cloudprovider.Offerings{p.offering(plan)},
		Capacity:     capacity,
		Overhead:     overhead(capacity, kubelet),
	}
}

// requirements are the plan's labels. Every plan has a GPU count, "0" for plans without GPUs,
// so that a NodePool can ask for "no GPU" (In ["0"] or Lt "1") as well as for GPUs (Gt "0").
func (p *DefaultProvider) requirements(plan *plan) scheduling.Requirements {
	return scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, plan.ID),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, karpv1.ArchitectureAmd64),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)),
		scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, p.region),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, p.region),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
		scheduling.NewRequirement(v1.LabelInstanceClass, corev1.NodeSelectorOpIn, string(plan.Class)),
		scheduling.NewRequirement(v1.LabelInstanceCPU, corev1.NodeSelectorOpIn, strconv.Itoa(plan.VCPUs)),
		scheduling.NewRequirement(v1.LabelInstanceMemory, corev1.NodeSelectorOpIn, strconv.Itoa(plan.Memory)),
		scheduling.NewRequirement(v1.LabelInstanceDisk, corev1.NodeSelectorOpIn, strconv.Itoa(plan.Disk)),
		scheduling.NewRequirement(v1.LabelInstanceGPUCount, corev1.NodeSelectorOpIn, strconv.Itoa(plan.GPUs)),
		scheduling.NewRequirement(v1.LabelInstanceNetworkOut, corev1.NodeSelectorOpIn, strconv.Itoa(plan.NetworkOut)),
		scheduling.NewRequirement(v1.LabelInstanceTransfer, corev1.NodeSelectorOpIn, strconv.Itoa(plan.Transfer)),
		optionalRequirement(v1.LabelInstanceGPUName, plan.gpuName),
		optionalRequirement(v1.LabelInstanceGeneration, plan.generation),
	)
}

// optionalRequirement is In value, or DoesNotExist for a plan that does not say.
func optionalRequirement(key, value string) *scheduling.Requirement {
	if value == "" {
		return scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist)
	}
	return scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, value)
}

// offering is the plan's single offering: on demand, in the cluster's region, which is also the
// zone since Linode has none.
func (p *DefaultProvider) offering(plan *plan) *cloudprovider.Offering {
	available := plan.unavailableReason == "" && !p.unavailable.IsUnavailable(plan.ID, p.region)
	offeringAvailable.Set(boolToFloat(available), offeringLabels(plan.ID, p.region))
	offeringPrice.Set(plan.price, offeringLabels(plan.ID, p.region))
	return &cloudprovider.Offering{
		Requirements: scheduling.NewRequirements(
			scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
			scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, p.region),
		),
		Price:     plan.price,
		Available: available,
	}
}

// capacityOf is what the kubelet of a node of the plan reports as capacity. Memory is the plan's
// memory as registered Nodes of the plan reported it, or, before any did, the plan's memory less
// the hypervisor's share. Ephemeral storage is the plan's disk, or the class's disk that holds the
// kubelet's directory.
func (p *DefaultProvider) capacityOf(plan *plan, kubelet *v1.KubeletConfiguration, disks diskLayout) corev1.ResourceList {
	memory, learned := p.capacity.memory(plan.ID)
	if !learned {
		planBytes := int64(plan.Memory) * mebibyte
		hypervisorBytes := int64(math.Round(float64(planBytes) * p.options.HypervisorMemoryPercent / 100))
		// Whole KiB, as a kubelet reports it.
		memory = (planBytes - hypervisorBytes) / 1024 * 1024
	}
	nodeFSMB := plan.Disk
	if disks.nodeFSMB > 0 {
		nodeFSMB = disks.nodeFSMB
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(plan.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(nodeFSMB)*mebibyte, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(maxPods(plan.VCPUs, kubelet), resource.DecimalSI),
	}
	if plan.GPUs > 0 {
		capacity[ResourceNVIDIAGPU] = *resource.NewQuantity(int64(plan.GPUs), resource.DecimalSI)
	}
	return capacity
}

// maxPods is the kubelet's pod limit: maxPods (110 by default), lowered by podsPerCore when set.
func maxPods(vcpus int, kubelet *v1.KubeletConfiguration) int64 {
	pods := int64(defaultMaxPods)
	if kubelet == nil {
		return pods
	}
	if kubelet.MaxPods != nil {
		pods = int64(*kubelet.MaxPods)
	}
	if kubelet.PodsPerCore != nil && *kubelet.PodsPerCore > 0 {
		pods = min(pods, int64(*kubelet.PodsPerCore)*int64(vcpus))
	}
	return pods
}

func boolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
