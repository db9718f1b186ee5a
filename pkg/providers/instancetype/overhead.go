package instancetype

import (
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Default hard eviction thresholds, the kubelet's own defaults, which LKE keeps.
var defaultEvictionHard = map[string]v1.EvictionThreshold{
	evictionSignalMemory: "100Mi",
	evictionSignalNodeFS: "10%",
}

const (
	evictionSignalMemory = "memory.available"
	evictionSignalNodeFS = "nodefs.available"
)

// evictionResources are the eviction signals that hold back a schedulable resource.
var evictionResources = map[string]corev1.ResourceName{
	evictionSignalMemory: corev1.ResourceMemory,
	evictionSignalNodeFS: corev1.ResourceEphemeralStorage,
}

// overhead is what the kubelet keeps from pods on a node with this capacity: kube-reserved and
// system-reserved from the NodeClass, kube-reserved cpu and memory defaulting to LKE's tiered
// formula, and the larger of each hard and soft eviction threshold.
func overhead(capacity corev1.ResourceList, kubelet *v1.KubeletConfiguration) *cloudprovider.InstanceTypeOverhead {
	if kubelet == nil {
		kubelet = &v1.KubeletConfiguration{}
	}
	kubeReserved := corev1.ResourceList{
		corev1.ResourceCPU:    defaultKubeReservedCPU(capacity.Cpu().MilliValue()),
		corev1.ResourceMemory: defaultKubeReservedMemory(capacity.Memory().Value()),
	}
	for name, quantity := range reservedResources(kubelet.KubeReserved) {
		kubeReserved[name] = quantity
	}
	return &cloudprovider.InstanceTypeOverhead{
		KubeReserved:      kubeReserved,
		SystemReserved:    reservedResources(kubelet.SystemReserved),
		EvictionThreshold: evictionThreshold(capacity, kubelet),
	}
}

// defaultKubeReservedCPU is GKE's tiered reservation, which LKE nodes report: 6% of the first
// core, 1% of the second, 0.5% of the third and fourth, 0.25% of every core above four.
func defaultKubeReservedCPU(milliCPU int64) resource.Quantity {
	tiers := []struct {
		upTo     int64 // millicores
		fraction float64
	}{
		{1000, 0.06},
		{2000, 0.01},
		{4000, 0.005},
		{math.MaxInt64, 0.0025},
	}
	var reserved float64
	var below int64
	for _, tier := range tiers {
		if milliCPU <= below {
			break
		}
		reserved += float64(min(milliCPU, tier.upTo)-below) * tier.fraction
		below = tier.upTo
	}
	return *resource.NewMilliQuantity(int64(math.Round(reserved)), resource.DecimalSI)
}

// defaultKubeReservedMemory is GKE's tiered reservation, which LKE nodes report: 255 MiB below
// 1 GiB, else 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112
// and 2% of the rest.
func defaultKubeReservedMemory(bytes int64) resource.Quantity {
	const gibibyte = 1 << 30
	if bytes < gibibyte {
		return *resource.NewQuantity(255*mebibyte, resource.BinarySI)
	}
	tiers := []struct {
		upTo     int64 // bytes
		fraction float64
	}{
		{4 * gibibyte, 0.25},
		{8 * gibibyte, 0.20},
		{16 * gibibyte, 0.10},
		{128 * gibibyte, 0.06},
		{math.MaxInt64, 0.02},
	}
	var reserved float64
	var below int64
	for _, tier := range tiers {
		if bytes <= below {
			break
		}
		reserved += float64(min(bytes, tier.upTo)-below) * tier.fraction
		below = tier.upTo
	}
	// Whole MiB, rounded down as the kubelet configuration LKE writes is in MiB.
	return *resource.NewQuantity(int64(reserved)/mebibyte*mebibyte, resource.BinarySI)
}

// reservedResources turns kubeReserved or systemReserved into resources; pid is not a
// schedulable resource and is left out.
func reservedResources(reserved map[string]v1.ReservedQuantity) corev1.ResourceList {
	resources := corev1.ResourceList{}
	for name, value := range reserved {
		if name == "pid" {
			continue
		}
		// The CRD admits only quantities, so a parse error cannot reach here from the API.
		if quantity, err := resource.ParseQuantity(string(value)); err == nil {
			resources[corev1.ResourceName(name)] = quantity
		}
	}
	return resources
}

// evictionThreshold is, for memory and ephemeral storage, the larger of the hard threshold (the
// kubelet defaults, as overridden per signal by the NodeClass) and the soft one.
func evictionThreshold(capacity corev1.ResourceList, kubelet *v1.KubeletConfiguration) corev1.ResourceList {
	hard := make(map[string]v1.EvictionThreshold, len(defaultEvictionHard))
	for signal, threshold := range defaultEvictionHard {
		hard[signal] = threshold
	}
	for signal, threshold := range kubelet.EvictionHard {
		hard[signal] = threshold
	}
	thresholds := corev1.ResourceList{}
	for signal, name := range evictionResources {
		largest := resource.Quantity{}
		for _, threshold := range []v1.EvictionThreshold{hard[signal], kubelet.EvictionSoft[signal]} {
			if quantity := thresholdQuantity(threshold, capacity[name]); quantity.Cmp(largest) > 0 {
				largest = quantity
			}
		}
		thresholds[name] = largest
	}
	return thresholds
}

// thresholdQuantity is a threshold as a quantity: a percentage of the capacity, computed as the
// kubelet does (a float32 fraction, truncated), or a quantity.
func thresholdQuantity(threshold v1.EvictionThreshold, capacity resource.Quantity) resource.Quantity {
	value := string(threshold)
	if percent, ok := strings.CutSuffix(value, "%"); ok {
		fraction, err := strconv.ParseFloat(percent, 32)
		if err != nil {
			return resource.Quantity{}
		}
		return *resource.NewQuantity(int64(float64(capacity.Value())*float64(float32(fraction/100))), resource.BinarySI)
	}
	quantity, err := resource.ParseQuantity(value)
	if err != nil {
		return resource.Quantity{}
	}
	return quantity
}
