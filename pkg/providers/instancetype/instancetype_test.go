package instancetype_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const mib = 1 << 20

// TestEveryPlan checks, for every plan the API serves, the capacity, allocatable resources and
// labels a NodePool sees, computed here from the plan's own fields.
func TestEveryPlan(t *testing.T) {
	const region = "us-ord"
	c := newCatalogue(t, region, mode.Instance, instancetype.WithHypervisorMemoryPercent(2.5))
	instanceTypes, err := c.provider.List(context.Background(), defaultNodeClass())
	if err != nil {
		t.Fatal(err)
	}
	byName := lo.KeyBy(instanceTypes, func(it *cloudprovider.InstanceType) string { return it.Name })
	plans := c.plans(t)
	if len(instanceTypes) != len(plans) {
		t.Fatalf("instance mode lists %d instance types for %d plans", len(instanceTypes), len(plans))
	}
	for _, plan := range plans {
		t.Run(plan.ID, func(t *testing.T) {
			it := byName[plan.ID]
			if it == nil {
				t.Fatalf("plan %s is not listed", plan.ID)
			}
			planBytes := int64(plan.Memory) * mib
			// 2.5% of the plan's memory is the hypervisor's; the kubelet reports whole KiB.
			memory := (planBytes - (planBytes*25+500)/1000) / 1024 * 1024
			disk := int64(plan.Disk) * mib
			wantCapacity := corev1.ResourceList{
				corev1.ResourceCPU:              *resource.NewQuantity(int64(plan.VCPUs), resource.DecimalSI),
				corev1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
				corev1.ResourceEphemeralStorage: *resource.NewQuantity(disk, resource.BinarySI),
				corev1.ResourcePods:             resource.MustParse("110"),
			}
			if plan.GPUs > 0 {
				wantCapacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(plan.GPUs), resource.DecimalSI)
			}
			expectResources(t, "capacity", it.Capacity, wantCapacity)

			wantAllocatable := wantCapacity.DeepCopy()
			wantAllocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(plan.VCPUs)*1000-tieredCPUReservation(plan.VCPUs), resource.DecimalSI)
			wantAllocatable[corev1.ResourceMemory] = *resource.NewQuantity(memory-tieredMemoryReservation(memory)-100*mib, resource.BinarySI)
			// nodefs.available=10%, as the kubelet computes it: a float32 fraction, truncated.
			wantAllocatable[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(disk-int64(float64(disk)*float64(float32(0.1))), resource.BinarySI)
			expectResources(t, "allocatable", it.Allocatable(), wantAllocatable)

			gpuName := ""
			if plan.GPUs > 0 {
				gpuName = strings.ToLower(strings.Fields(strings.SplitN(plan.Label, "+ ", 2)[1])[0])
			}
			wantLabels := map[string]string{
				corev1.LabelInstanceTypeStable: plan.ID,
				corev1.LabelArchStable:         "amd64",
				corev1.LabelOSStable:           "linux",
				corev1.LabelTopologyRegion:     region,
				corev1.LabelTopologyZone:       region,
				karpv1.CapacityTypeLabelKey:    karpv1.CapacityTypeOnDemand,
				v1.LabelInstanceClass:          string(plan.Class),
				v1.LabelInstanceCPU:            strconv.Itoa(plan.VCPUs),
				v1.LabelInstanceMemory:         strconv.Itoa(plan.Memory),
				v1.LabelInstanceDisk:           strconv.Itoa(plan.Disk),
				v1.LabelInstanceGPUCount:       strconv.Itoa(plan.GPUs),
				v1.LabelInstanceGPUName:        gpuName,
				v1.LabelInstanceGeneration:     strings.TrimPrefix(strings.SplitN(plan.ID, "-", 2)[0], "g"),
				v1.LabelInstanceNetworkOut:     strconv.Itoa(plan.NetworkOut),
				v1.LabelInstanceTransfer:       strconv.Itoa(plan.Transfer),
			}
			for key, want := range wantLabels {
				requirement := it.Requirements.Get(key)
				if want == "" {
					if requirement.Operator() != corev1.NodeSelectorOpDoesNotExist {
						t.Errorf("label %s: got %s %v, want DoesNotExist", key, requirement.Operator(), requirement.Values())
					}
					continue
				}
				if requirement.Operator() != corev1.NodeSelectorOpIn || requirement.Len() != 1 || requirement.Any() != want {
					t.Errorf("label %s: got %s %v, want %q", key, requirement.Operator(), requirement.Values(), want)
				}
			}
		})
	}
}

