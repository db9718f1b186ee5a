package v1_test

import (
	"testing"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

func TestHashChangesWithTheFieldsOfTheModeOnly(t *testing.T) {
	base := func() *v1.LinodeNodeClass {
		return &v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Tags:                []v1.Tag{"team-a", "env-prod"},
			FirewallID:          lo.ToPtr(42),
			Image:               lo.ToPtr("linode/ubuntu24.04"),
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{
					VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(3), NAT1To1: lo.ToPtr(true)},
					IPv6:             &v1.VPCIPv6{SLAAC: lo.ToPtr(true)},
				}, FirewallID: lo.ToPtr(7)},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64", "/56"}}},
			},
			RootDiskSizeMB: lo.ToPtr[int32](20480),
			DataDisks:      []v1.DataDisk{{Label: "containerd", SizeMB: 40960, MountPath: lo.ToPtr("/var/lib/containerd")}},
			PlacementGroup: &v1.PlacementGroupSelector{ID: lo.ToPtr(5)},
		}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1.LinodeNodeClass)
		// drifted are the modes in which the change makes a node drift.
		drifted []mode.Mode
	}{
		{"identical spec", func(*v1.LinodeNodeClass) {}, nil},
		{"tags reordered", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = []v1.Tag{"env-prod", "team-a"} }, nil},
		{"status and metadata changed", func(nc *v1.LinodeNodeClass) {
			nc.Name = "other"
			nc.Status.Firewall = &v1.ResolvedFirewall{ID: 42}
		}, nil},
		{"firewall changed", func(nc *v1.LinodeNodeClass) { nc.Spec.FirewallID = lo.ToPtr(43) }, mode.All},
		{"tag added", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = append(nc.Spec.Tags, "cost-x") }, mode.All},
		{"kubelet max pods set", func(nc *v1.LinodeNodeClass) {
			nc.Spec.Kubelet = &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50)}
		}, mode.All},
		{"version pinned", func(nc *v1.LinodeNodeClass) { nc.Spec.LKEK8sVersion = lo.ToPtr("1.31") }, []mode.Mode{mode.LKE}},
		{"update strategy set", func(nc *v1.LinodeNodeClass) { nc.Spec.UpdateStrategy = lo.ToPtr(v1.UpdateStrategyOnRecycle) }, []mode.Mode{mode.LKE}},
		{"image changed", func(nc *v1.LinodeNodeClass) { nc.Spec.Image = lo.ToPtr("linode/debian12") }, []mode.Mode{mode.Instance}},
		{"user data set", func(nc *v1.LinodeNodeClass) { nc.Spec.UserData = lo.ToPtr("#cloud-config\n") }, []mode.Mode{mode.Instance}},
		{"authorized keys set", func(nc *v1.LinodeNodeClass) { nc.Spec.AuthorizedKeys = []string{"ssh-ed25519 AAAA"} }, []mode.Mode{mode.Instance}},
		{"maintenance policy set", func(nc *v1.LinodeNodeClass) { nc.Spec.MaintenancePolicy = lo.ToPtr(v1.MaintenancePolicyMigrate) }, []mode.Mode{mode.Instance}},
		{"interface generation set", func(nc *v1.LinodeNodeClass) {
			nc.Spec.InterfaceGeneration = lo.ToPtr(v1.InterfaceGenerationLegacyConfig)
		}, []mode.Mode{mode.Instance}},
		{"an interface's firewall changed", func(nc *v1.LinodeNodeClass) { nc.Spec.Interfaces[0].FirewallID = lo.ToPtr(8) }, []mode.Mode{mode.Instance}},
		{"an interface's firewall removed", func(nc *v1.LinodeNodeClass) { nc.Spec.Interfaces[0].FirewallID = nil }, []mode.Mode{mode.Instance}},
		{"NAT turned off", func(nc *v1.LinodeNodeClass) { nc.Spec.Interfaces[0].VPC.NAT1To1 = nil }, []mode.Mode{mode.Instance}},
		{"VPC IPv6 range added", func(nc *v1.LinodeNodeClass) { nc.Spec.Interfaces[0].VPC.IPv6.Range = lo.ToPtr(true) }, []mode.Mode{mode.Instance}},
		{"interfaces reordered", func(nc *v1.LinodeNodeClass) {
			nc.Spec.Interfaces[0], nc.Spec.Interfaces[1] = nc.Spec.Interfaces[1], nc.Spec.Interfaces[0]
		}, []mode.Mode{mode.Instance}},
		{"public IPv6 ranges reordered", func(nc *v1.LinodeNodeClass) { nc.Spec.Interfaces[1].Public.IPv6Ranges = []string{"/56", "/64"} }, nil},
		{"data disk grown", func(nc *v1.LinodeNodeClass) { nc.Spec.DataDisks[0].SizeMB *= 2 }, []mode.Mode{mode.Instance}},
		{"data disk mounted elsewhere", func(nc *v1.LinodeNodeClass) { nc.Spec.DataDisks[0].MountPath = lo.ToPtr("/data") }, []mode.Mode{mode.Instance}},
		{"data disk added", func(nc *v1.LinodeNodeClass) {
			nc.Spec.DataDisks = append(nc.Spec.DataDisks, v1.DataDisk{Label: "logs", SizeMB: 1024})
		}, []mode.Mode{mode.Instance}},
		{"root disk label set", func(nc *v1.LinodeNodeClass) { nc.Spec.RootDiskLabel = lo.ToPtr("boot") }, []mode.Mode{mode.Instance}},
		{"kernel set", func(nc *v1.LinodeNodeClass) { nc.Spec.Kernel = lo.ToPtr("linode/grub2") }, []mode.Mode{mode.Instance}},
		{"CPU CFS quota turned off", func(nc *v1.LinodeNodeClass) {
			nc.Spec.Kubelet = &v1.KubeletConfiguration{CPUCFSQuota: lo.ToPtr(false)}
		}, []mode.Mode{mode.Instance}},
		{"placement group compliance required", func(nc *v1.LinodeNodeClass) { nc.Spec.PlacementGroup.RequireCompliance = lo.ToPtr(true) }, nil},
	} {
		for _, m := range mode.All {
			t.Run(tc.name+" in "+string(m)+" mode", func(t *testing.T) {
				changed := base()
				tc.mutate(changed)
				want := lo.Contains(tc.drifted, m)
				if drifted := base().Hash(m) != changed.Hash(m); drifted != want {
					t.Fatalf("hash changed = %v, want %v (%s vs %s)", drifted, want, base().Hash(m), changed.Hash(m))
				}
			})
		}
	}
}
