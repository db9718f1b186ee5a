package v1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var env *environment.Environment

// These tests run against a real kube-apiserver: the CRD's OpenAPI schema and CEL rules are
// enforced by the apiserver itself, exactly as at `kubectl apply`.
func TestMain(m *testing.M) {
	var err error
	if env, err = environment.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func TestAPIServerIsReal(t *testing.T) {
	info, err := env.KubernetesInterface.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if info.GitVersion != environment.KubernetesVersion {
		t.Fatalf("kube-apiserver reports %s, want %s", info.GitVersion, environment.KubernetesVersion)
	}
	t.Logf("validating against kube-apiserver %s at %s", info.GitVersion, env.Config.Host)
}

func nodeClass(spec v1.LinodeNodeClassSpec) *v1.LinodeNodeClass {
	return &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}, Spec: spec}
}

func TestValidLinodeNodeClassesAreAccepted(t *testing.T) {
	for name, spec := range map[string]v1.LinodeNodeClassSpec{
		"empty (LKE defaults)": {},
		"LKE with everything": {
			Tags:           []v1.Tag{"team:payments", "env=prod"},
			FirewallID:     lo.ToPtr(1234),
			DiskEncryption: lo.ToPtr(v1.DiskEncryptionEnabled),
			LKEK8sVersion:  lo.ToPtr("1.33"),
			UpdateStrategy: lo.ToPtr(v1.UpdateStrategyOnRecycle),
			Kubelet: &v1.KubeletConfiguration{
				MaxPods:                     lo.ToPtr[int32](64),
				PodsPerCore:                 lo.ToPtr[int32](10),
				KubeReserved:                map[string]v1.ReservedQuantity{"cpu": "100m", "memory": "500Mi"},
				SystemReserved:              map[string]v1.ReservedQuantity{"ephemeral-storage": "1Gi", "pid": "100"},
				EvictionHard:                map[string]v1.EvictionThreshold{"memory.available": "100Mi", "nodefs.available": "10%"},
				EvictionSoft:                map[string]v1.EvictionThreshold{"memory.available": "500Mi"},
				EvictionSoftGracePeriod:     map[string]metav1.Duration{"memory.available": {Duration: 60e9}},
				ImageGCHighThresholdPercent: lo.ToPtr[int32](85),
				ImageGCLowThresholdPercent:  lo.ToPtr[int32](80),
				ClusterDNS:                  []string{"10.128.0.10"},
			},
		},
		"instance mode with everything": {
			Image:             lo.ToPtr("linode/ubuntu24.04"),
			AuthorizedKeys:    []string{"ssh-ed25519 AAAAC3Nza admin@example.com"},
			AuthorizedUsers:   []string{"alice"},
			RootDiskSizeMB:    lo.ToPtr[int32](20480),
			SwapSizeMB:        lo.ToPtr[int32](512),
			VPC:               &v1.VPCConfiguration{VPCLabel: lo.ToPtr("prod"), SubnetLabel: lo.ToPtr("nodes"), NAT1To1: lo.ToPtr(true)},
			PrivateIP:         lo.ToPtr(true),
			PlacementGroup:    &v1.PlacementGroupSelector{Label: lo.ToPtr("web"), Policy: lo.ToPtr("flexible")},
			BackupsEnabled:    lo.ToPtr(false),
			UserData:          lo.ToPtr("#cloud-config\npackages: [htop]\n"),
			MaintenancePolicy: lo.ToPtr(v1.MaintenancePolicyPowerOffOn),
		},
		"Linode Interfaces: VPC with NAT, ranges and IPv6, a firewall per interface, a VLAN": {
			Image:               lo.ToPtr("linode/ubuntu24.04"),
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{
					VPCConfiguration: v1.VPCConfiguration{VPCLabel: lo.ToPtr("prod"), SubnetLabel: lo.ToPtr("nodes"), NAT1To1: lo.ToPtr(true)},
					IPv4Ranges:       []string{"/28", "10.0.4.0/24"},
					IPv6:             &v1.VPCIPv6{SLAAC: lo.ToPtr(true), Range: lo.ToPtr(true), Public: lo.ToPtr(true)},
				}, FirewallID: lo.ToPtr(11)},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64", "/56"}}, FirewallID: lo.ToPtr(12)},
				{VLAN: &v1.VLANInterface{Label: "storage-net", IPAMAddress: lo.ToPtr("10.0.0.1/24")}},
			},
		},
		"legacy interfaces: a VPC chosen by id, its only subnet": {
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLegacyConfig),
			FirewallID:          lo.ToPtr(5),
			Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCID: lo.ToPtr(3)}, IPv6: &v1.VPCIPv6{SLAAC: lo.ToPtr(true)}}},
			},
		},
		"a VPC by id and subnet label": {
			VPC: &v1.VPCConfiguration{VPCID: lo.ToPtr(3), SubnetLabel: lo.ToPtr("nodes")},
		},
		"disks, kernel, CFS quota and compliance": {
			RootDiskSizeMB: lo.ToPtr[int32](20480),
			RootDiskLabel:  lo.ToPtr("root"),
			DataDisks: []v1.DataDisk{
				{Label: "containerd", SizeMB: 40960, Filesystem: lo.ToPtr("ext4"), MountPath: lo.ToPtr("/var/lib/containerd")},
				{Label: "local-volumes", SizeMB: 10240, Filesystem: lo.ToPtr("raw")},
				{Label: "logs", SizeMB: 512, Filesystem: lo.ToPtr("ext3"), MountPath: lo.ToPtr("/var/log/pods")},
			},
			Kernel:         lo.ToPtr("linode/grub2"),
			Kubelet:        &v1.KubeletConfiguration{CPUCFSQuota: lo.ToPtr(false)},
			PlacementGroup: &v1.PlacementGroupSelector{ID: lo.ToPtr(7), RequireCompliance: lo.ToPtr(true)},
		},
		"image selector and subnet id": {
			ImageSelector:  &v1.ImageSelector{Vendor: lo.ToPtr("Ubuntu"), Label: lo.ToPtr("Ubuntu 24.04")},
			VPC:            &v1.VPCConfiguration{SubnetID: lo.ToPtr(42)},
			PlacementGroup: &v1.PlacementGroupSelector{ID: lo.ToPtr(7)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := env.Client.Create(context.Background(), nodeClass(spec)); err != nil {
				t.Fatalf("a valid LinodeNodeClass was refused: %v", err)
			}
		})
	}
}

func TestInvalidLinodeNodeClassesAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec v1.LinodeNodeClassSpec
		// wantInError are fragments the apiserver's message must contain, so a user can find
		// the field to fix.
		wantInError []string
	}{
		{"bad disk encryption enum", v1.LinodeNodeClassSpec{DiskEncryption: lo.ToPtr[v1.DiskEncryption]("on")},
			[]string{"spec.diskEncryption", `"enabled", "disabled"`}},
		{"unknown maintenance policy", v1.LinodeNodeClassSpec{MaintenancePolicy: lo.ToPtr[v1.MaintenancePolicy]("power_off_on")},
			[]string{"spec.maintenancePolicy", `"linode/migrate", "linode/power_off_on"`}},
		{"bad update strategy enum", v1.LinodeNodeClassSpec{UpdateStrategy: lo.ToPtr[v1.UpdateStrategy]("surge")},
			[]string{"spec.updateStrategy", `"rolling_update", "on_recycle"`}},
		{"LKE version not major.minor", v1.LinodeNodeClassSpec{LKEK8sVersion: lo.ToPtr("v1.33.2")},
			[]string{"spec.lkeK8sVersion", "should match"}},
		{"tag over 50 characters", v1.LinodeNodeClassSpec{Tags: []v1.Tag{v1.Tag(strings.Repeat("t", 51))}},
			[]string{"spec.tags[0]", "may not be more than 50"}},
		{"reserved karpenter tag", v1.LinodeNodeClassSpec{Tags: []v1.Tag{"karpenter.sh/nodepool=default"}},
			[]string{"spec.tags", "reserved prefixes"}},
		{"reserved LKE tag", v1.LinodeNodeClassSpec{Tags: []v1.Tag{"lke12345"}},
			[]string{"spec.tags", "written by LKE"}},
		{"image and image selector", v1.LinodeNodeClassSpec{Image: lo.ToPtr("linode/debian12"), ImageSelector: &v1.ImageSelector{Vendor: lo.ToPtr("Debian")}},
			[]string{"spec", "image and imageSelector are mutually exclusive"}},
		{"empty image selector", v1.LinodeNodeClassSpec{ImageSelector: &v1.ImageSelector{}},
			[]string{"spec.imageSelector", "needs a label or a vendor"}},
		{"negative swap", v1.LinodeNodeClassSpec{SwapSizeMB: lo.ToPtr[int32](-1)},
			[]string{"spec.swapSizeMB", "greater than or equal to 0"}},
		{"root disk too small", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](100)},
			[]string{"spec.rootDiskSizeMB", "greater than or equal to 1024"}},
		{"swap not smaller than root disk", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](2048), SwapSizeMB: lo.ToPtr[int32](4096)},
			[]string{"spec", "swapSizeMB must be smaller than rootDiskSizeMB"}},
		{"negative firewall id", v1.LinodeNodeClassSpec{FirewallID: lo.ToPtr(-5)},
			[]string{"spec.firewallID", "greater than or equal to 1"}},
		{"subnet id and VPC label", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{SubnetID: lo.ToPtr(1), SubnetLabel: lo.ToPtr("a"), VPCLabel: lo.ToPtr("b")}},
			[]string{"spec.vpc", "exactly one of vpc.subnetID, vpc.vpcID and vpc.vpcLabel"}},
		{"subnet id and VPC id", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{SubnetID: lo.ToPtr(1), VPCID: lo.ToPtr(2)}},
			[]string{"spec.vpc", "exactly one of vpc.subnetID, vpc.vpcID and vpc.vpcLabel"}},
		{"subnet label alone", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{SubnetLabel: lo.ToPtr("a")}},
			[]string{"spec.vpc", "exactly one of vpc.subnetID, vpc.vpcID and vpc.vpcLabel"}},
		{"VPC label without subnet label", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{VPCLabel: lo.ToPtr("a")}},
			[]string{"spec.vpc", "vpc.vpcLabel needs vpc.subnetLabel"}},
		{"subnet id and subnet label", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{SubnetID: lo.ToPtr(1), SubnetLabel: lo.ToPtr("a")}},
			[]string{"spec.vpc", "with vpc.subnetID leave it unset"}},
		{"VPC id not positive", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{VPCID: lo.ToPtr(0)}},
			[]string{"spec.vpc.vpcID", "greater than or equal to 1"}},
		{"vpc and interfaces", v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}, Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}}}},
			[]string{"spec", "vpc and interfaces are mutually exclusive"}},
		{"unknown interface generation", v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr[v1.InterfaceGeneration]("new")},
			[]string{"spec.interfaceGeneration", `"legacy_config", "linode"`}},
		{"four interfaces", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}}, {VLAN: &v1.VLANInterface{Label: "a"}}, {VLAN: &v1.VLANInterface{Label: "b"}}, {VLAN: &v1.VLANInterface{Label: "c"}},
		}}, []string{"spec.interfaces", "must have at most 3 items"}},
		{"two public interfaces", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}}, {Public: &v1.PublicInterface{}}}},
			[]string{"spec.interfaces", "at most one public and one vpc interface"}},
		{"two vpc interfaces", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{
			{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}}}, {VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(2)}}},
		}}, []string{"spec.interfaces", "at most one public and one vpc interface"}},
		{"VLANs alone", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{VLAN: &v1.VLANInterface{Label: "a"}}}},
			[]string{"spec.interfaces", "need a public or a vpc interface"}},
		{"an interface of no kind", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}}, {}}},
			[]string{"spec.interfaces[1]", "exactly one of public, vpc and vlan"}},
		{"an interface of two kinds", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}, VLAN: &v1.VLANInterface{Label: "a"}}}},
			[]string{"spec.interfaces[0]", "exactly one of public, vpc and vlan"}},
		{"a firewall on a VLAN", v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode), Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}}, {VLAN: &v1.VLANInterface{Label: "a"}, FirewallID: lo.ToPtr(3)},
		}}, []string{"spec.interfaces[1]", "a vlan interface has no firewall"}},
		{"an interface firewall with legacy interfaces", v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLegacyConfig), Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}, FirewallID: lo.ToPtr(3)},
		}}, []string{"spec", "interfaces[].firewallID needs interfaceGeneration linode"}},
		{"an interface firewall with the account's generation", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}, FirewallID: lo.ToPtr(3)},
		}}, []string{"spec", "interfaces[].firewallID needs interfaceGeneration linode"}},
		{"an interface firewall id not positive", v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode), Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}, FirewallID: lo.ToPtr(0)},
		}}, []string{"spec.interfaces[0].firewallID", "greater than or equal to 1"}},
		{"a public IPv6 range of another size", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{IPv6Ranges: []string{"/48"}}}}},
			[]string{"spec.interfaces[0].public.ipv6Ranges[0]", `"/64", "/56"`}},
		{"a vpc interface without a subnet", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{NAT1To1: lo.ToPtr(true)}}}}},
			[]string{"spec.interfaces[0].vpc", "exactly one of vpc.subnetID, vpc.vpcID and vpc.vpcLabel"}},
		{"an IPv4 range that is no range", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{VPC: &v1.VPCInterface{
			VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}, IPv4Ranges: []string{"/33"},
		}}}}, []string{"spec.interfaces[0].vpc.ipv4Ranges", "a prefix length such as /28 or an IPv4 CIDR"}},
		{"an IPv6 CIDR as an IPv4 range", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{VPC: &v1.VPCInterface{
			VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}, IPv4Ranges: []string{"fd00::/64"},
		}}}}, []string{"spec.interfaces[0].vpc.ipv4Ranges", "a prefix length such as /28 or an IPv4 CIDR"}},
		{"VPC IPv6 that is only public", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{VPC: &v1.VPCInterface{
			VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}, IPv6: &v1.VPCIPv6{SLAAC: lo.ToPtr(false), Public: lo.ToPtr(true)},
		}}}}, []string{"spec.interfaces[0].vpc.ipv6", "ipv6 needs slaac or range"}},
		{"a VLAN label with spaces", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}}, {VLAN: &v1.VLANInterface{Label: "my vlan"}}}},
			[]string{"spec.interfaces[1].vlan.label", "should match"}},
		{"a VLAN address without a prefix", v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{}}, {VLAN: &v1.VLANInterface{Label: "a", IPAMAddress: lo.ToPtr("10.0.0.1")}}}},
			[]string{"spec.interfaces[1].vlan.ipamAddress", "an address in CIDR form"}},
		{"data disks without a root disk size", v1.LinodeNodeClassSpec{DataDisks: []v1.DataDisk{{Label: "data", SizeMB: 1024}}},
			[]string{"spec", "dataDisks need rootDiskSizeMB"}},
		{"two data disks by one label", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{{Label: "data", SizeMB: 1024}, {Label: "data", SizeMB: 2048}}},
			[]string{"spec.dataDisks[1]", "Duplicate value"}},
		{"a data disk labelled as the root disk", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), RootDiskLabel: lo.ToPtr("disk"), DataDisks: []v1.DataDisk{{Label: "disk", SizeMB: 1024}}},
			[]string{"spec", "dataDisks[].label must differ from rootDiskLabel"}},
		{"two data disks on one mount path", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{
			{Label: "a", SizeMB: 1024, MountPath: lo.ToPtr("/data")}, {Label: "b", SizeMB: 1024, MountPath: lo.ToPtr("/data")},
		}}, []string{"spec.dataDisks", "mountPath must differ between disks"}},
		{"a raw data disk with a mount path", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{
			{Label: "a", SizeMB: 1024, Filesystem: lo.ToPtr("raw"), MountPath: lo.ToPtr("/data")},
		}}, []string{"spec.dataDisks[0]", "a raw data disk has no filesystem to mount"}},
		{"a data disk of an unknown filesystem", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{{Label: "a", SizeMB: 1024, Filesystem: lo.ToPtr("xfs")}}},
			[]string{"spec.dataDisks[0].filesystem", `"ext4", "ext3", "raw"`}},
		{"a data disk of no size", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{{Label: "a"}}},
			[]string{"spec.dataDisks[0].sizeMB", "greater than or equal to 1"}},
		{"a data disk label with a slash", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{{Label: "a/b", SizeMB: 1024}}},
			[]string{"spec.dataDisks[0].label", "should match"}},
		{"a relative mount path", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{{Label: "a", SizeMB: 1024, MountPath: lo.ToPtr("data")}}},
			[]string{"spec.dataDisks[0].mountPath", "should match"}},
		{"seven data disks", v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](20480), DataDisks: []v1.DataDisk{
			{Label: "a", SizeMB: 1}, {Label: "b", SizeMB: 1}, {Label: "c", SizeMB: 1}, {Label: "d", SizeMB: 1}, {Label: "e", SizeMB: 1}, {Label: "f", SizeMB: 1}, {Label: "g", SizeMB: 1},
		}}, []string{"spec.dataDisks", "must have at most 6 items"}},
		{"an empty root disk label", v1.LinodeNodeClassSpec{RootDiskLabel: lo.ToPtr("")},
			[]string{"spec.rootDiskLabel", "at least 1 chars long"}},
		{"an empty kernel", v1.LinodeNodeClassSpec{Kernel: lo.ToPtr("")},
			[]string{"spec.kernel", "at least 1 chars long"}},
		{"placement group id and label", v1.LinodeNodeClassSpec{PlacementGroup: &v1.PlacementGroupSelector{ID: lo.ToPtr(1), Label: lo.ToPtr("x")}},
			[]string{"spec.placementGroup", "exactly one of placementGroup.id and placementGroup.label"}},
		{"bad placement policy", v1.LinodeNodeClassSpec{PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("x"), Policy: lo.ToPtr("loose")}},
			[]string{"spec.placementGroup.policy", `"strict", "flexible"`}},
		{"max pods out of range", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](0)}},
			[]string{"spec.kubelet.maxPods", "greater than or equal to 1"}},
		{"unknown reserved resource", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{KubeReserved: map[string]v1.ReservedQuantity{"gpu": "1"}}},
			[]string{"spec.kubelet.kubeReserved", "keys must be cpu, memory, ephemeral-storage or pid"}},
		{"negative system reserved", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{SystemReserved: map[string]v1.ReservedQuantity{"memory": "-1Gi"}}},
			[]string{"spec.kubelet.systemReserved.memory", "should match"}},
		{"unknown eviction signal", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{EvictionHard: map[string]v1.EvictionThreshold{"memory.free": "1Gi"}}},
			[]string{"spec.kubelet.evictionHard", "kubelet eviction signals"}},
		{"malformed eviction threshold", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{EvictionHard: map[string]v1.EvictionThreshold{"memory.available": "lots"}}},
			[]string{"spec.kubelet.evictionHard.memory.available", "should match"}},
		{"soft eviction without grace period", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{EvictionSoft: map[string]v1.EvictionThreshold{"memory.available": "1Gi"}}},
			[]string{"spec.kubelet", "every evictionSoft signal needs an evictionSoftGracePeriod"}},
		{"image GC thresholds inverted", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{ImageGCHighThresholdPercent: lo.ToPtr[int32](50), ImageGCLowThresholdPercent: lo.ToPtr[int32](60)}},
			[]string{"spec.kubelet", "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"}},
		{"image GC over 100", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{ImageGCHighThresholdPercent: lo.ToPtr[int32](101)}},
			[]string{"spec.kubelet.imageGCHighThresholdPercent", "less than or equal to 100"}},
		{"cluster DNS not an IP", v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{ClusterDNS: []string{"kube-dns"}}},
			[]string{"spec.kubelet.clusterDNS", "must be IP addresses"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), nodeClass(tc.spec))
			if err == nil {
				t.Fatal("an invalid LinodeNodeClass was accepted")
			}
			for _, want := range tc.wantInError {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestPlacementGroupIsImmutable(t *testing.T) {
	ctx := context.Background()
	for name, change := range map[string]func(*v1.LinodeNodeClassSpec){
		"changed":      func(s *v1.LinodeNodeClassSpec) { s.PlacementGroup.Label = lo.ToPtr("other") },
		"removed":      func(s *v1.LinodeNodeClassSpec) { s.PlacementGroup = nil },
		"policy set":   func(s *v1.LinodeNodeClassSpec) { s.PlacementGroup.Policy = lo.ToPtr("flexible") },
		"chosen by id": func(s *v1.LinodeNodeClassSpec) { s.PlacementGroup = &v1.PlacementGroupSelector{ID: lo.ToPtr(3)} },
	} {
		t.Run(name, func(t *testing.T) {
			nc := nodeClass(v1.LinodeNodeClassSpec{PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("web")}})
			if err := env.Client.Create(ctx, nc); err != nil {
				t.Fatal(err)
			}
			change(&nc.Spec)
			err := env.Client.Update(ctx, nc)
			if err == nil || !strings.Contains(err.Error(), "placementGroup is immutable") {
				t.Fatalf("changing the placement group: got %v, want a refusal naming placementGroup", err)
			}
		})
	}
}

// requireCompliance is when launches may join the group, not which group: it can change.
func TestPlacementGroupComplianceCanChange(t *testing.T) {
	ctx := context.Background()
	nc := nodeClass(v1.LinodeNodeClassSpec{PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("web"), Policy: lo.ToPtr("flexible")}})
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	for _, require := range []*bool{lo.ToPtr(true), lo.ToPtr(false), nil} {
		nc.Spec.PlacementGroup.RequireCompliance = require
		if err := env.Client.Update(ctx, nc); err != nil {
			t.Fatalf("setting requireCompliance to %v was refused: %v", lo.FromPtr(require), err)
		}
	}
}

func TestNodePoolReferencingALinodeNodeClassIsAccepted(t *testing.T) {
	ctx := context.Background()
	nc := nodeClass(v1.LinodeNodeClassSpec{})
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nodePool := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: v1.SchemeGroupVersion.Group, Kind: "LinodeNodeClass", Name: nc.Name},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"dedicated"}},
				{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"7"}},
			},
		}}},
	}
	if err := env.Client.Create(ctx, nodePool); err != nil {
		t.Fatalf("a NodePool referencing a LinodeNodeClass was refused: %v", err)
	}
}