// tieredCPUReservation is LKE's kube-reserved cpu in millicores for whole cores: 60m for the
// first core, 10m for the second, 5m each for the third and fourth, 2.5m for each further core.
func tieredCPUReservation(cores int) int64 {
	milli := 60.0
	milli += 10 * float64(min(max(cores-1, 0), 1))
	milli += 5 * float64(min(max(cores-2, 0), 2))
	milli += 2.5 * float64(max(cores-4, 0))
	return int64(math.Round(milli))
}

// tieredMemoryReservation is LKE's kube-reserved memory, in whole MiB, for a node's memory.
func tieredMemoryReservation(bytes int64) int64 {
	n := float64(bytes) / mib
	if n < 1024 {
		return 255 * mib
	}
	clamp := func(v, hi float64) float64 { return math.Min(math.Max(v, 0), hi) }
	reserved := 0.25*clamp(n, 4096) + 0.20*clamp(n-4096, 4096) + 0.10*clamp(n-8192, 8192) +
		0.06*clamp(n-16384, 114688) + 0.02*math.Max(n-131072, 0)
	return int64(reserved) * mib
}

func expectResources(t *testing.T, what string, got, want corev1.ResourceList) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
	for name, quantity := range want {
		if g, ok := got[name]; !ok || g.Cmp(quantity) != 0 {
			t.Errorf("%s %s: got %s, want %s", what, name, g.String(), quantity.String())
		}
	}
}

// TestReservationsMatchLKE spot-checks the tiered defaults on plans a user knows.
func TestReservationsMatchLKE(t *testing.T) {
	c := newCatalogue(t, "us-ord", mode.LKE, instancetype.WithHypervisorMemoryPercent(0))
	instanceTypes, err := c.provider.List(context.Background(), defaultNodeClass())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		plan                string
		kubeReservedCPU     string
		kubeReservedMemory  string
		allocatableCPU      string
		allocatableMemoryGi float64
	}{
		// 25% of 4 GiB.
		{plan: "g6-standard-2", kubeReservedCPU: "70m", kubeReservedMemory: "1Gi", allocatableCPU: "1930m", allocatableMemoryGi: 4 - 1 - 100.0/1024},
		// 25% of 4 GiB + 20% of 4 GiB = 1843 MiB (1843.2 rounded down).
		{plan: "g6-standard-4", kubeReservedCPU: "80m", kubeReservedMemory: "1843Mi", allocatableCPU: "3920m", allocatableMemoryGi: 8 - 1843.0/1024 - 100.0/1024},
		// ... + 10% of 8 GiB = 2662 MiB; 6 cores: 80m + 2 x 2.5m.
		{plan: "g6-standard-6", kubeReservedCPU: "85m", kubeReservedMemory: "2662Mi", allocatableCPU: "5915m", allocatableMemoryGi: 16 - 2662.0/1024 - 100.0/1024},
	} {
		t.Run(tc.plan, func(t *testing.T) {
			it, ok := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == tc.plan })
			if !ok {
				t.Fatalf("%s not listed", tc.plan)
			}
			if got := it.Overhead.KubeReserved[corev1.ResourceCPU]; got.Cmp(resource.MustParse(tc.kubeReservedCPU)) != 0 {
				t.Errorf("kube-reserved cpu %s, want %s", got.String(), tc.kubeReservedCPU)
			}
			if got := it.Overhead.KubeReserved[corev1.ResourceMemory]; got.Cmp(resource.MustParse(tc.kubeReservedMemory)) != 0 {
				t.Errorf("kube-reserved memory %s, want %s", got.String(), tc.kubeReservedMemory)
			}
			if got := it.Allocatable()[corev1.ResourceCPU]; got.Cmp(resource.MustParse(tc.allocatableCPU)) != 0 {
				t.Errorf("allocatable cpu %s, want %s", got.String(), tc.allocatableCPU)
			}
			gotMemory := it.Allocatable()[corev1.ResourceMemory]
			if gi := float64(gotMemory.Value()) / (1 << 30); math.Abs(gi-tc.allocatableMemoryGi) > 0.001 {
				t.Errorf("allocatable memory %.3fGi, want %.3fGi", gi, tc.allocatableMemoryGi)
			}
		})
	}
}

