package nodesim

import (
	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceGPU is the extended resource NVIDIA's device plugin advertises on GPU nodes.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// ResourceModel turns a Linode plan into what its kubelet reports.
type ResourceModel struct {
	// HypervisorMemoryPercent of a plan's memory never reaches the guest (the provider's
	// HYPERVISOR_MEMORY_PERCENT setting models the same loss).
	HypervisorMemoryPercent float64
	// MaxPods is kubelet's pod limit.
	MaxPods int64
}

// DefaultResourceModel matches the provider's defaults: 2.5% of memory lost to the hypervisor and
// kubelet's default of 110 pods.
func DefaultResourceModel() ResourceModel {
	return ResourceModel{HypervisorMemoryPercent: 2.5, MaxPods: 110}
}

// Resources returns the capacity and allocatable resources of a node of the plan. Allocatable is
// capacity less kubelet's reservations for the system and its hard eviction threshold, with the
// reservation figures Karpenter's providers use for nodes of the same size: CPU 6% of the first
// core, 1% of the second, 0.5% of the next two and 0.25% of the rest; memory 255 MiB plus 11 MiB
// per pod; 100 MiB eviction threshold; 10% of the disk for eviction.
func (m ResourceModel) Resources(plan linodego.LinodeType) (capacity, allocatable corev1.ResourceList) {
	const mib = 1 << 20
	memoryBytes := int64(float64(plan.Memory) * (1 - m.HypervisorMemoryPercent/100) * mib)
	diskBytes := int64(plan.Disk) * mib
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(plan.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(m.MaxPods, resource.DecimalSI),
	}
	reservedMemory := (255+11*m.MaxPods)*mib + 100*mib
	allocatable = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(plan.VCPUs)*1000-reservedCPUMillis(plan.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memoryBytes-reservedMemory, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes*9/10, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(m.MaxPods, resource.DecimalSI),
	}
	if plan.GPUs > 0 {
		gpus := *resource.NewQuantity(int64(plan.GPUs), resource.DecimalSI)
		capacity[ResourceGPU], allocatable[ResourceGPU] = gpus, gpus
	}
	return capacity, allocatable
}

func reservedCPUMillis(vcpus int) int64 {
	var reserved float64
	for core := 1; core <= vcpus; core++ {
		switch {
		case core == 1:
			reserved += 60
		case core == 2:
			reserved += 10
		case core <= 4:
			reserved += 5
		default:
			reserved += 2.5
		}
	}
	return int64(reserved)
}
