package emulator

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/linode/linodego"
)

const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEmulatorTestKeyOnlyForTests tests@emulator"

func TestDeployValidation(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	vpcOrd, err := e.AddVPC("ord", "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	subnetOrd, _ := e.AddVPCSubnet(vpcOrd, "nodes", "10.0.0.0/24")
	vpcSea, _ := e.AddVPC("sea", "us-sea")
	subnetSea, _ := e.AddVPCSubnet(vpcSea, "nodes", "10.1.0.0/24")
	if _, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1", Label: "taken"}); err != nil {
		t.Fatal(err)
	}
	userData := &linodego.InstanceMetadataOptions{UserData: base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))}
	vpc := func(subnetID int) linodego.InstanceConfigInterfaceCreateOptions {
		return linodego.InstanceConfigInterfaceCreateOptions{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID}
	}
	public := linodego.InstanceConfigInterfaceCreateOptions{Purpose: linodego.InterfacePurposePublic}
	base := func(change func(*linodego.InstanceCreateOptions)) linodego.InstanceCreateOptions {
		opts := linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey}}
		change(&opts)
		return opts
	}
	tests := []struct {
		name  string
		opts  linodego.InstanceCreateOptions
		field string
	}{
		{"image without a way in", base(func(o *linodego.InstanceCreateOptions) { o.AuthorizedKeys = nil }), "root_pass"},
		{"root password too short", base(func(o *linodego.InstanceCreateOptions) { o.RootPass = "short" }), "root_pass"},
		{"user data on an image without cloud-init", base(func(o *linodego.InstanceCreateOptions) {
			o.Image, o.Metadata = "linode/slackware15.0", userData
		}), "metadata.user_data"},
		{"user data over 65535 bytes before base64", base(func(o *linodego.InstanceCreateOptions) {
			o.Metadata = &linodego.InstanceMetadataOptions{UserData: base64.StdEncoding.EncodeToString(make([]byte, 65536))}
		}), "metadata.user_data"},
		{"label taken", base(func(o *linodego.InstanceCreateOptions) { o.Label = "taken" }), "label"},
		{"swap larger than half the disk", base(func(o *linodego.InstanceCreateOptions) { o.SwapSize = ptr(50000) }), "swap_size"},
		{"two public interfaces", base(func(o *linodego.InstanceCreateOptions) {
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{public, public}
		}), "interfaces"},
		{"VPC interface without a subnet", base(func(o *linodego.InstanceCreateOptions) {
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposeVPC}}
		}), "interfaces[0].subnet_id"},
		{"unknown subnet", base(func(o *linodego.InstanceCreateOptions) {
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{vpc(subnetOrd + 100)}
		}), "interfaces[0].subnet_id"},
		{"subnet in another region", base(func(o *linodego.InstanceCreateOptions) {
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{public, vpc(subnetSea)}
		}), "interfaces[1].subnet_id"},
		{"VPC address outside the subnet", base(func(o *linodego.InstanceCreateOptions) {
			iface := vpc(subnetOrd)
			iface.IPv4 = &linodego.VPCIPv4{VPC: "10.9.0.5"}
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{iface}
		}), "interfaces[0].ipv4.vpc"},
		{"VLAN without a label", base(func(o *linodego.InstanceCreateOptions) {
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposeVLAN}}
		}), "interfaces[0].label"},
		{"four interfaces", base(func(o *linodego.InstanceCreateOptions) {
			vlan := func(l string) linodego.InstanceConfigInterfaceCreateOptions {
				return linodego.InstanceConfigInterfaceCreateOptions{Purpose: linodego.InterfacePurposeVLAN, Label: l}
			}
			o.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{public, vlan("a"), vlan("b"), vlan("c")}
		}), "interfaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateInstance(ctx, tt.opts)
			wantField(t, err, tt.field)
		})
	}
	if got := len(e.Instances()); got != 1 {
		t.Fatalf("%d Linodes after refused creates, want only the first", got)
	}
	for _, opts := range []linodego.InstanceCreateOptions{
		base(func(o *linodego.InstanceCreateOptions) { o.Metadata = userData }),
		base(func(o *linodego.InstanceCreateOptions) { o.AuthorizedKeys, o.RootPass = nil, "Not-a-real-password-1" }),
		base(func(o *linodego.InstanceCreateOptions) { o.AuthorizedKeys, o.AuthorizedUsers = nil, []string{"ops"} }),
	} {
		if _, err := c.CreateInstance(ctx, opts); err != nil {
			t.Errorf("valid deployment refused: %v", err)
		}
	}
}