func TestModeRules(t *testing.T) {
	for _, tc := range []struct {
		mode        mode.Mode
		wantNanodes bool
	}{
		{mode: mode.LKE, wantNanodes: false},
		{mode: mode.Instance, wantNanodes: true},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			c := newCatalogue(t, "us-ord", tc.mode)
			instanceTypes, err := c.provider.List(context.Background(), defaultNodeClass())
			if err != nil {
				t.Fatal(err)
			}
			classes := map[string]int{}
			for _, it := range instanceTypes {
				classes[it.Requirements.Get(v1.LabelInstanceClass).Any()]++
			}
			if got := classes[string(linodego.ClassNanode)] > 0; got != tc.wantNanodes {
				t.Errorf("nanode listed: %v, want %v (classes %v)", got, tc.wantNanodes, classes)
			}
			for _, class := range []string{"standard", "dedicated", "highmem", "premium", "gpu"} {
				if classes[class] == 0 {
					t.Errorf("no %s plan listed (classes %v)", class, classes)
				}
			}
		})
	}
}

func TestOfferings(t *testing.T) {
	for _, tc := range []struct {
		name          string
		region        string
		plan          string
		wantPrice     float64
		wantAvailable bool
	}{
		{name: "list price", region: "us-ord", plan: "g6-standard-2", wantPrice: 0.036, wantAvailable: true},
		{name: "region surcharge", region: "id-cgk", plan: "g6-standard-2", wantPrice: 0.043, wantAvailable: true},
		{name: "region surcharge", region: "br-gru", plan: "g6-dedicated-4", wantPrice: 0.151, wantAvailable: true},
		{name: "no surcharge listed for the plan", region: "id-cgk", plan: "g1-gpu-rtx6000-2", wantPrice: 3.0, wantAvailable: false},
		{name: "sold out per regions/availability", region: "us-ord", plan: "g1-gpu-rtx6000-1", wantPrice: 1.5, wantAvailable: false},
		{name: "sold out per regions/availability", region: "us-sea", plan: "g7-premium-64", wantPrice: 8.295, wantAvailable: false},
		{name: "premium available", region: "us-ord", plan: "g7-premium-2", wantPrice: 0.0645, wantAvailable: true},
		{name: "region without GPU Linodes", region: "au-mel", plan: "g1-gpu-rtx6000-1", wantPrice: 1.5, wantAvailable: false},
		{name: "region without Premium Plans", region: "ap-west", plan: "g7-premium-2", wantPrice: 0.0645, wantAvailable: false},
	} {
		t.Run(tc.name+"/"+tc.region+"/"+tc.plan, func(t *testing.T) {
			c := newCatalogue(t, tc.region, mode.LKE)
			offering := offeringOf(t, c, defaultNodeClass(), tc.plan)
			if offering.Price != tc.wantPrice {
				t.Errorf("price %v, want %v", offering.Price, tc.wantPrice)
			}
			if offering.Available != tc.wantAvailable {
				t.Errorf("available %v, want %v", offering.Available, tc.wantAvailable)
			}
			if offering.Zone() != tc.region || offering.CapacityType() != karpv1.CapacityTypeOnDemand {
				t.Errorf("offering zone %q capacity type %q, want %q on-demand", offering.Zone(), offering.CapacityType(), tc.region)
			}
		})
	}
}

func offeringOf(t *testing.T, c *catalogue, nodeClass *v1.LinodeNodeClass, plan string) *cloudprovider.Offering {
	t.Helper()
	instanceTypes, err := c.provider.List(context.Background(), nodeClass)
	if err != nil {
		t.Fatal(err)
	}
	it, ok := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == plan })
	if !ok || len(it.Offerings) != 1 {
		t.Fatalf("%s: want one offering, got %v", plan, it)
	}
	return it.Offerings[0]
}

