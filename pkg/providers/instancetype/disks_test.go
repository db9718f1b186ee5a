package instancetype_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// TestPlansTooSmallForTheDisksAreNotOffered: in instance mode a class's boot, swap and data disks
// rule out the plans whose disk cannot hold them, and a change of its disks is seen at once; in
// LKE mode, where LKE lays out the disks, every plan stays.
func TestPlansTooSmallForTheDisksAreNotOffered(t *testing.T) {
	ctx := context.Background()
	planDisk := func(t *testing.T, m mode.Mode, nodeClass *v1.LinodeNodeClass) (smallest int, count int) {
		t.Helper()
		instanceTypes, err := newCatalogue(t, "us-ord", m).provider.List(ctx, nodeClass)
		if err != nil {
			t.Fatal(err)
		}
		smallest = -1
		for _, it := range instanceTypes {
			disk, _ := strconv.Atoi(it.Requirements.Get(v1.LabelInstanceDisk).Any())
			if smallest < 0 || disk < smallest {
				smallest = disk
			}
		}
		return smallest, len(instanceTypes)
	}
	withDisks := defaultNodeClass()
	// 20480 + 512 of swap (unset) + 40960 = 61952 MB: more than a 51200 MB plan has.
	withDisks.Spec.RootDiskSizeMB = lo.ToPtr[int32](20480)
	withDisks.Spec.DataDisks = []v1.DataDisk{{Label: "containerd", SizeMB: 40960}}

	smallestAll, all := planDisk(t, mode.Instance, defaultNodeClass())
	if smallestAll >= 61952 {
		t.Fatalf("the catalogue's smallest plan has %d MB: the test needs smaller ones", smallestAll)
	}
	smallest, fitting := planDisk(t, mode.Instance, withDisks)
	if smallest < 61952 || fitting == 0 || fitting >= all {
		t.Errorf("with disks of 61952 MB: %d of %d plans, the smallest of %d MB", fitting, all, smallest)
	}
	if _, lke := planDisk(t, mode.LKE, withDisks); lke == 0 {
		t.Error("LKE mode offers no plan")
	} else if _, lkeAll := planDisk(t, mode.LKE, defaultNodeClass()); lke != lkeAll {
		t.Errorf("LKE mode offers %d plans to a class with disks, %d to one without", lke, lkeAll)
	}

	c := newCatalogue(t, "us-ord", mode.Instance)
	before, _ := c.provider.List(ctx, withDisks)
	withDisks.Spec.DataDisks[0].SizeMB = 1024
	after, _ := c.provider.List(ctx, withDisks)
	if len(after) <= len(before) {
		t.Errorf("smaller data disks still offer %d plans, as before (%d)", len(after), len(before))
	}
}

// TestEphemeralStorageIsTheKubeletsDisk: a node's ephemeral storage is the disk that holds
// /var/lib/kubelet: the plan's disk, the boot disk of rootDiskSizeMB, or a data disk mounted
// there or above it; a disk for containerd alone changes nothing. LKE lays out its own disks.
func TestEphemeralStorageIsTheKubeletsDisk(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      mode.Mode
		dataDisks []v1.DataDisk
		wantMB    int64
	}{
		{name: "boot disk", mode: mode.Instance, wantMB: 20480},
		{name: "containerd's disk", mode: mode.Instance, dataDisks: []v1.DataDisk{{Label: "c", SizeMB: 30720, MountPath: lo.ToPtr("/var/lib/containerd")}}, wantMB: 20480},
		{name: "a disk for /var/lib", mode: mode.Instance, dataDisks: []v1.DataDisk{
			{Label: "var-lib", SizeMB: 30720, MountPath: lo.ToPtr("/var/lib/")},
			{Label: "kubelet-logs", SizeMB: 2048, MountPath: lo.ToPtr("/var/lib/kubelet-logs")},
		}, wantMB: 30720},
		{name: "the kubelet's own disk under another's", mode: mode.Instance, dataDisks: []v1.DataDisk{
			{Label: "var", SizeMB: 30720, MountPath: lo.ToPtr("/var")},
			{Label: "kubelet", SizeMB: 10240, MountPath: lo.ToPtr("/var/lib/kubelet")},
		}, wantMB: 10240},
		{name: "LKE", mode: mode.LKE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeClass := defaultNodeClass()
			nodeClass.Spec.RootDiskSizeMB = lo.ToPtr[int32](20480)
			nodeClass.Spec.DataDisks = tc.dataDisks
			instanceTypes, err := newCatalogue(t, "us-ord", tc.mode).provider.List(context.Background(), nodeClass)
			if err != nil || len(instanceTypes) == 0 {
				t.Fatalf("%d plans, %v", len(instanceTypes), err)
			}
			for _, it := range instanceTypes {
				want := tc.wantMB
				if want == 0 {
					disk, _ := strconv.ParseInt(it.Requirements.Get(v1.LabelInstanceDisk).Any(), 10, 64)
					want = disk
				}
				if got := it.Capacity[corev1.ResourceEphemeralStorage]; got.Value() != want*mib {
					t.Fatalf("%s: ephemeral storage %s, want %d MiB", it.Name, got.String(), want)
				}
			}
		})
	}
}