func TestDeployedLinodeBootsItsProfileWithAVPCInterface(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	vpcID, err := e.AddVPC("cluster", "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	subnetID, _ := e.AddVPCSubnet(vpcID, "nodes", "10.0.4.0/24")
	create := func(label string) *linodego.Instance {
		t.Helper()
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
			Region: "us-ord", Type: "g6-standard-2", Label: label, Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
			Interfaces: []linodego.InstanceConfigInterfaceCreateOptions{
				{Purpose: linodego.InterfacePurposePublic},
				{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID, Primary: true, IPv4: &linodego.VPCIPv4{NAT1To1: ptr("any")}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	first := create("node-a")
	configs, err := c.ListInstanceConfigs(ctx, first.ID, nil)
	if err != nil || len(configs) != 1 {
		t.Fatalf("configs of a deployed Linode: %+v, %v", configs, err)
	}
	profile := configs[0]
	if profile.Label != "My Ubuntu 24.04 LTS Disk Profile" || profile.Devices.SDA == nil || profile.Devices.SDA.DiskID == 0 {
		t.Errorf("profile %q with devices %+v", profile.Label, profile.Devices)
	}
	if len(profile.Interfaces) != 2 {
		t.Fatalf("interfaces %+v", profile.Interfaces)
	}
	vpcIface := profile.Interfaces[1]
	if vpcIface.Purpose != linodego.InterfacePurposeVPC || *vpcIface.SubnetID != subnetID || *vpcIface.VPCID != vpcID ||
		vpcIface.IPv4.VPC != "10.0.4.2" || *vpcIface.IPv4.NAT1To1 != first.IPv4[0].String() || vpcIface.Active {
		t.Errorf("VPC interface before boot: %+v, ipv4 %+v", vpcIface, vpcIface.IPv4)
	}
	second := create("node-b")
	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)
	got, err := c.GetInstanceConfig(ctx, second.ID, mustConfigs(t, c, second.ID)[0].ID)
	if err != nil || got.Interfaces[1].IPv4.VPC != "10.0.4.3" || !got.Interfaces[1].Active {
		t.Fatalf("second Linode's profile once running: %+v, %v", got, err)
	}
	sub, err := c.GetVPCSubnet(ctx, vpcID, subnetID)
	if err != nil || len(sub.Linodes) != 2 || sub.Linodes[0].ID != first.ID || !sub.Linodes[1].Interfaces[0].Active {
		t.Fatalf("subnet's Linodes: %+v, %v", sub, err)
	}

	bare, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-nanode-1", Booted: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustConfigs(t, c, bare.ID); len(got) != 0 {
		t.Fatalf("a Linode without an image has profiles: %+v", got)
	}
	made, err := c.CreateInstanceConfig(ctx, bare.ID, linodego.InstanceConfigCreateOptions{
		Label: "manual", Devices: linodego.InstanceConfigDeviceMap{},
		Interfaces: []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID}},
	})
	if err != nil || made.Interfaces[0].IPv4.VPC != "10.0.4.4" || made.Devices.SDA != nil {
		t.Fatalf("created profile: %+v, %v", made, err)
	}
	if _, err := c.GetInstanceConfig(ctx, bare.ID, made.ID+1); !linodego.IsNotFound(err) {
		t.Fatalf("unknown profile: %v", err)
	}
}

