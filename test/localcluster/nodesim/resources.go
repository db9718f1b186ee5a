package nodesim

import (
	"math"
	"strconv"
	"strings"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
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
// capacity less what LKE's kubelet configuration reserves, GKE's tiered figures (CPU: 6% of the
// first core, 1% of the second, 0.5% of the next two, 0.25% of the rest; memory: 25% of the
// first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% of the rest), and
// kubelet's default hard eviction thresholds (100 MiB of memory, 10% of the disk).
func (m ResourceModel) Resources(plan linodego.LinodeType) (capacity, allocatable corev1.ResourceList) {
	memoryBytes := int64(float64(plan.Memory)*(1-m.HypervisorMemoryPercent/100)) * mib
	diskBytes := int64(plan.Disk) * mib
	milliCPU := int64(plan.VCPUs) * 1000
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memoryBytes, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(m.MaxPods, resource.DecimalSI),
	}
	allocatable = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(milliCPU-tiered(milliCPU, cpuTiers), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memoryBytes-tiered(memoryBytes, memoryTiers)/mib*mib-100*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes*9/10, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(m.MaxPods, resource.DecimalSI),
	}
	if plan.GPUs > 0 {
		gpus := *resource.NewQuantity(int64(plan.GPUs), resource.DecimalSI)
		capacity[ResourceGPU], allocatable[ResourceGPU] = gpus, gpus
	}
	return capacity, allocatable
}

const (
	mib = 1 << 20
	gib = 1 << 30
)

// tier reserves fraction of the amount between the previous tier's upTo and this one's.
type tier struct {
	upTo     int64
	fraction float64
}

var (
	cpuTiers    = []tier{{1000, 0.06}, {2000, 0.01}, {4000, 0.005}, {math.MaxInt64, 0.0025}}
	memoryTiers = []tier{{4 * gib, 0.25}, {8 * gib, 0.20}, {16 * gib, 0.10}, {128 * gib, 0.06}, {math.MaxInt64, 0.02}}
)

func tiered(amount int64, tiers []tier) int64 {
	var reserved float64
	var below int64
	for _, t := range tiers {
		if amount <= below {
			break
		}
		reserved += float64(min(amount, t.upTo)-below) * t.fraction
		below = t.upTo
	}
	return int64(math.Round(reserved))
}

// KubeletResources returns what a kubelet with the configuration reports on a node of the plan:
// its pod limit (110 unless maxPods says otherwise), and allocatable resources of capacity less
// kubeReserved, systemReserved and the hard eviction thresholds of memory and the node's disk
// (kubelet's defaults, 100Mi and 10%, when evictionHard is unset).
func (m ResourceModel) KubeletResources(plan linodego.LinodeType, config *kubeletv1beta1.KubeletConfiguration) (capacity, allocatable corev1.ResourceList) {
	pods := int64(110)
	if config.MaxPods > 0 {
		pods = int64(config.MaxPods)
	}
	capacity, _ = ResourceModel{HypervisorMemoryPercent: m.HypervisorMemoryPercent, MaxPods: pods}.Resources(plan)
	allocatable = capacity.DeepCopy()
	subtract := func(name corev1.ResourceName, quantity resource.Quantity) {
		remaining := allocatable[name]
		remaining.Sub(quantity)
		allocatable[name] = remaining
	}
	for _, reserved := range []map[string]string{config.KubeReserved, config.SystemReserved} {
		for name, value := range reserved {
			if quantity, err := resource.ParseQuantity(value); err == nil && name != "pid" {
				subtract(corev1.ResourceName(name), quantity)
			}
		}
	}
	evictionHard := config.EvictionHard
	if evictionHard == nil {
		evictionHard = map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}
	}
	for signal, name := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		threshold, ok := evictionHard[signal]
		if !ok {
			continue
		}
		if percent, isPercent := strings.CutSuffix(threshold, "%"); isPercent {
			if fraction, err := strconv.ParseFloat(percent, 32); err == nil {
				total := capacity[name]
				subtract(name, *resource.NewQuantity(int64(float64(total.Value())*float64(float32(fraction/100))), resource.BinarySI))
			}
		} else if quantity, err := resource.ParseQuantity(threshold); err == nil {
			subtract(name, quantity)
		}
	}
	return capacity, allocatable
}
