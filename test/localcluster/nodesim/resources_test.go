package nodesim_test

import (
	"testing"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// A g6-standard-2 (2 vCPU, 4 GiB, 80 GiB) registers with what LKE's kubelet leaves for pods.
func TestStandardPlanResources(t *testing.T) {
	capacity, allocatable := nodesim.DefaultResourceModel().Resources(linodego.LinodeType{VCPUs: 2, Memory: 4096, Disk: 81920})
	for name, want := range map[corev1.ResourceName]map[string]string{
		corev1.ResourceCPU:              {"capacity": "2", "allocatable": "1930m"},       // 60m + 10m reserved
		corev1.ResourceMemory:           {"capacity": "3993Mi", "allocatable": "2895Mi"}, // 2.5% hypervisor; 25% reserved, 100Mi eviction
		corev1.ResourceEphemeralStorage: {"capacity": "80Gi", "allocatable": "72Gi"},
		corev1.ResourcePods:             {"capacity": "110", "allocatable": "110"},
	} {
		if got := capacity[name]; got.Cmp(resource.MustParse(want["capacity"])) != 0 {
			t.Errorf("capacity %s = %s, want %s", name, got.String(), want["capacity"])
		}
		if got := allocatable[name]; got.Cmp(resource.MustParse(want["allocatable"])) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, got.String(), want["allocatable"])
		}
	}
	if _, ok := capacity[nodesim.ResourceGPU]; ok {
		t.Errorf("a plan without GPUs advertises %s", nodesim.ResourceGPU)
	}
}