func TestAvailabilityFollowsCapacity(t *testing.T) {
	ctx := context.Background()
	c := newCatalogue(t, "us-ord", mode.LKE)
	c.emulator.SetCapacity("us-ord", "g6-dedicated-8", 0)
	if !offeringOf(t, c, defaultNodeClass(), "g6-dedicated-8").Available {
		t.Fatal("sold out before the catalogue was re-read")
	}
	if err := c.provider.UpdateCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	if offeringOf(t, c, defaultNodeClass(), "g6-dedicated-8").Available {
		t.Error("still available after regions/availability said otherwise")
	}

	c.unavailable.MarkUnavailable(ctx, "insufficient capacity", "g6-standard-8", "us-ord")
	if offeringOf(t, c, defaultNodeClass(), "g6-standard-8").Available {
		t.Error("still available after a launch failed for lack of capacity")
	}
	c.unavailable.Flush()
	if !offeringOf(t, c, defaultNodeClass(), "g6-standard-8").Available {
		t.Error("still unavailable after the unavailable offerings expired")
	}
}

func TestKubeletSettings(t *testing.T) {
	c := newCatalogue(t, "us-ord", mode.LKE, instancetype.WithHypervisorMemoryPercent(0))
	for _, tc := range []struct {
		name    string
		kubelet *v1.KubeletConfiguration
		check   func(t *testing.T, it *cloudprovider.InstanceType)
	}{
		{
			name:    "maxPods",
			kubelet: &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50)},
			check:   expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity { return it.Capacity[corev1.ResourcePods] }, "50"),
		},
		{
			name:    "podsPerCore lowers maxPods",
			kubelet: &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50), PodsPerCore: lo.ToPtr[int32](4)},
			check:   expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity { return it.Capacity[corev1.ResourcePods] }, "16"),
		},
		{
			name: "kubeReserved replaces the default per resource",
			kubelet: &v1.KubeletConfiguration{
				KubeReserved:   map[string]v1.ReservedQuantity{"memory": "500Mi", "pid": "1000"},
				SystemReserved: map[string]v1.ReservedQuantity{"cpu": "100m"},
			},
			// 4 vCPU: 80m tiered kube-reserved cpu, 100m system-reserved; memory: 8Gi - 500Mi - 100Mi.
			check: func(t *testing.T, it *cloudprovider.InstanceType) {
				expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity { return it.Allocatable()[corev1.ResourceCPU] }, "3820m")(t, it)
				expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity { return it.Allocatable()[corev1.ResourceMemory] }, "7592Mi")(t, it)
			},
		},
		{
			name: "the larger of hard and soft eviction wins",
			kubelet: &v1.KubeletConfiguration{
				EvictionHard:            map[string]v1.EvictionThreshold{"memory.available": "1Gi"},
				EvictionSoft:            map[string]v1.EvictionThreshold{"memory.available": "500Mi", "nodefs.available": "50%"},
				EvictionSoftGracePeriod: nil,
			},
			check: func(t *testing.T, it *cloudprovider.InstanceType) {
				expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity {
					return it.Overhead.EvictionThreshold[corev1.ResourceMemory]
				}, "1Gi")(t, it)
				expectQuantity(func(it *cloudprovider.InstanceType) resource.Quantity {
					return it.Allocatable()[corev1.ResourceEphemeralStorage]
				}, "80Gi")(t, it)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeClass := defaultNodeClass()
			nodeClass.Spec.Kubelet = tc.kubelet
			instanceTypes, err := c.provider.List(context.Background(), nodeClass)
			if err != nil {
				t.Fatal(err)
			}
			it, _ := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == "g6-standard-4" })
			tc.check(t, it)
		})
	}
}

func expectQuantity(get func(*cloudprovider.InstanceType) resource.Quantity, want string) func(*testing.T, *cloudprovider.InstanceType) {
	return func(t *testing.T, it *cloudprovider.InstanceType) {
		t.Helper()
		if got := get(it); got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("got %s, want %s", got.String(), want)
		}
	}
}