func mustConfigs(t *testing.T, c *linodego.Client, linodeID int) []linodego.InstanceConfig {
	t.Helper()
	configs, err := c.ListInstanceConfigs(context.Background(), linodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return configs
}

func TestShutdownAndBoot(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	var events eventLog
	e.OnInstanceEvent(events.add)
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey}})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := func(want linodego.InstanceStatus) {
		t.Helper()
		got, err := c.GetInstance(ctx, in.ID)
		if err != nil || got.Status != want {
			t.Fatalf("want %s, got %+v, %v", want, got, err)
		}
	}
	// A Linode still provisioning cannot be shut down yet: it is busy.
	wantAPIError(t, c.ShutdownInstance(ctx, in.ID), 400)

	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)
	wantStatus(linodego.InstanceRunning)
	wantAPIError(t, c.BootInstance(ctx, in.ID, 0), 400)
	if err := c.ShutdownInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(linodego.InstanceShuttingDown)
	clk.Step(DefaultDelays().ShuttingDown)
	wantStatus(linodego.InstanceOffline)
	if stopped := events.of(InstanceStopped); len(stopped) != 1 || stopped[0].InstanceID != in.ID {
		t.Fatalf("stopped events: %+v", stopped)
	}
	if err := c.BootInstance(ctx, in.ID, 0); err != nil {
		t.Fatal(err)
	}
	wantStatus(linodego.InstanceBooting)
	clk.Step(DefaultDelays().Booting)
	wantStatus(linodego.InstanceRunning)
	if resumed := events.of(InstanceResumed); len(resumed) != 1 || resumed[0].InstanceID != in.ID {
		t.Fatalf("a Linode booted again is announced resumed: %+v", resumed)
	}
	if running := events.of(InstanceRunning); len(running) != 1 {
		t.Fatalf("only the first boot is announced running: %+v", running)
	}
}

func TestPrivateImages(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	older := e.AddImage(ImageSpec{Label: "k8s-node 1.36.0", Created: epoch.Add(-48 * time.Hour), CloudInit: true})
	plain := e.AddImage(ImageSpec{Label: "k8s-node plain", Created: epoch})
	img, err := c.GetImage(ctx, older)
	if err != nil || img.IsPublic || img.Label != "k8s-node 1.36.0" || len(img.Capabilities) != 1 || !img.Created.Equal(epoch.Add(-48*time.Hour)) {
		t.Fatalf("private image: %+v, %v", img, err)
	}
	mine, err := c.ListImages(ctx, &linodego.ListOptions{Filter: `{"is_public": false}`})
	if err != nil || len(mine) != 2 || mine[0].ID != older || mine[1].ID != plain {
		t.Fatalf("private images listed: %+v, %v", mine, err)
	}
	public, err := c.ListImages(ctx, &linodego.ListOptions{Filter: `{"is_public": true}`})
	if err != nil || len(public) == 0 {
		t.Fatalf("public images listed: %d, %v", len(public), err)
	}
	all, err := c.ListImages(ctx, nil)
	if err != nil || len(all) != len(mine)+len(public) {
		t.Fatalf("%d images, %d of them private and %d public, %v", len(all), len(mine), len(public), err)
	}
	userData := &linodego.InstanceMetadataOptions{UserData: base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))}
	if _, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Image: older, AuthorizedKeys: []string{testSSHKey}, Metadata: userData}); err != nil {
		t.Fatalf("Linode from a private cloud-init image: %v", err)
	}
	_, err = c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Image: plain, AuthorizedKeys: []string{testSSHKey}, Metadata: userData})
	wantField(t, err, "metadata.user_data")
}

func TestDeployedProfileBootsTheKernelTheCreateNames(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()
	for _, tc := range []struct {
		label  string
		kernel *string
		want   string
	}{
		{"default-kernel", nil, "linode/grub2"},
		{"latest-kernel", ptr("linode/latest-64bit"), "linode/latest-64bit"},
	} {
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
			Region: "us-ord", Type: "g6-standard-2", Label: tc.label, Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey}, Kernel: tc.kernel,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustConfigs(t, c, in.ID)[0].Kernel; got != tc.want {
			t.Errorf("%s: the profile boots %q, want %q", tc.label, got, tc.want)
		}
	}
}