func TestCatalogueRefresh(t *testing.T) {
	ctx := context.Background()
	e := test.StartEmulatorForTest(t)
	provider := instancetype.NewDefaultProvider(e.Client, "us-ord", mode.LKE, cacheForTest())

	if _, err := provider.List(ctx, defaultNodeClass()); !instancetype.IsNoCatalogue(err) {
		t.Fatalf("List before any catalogue: got %v, want ErrNoCatalogue", err)
	}
	e.InjectFault(emulator.Fault{Method: "GET", Route: "/linode/types", Sequence: []int{500}})
	if err := provider.UpdateCatalogue(ctx); err == nil {
		t.Fatal("UpdateCatalogue succeeded while the API failed")
	}
	if _, err := provider.List(ctx, defaultNodeClass()); !instancetype.IsNoCatalogue(err) {
		t.Fatalf("List after a failed first read: got %v, want ErrNoCatalogue", err)
	}
	if err := provider.UpdateCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := provider.List(ctx, defaultNodeClass())
	if err != nil {
		t.Fatal(err)
	}

	e.InjectFault(emulator.Fault{Method: "GET", Route: "/regions/availability", ErrorRate: 1, Count: 1})
	if err := provider.UpdateCatalogue(ctx); err == nil {
		t.Fatal("UpdateCatalogue succeeded while the API failed")
	}
	after, err := provider.List(ctx, defaultNodeClass())
	if err != nil {
		t.Fatalf("List lost the last good catalogue: %v", err)
	}
	if len(after) != len(before) || &after[0] != &before[0] {
		t.Error("a failed refresh replaced the last good catalogue")
	}

	if err := instancetype.NewDefaultProvider(e.Client, "xx-nowhere", mode.LKE, cacheForTest()).UpdateCatalogue(ctx); err == nil || !strings.Contains(err.Error(), "xx-nowhere") {
		t.Errorf("an unknown region: got %v, want an error naming it", err)
	}
}

func TestListIsMemoised(t *testing.T) {
	ctx := context.Background()
	c := newCatalogue(t, "us-ord", mode.LKE)
	first, _ := c.provider.List(ctx, defaultNodeClass())
	second, _ := c.provider.List(ctx, defaultNodeClass())
	if &first[0] != &second[0] {
		t.Error("a warm List rebuilt the instance types")
	}
	other := defaultNodeClass()
	other.Spec.Kubelet = &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](20)}
	third, _ := c.provider.List(ctx, other)
	if &third[0] == &first[0] {
		t.Error("a change of kubelet settings reused the memoised instance types")
	}
	if err := c.provider.UpdateCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	if fourth, _ := c.provider.List(ctx, defaultNodeClass()); &fourth[0] == &first[0] {
		t.Error("a new catalogue reused the memoised instance types")
	}
}

func TestCapacityLearnedFromNodes(t *testing.T) {
	ctx := context.Background()
	c := newCatalogue(t, "us-ord", mode.LKE)
	memoryOf := func() int64 {
		instanceTypes, err := c.provider.List(ctx, defaultNodeClass())
		if err != nil {
			t.Fatal(err)
		}
		it, _ := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == "g6-standard-2" })
		return it.Capacity.Memory().Value()
	}
	node := func(memory string) *corev1.Node {
		n := &corev1.Node{}
		n.Name = "lke1-2-abc"
		n.Labels = map[string]string{corev1.LabelInstanceTypeStable: "g6-standard-2"}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)}
		return n
	}
	estimated := memoryOf()
	for _, tc := range []struct {
		reported string
		want     int64
	}{
		{reported: "4015852Ki", want: 4015852 * 1024},
		// A larger report later does not raise what later launches are promised.
		{reported: "4020000Ki", want: 4015852 * 1024},
		{reported: "4010000Ki", want: 4010000 * 1024},
		// More than the plan has, or less than half of it: not a node of this plan.
		{reported: "5Gi", want: 4010000 * 1024},
		{reported: "1Gi", want: 4010000 * 1024},
	} {
		c.provider.UpdateCapacityFromNode(ctx, node(tc.reported))
		if got := memoryOf(); got != tc.want {
			t.Errorf("after a node reported %s: memory capacity %d, want %d (estimate was %d)", tc.reported, got, tc.want, estimated)
		}
	}
}
