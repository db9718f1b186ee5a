package emulator

import (
	"context"
	"testing"

	"github.com/linode/linodego"
)

// TestIPAddresses: a Linode's addresses, allocated and moved ones, reverse DNS, and reserving or
// giving back an address, as /networking/ips and the Linode's /ips show them.
func TestIPAddresses(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()
	create := func(label string) *linodego.Instance {
		t.Helper()
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1", Label: label, PrivateIP: true})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	a, b := create("node-a"), create("node-b")
	primary := a.IPv4[0].String()

	got, err := c.GetIPAddress(ctx, primary)
	if err != nil || got.LinodeID != a.ID || !got.Public || got.Reserved || got.RDNS == "" {
		t.Fatalf("a Linode's public address: %+v, %v", got, err)
	}
	ips, err := c.GetInstanceIPAddresses(ctx, a.ID)
	if err != nil || len(ips.IPv4.Public) != 1 || len(ips.IPv4.Private) != 1 || ips.IPv6.SLAAC == nil {
		t.Fatalf("the Linode's addresses: %+v, %v", ips, err)
	}
	if _, err := c.GetIPAddress(ctx, "10.0.0.1"); !linodego.IsNotFound(err) {
		t.Fatalf("an address not the account's: %v", err)
	}

	custom := ptr("node-a.example.com")
	if got, err := c.UpdateIPAddressV2(ctx, primary, linodego.IPAddressUpdateOptionsV2{RDNS: &custom}); err != nil || got.RDNS != *custom {
		t.Fatalf("reverse DNS set: %+v, %v", got, err)
	}
	bad := ptr("not a domain")
	_, err = c.UpdateIPAddressV2(ctx, primary, linodego.IPAddressUpdateOptionsV2{RDNS: &bad})
	wantField(t, err, "rdns")
	var linodes *string
	if got, err := c.UpdateIPAddressV2(ctx, primary, linodego.IPAddressUpdateOptionsV2{RDNS: &linodes}); err != nil || got.RDNS == *custom || got.RDNS == "" {
		t.Fatalf("reverse DNS back to Linode's: %+v, %v", got, err)
	}

	extra, err := c.AllocateReserveIP(ctx, linodego.AllocateReserveIPOptions{Type: "ipv4", Public: true, LinodeID: a.ID})
	if err != nil || extra.LinodeID != a.ID || extra.Reserved {
		t.Fatalf("another address for the Linode: %+v, %v", extra, err)
	}
	if _, err := c.AllocateReserveIP(ctx, linodego.AllocateReserveIPOptions{Type: "ipv4", Public: true, Reserved: true}); err == nil {
		t.Fatal("address reserved with neither a region nor a Linode")
	}
	if err := c.InstancesAssignIPs(ctx, linodego.LinodesAssignIPsOptions{Region: "us-ord", Assignments: []linodego.LinodeIPAssignment{{Address: extra.Address, LinodeID: b.ID}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetIPAddress(ctx, extra.Address); err != nil || got.LinodeID != b.ID {
		t.Fatalf("moved address: %+v, %v", got, err)
	}
	if err := c.InstancesAssignIPs(ctx, linodego.LinodesAssignIPsOptions{Region: "us-ord", Assignments: []linodego.LinodeIPAssignment{{Address: "198.51.100.1", LinodeID: b.ID}}}); err == nil {
		t.Fatal("an address not the account's was assigned")
	}

	reserve, release := true, false
	if got, err := c.UpdateIPAddressV2(ctx, extra.Address, linodego.IPAddressUpdateOptionsV2{Reserved: &reserve}); err != nil || !got.Reserved {
		t.Fatalf("address reserved: %+v, %v", got, err)
	}
	if listed, err := c.ListIPAddresses(ctx, &linodego.ListOptions{Filter: `{"reserved": true}`}); err != nil || len(listed) != 1 || listed[0].Address != extra.Address {
		t.Fatalf("reserved addresses: %+v, %v", listed, err)
	}
	if got, err := c.UpdateIPAddressV2(ctx, extra.Address, linodego.IPAddressUpdateOptionsV2{Reserved: &release}); err != nil || got.Reserved || got.LinodeID != b.ID {
		t.Fatalf("address given back stays the Linode's: %+v, %v", got, err)
	}
	parked, err := c.AllocateReserveIP(ctx, linodego.AllocateReserveIPOptions{Type: "ipv4", Public: true, Reserved: true, Region: "us-ord"})
	if err != nil || !parked.Reserved || parked.LinodeID != 0 {
		t.Fatalf("address reserved for later: %+v, %v", parked, err)
	}
	if got, err := c.UpdateIPAddressV2(ctx, parked.Address, linodego.IPAddressUpdateOptionsV2{Reserved: &release}); err != nil || got.Reserved || got.Region != "us-ord" || got.Gateway == "" {
		t.Fatalf("an unused address given back, as the answer shows it: %+v, %v", got, err)
	}
	if _, err := c.GetIPAddress(ctx, parked.Address); !linodego.IsNotFound(err) {
		t.Fatalf("an unused address given back is gone: %v", err)
	}
	all, err := c.ListIPAddresses(ctx, nil)
	if err != nil || len(all) != 5 {
		t.Fatalf("the account's addresses (two Linodes' public and private, one moved): %+v, %v", all, err)
	}

	second, err := c.AddInstanceIPAddress(ctx, a.ID, true)
	if err != nil || second.LinodeID != a.ID || !second.Public {
		t.Fatalf("a second public address: %+v, %v", second, err)
	}
	if _, err := c.AddInstanceIPAddress(ctx, a.ID, false); err == nil {
		t.Fatal("a second private address")
	}
	if err := c.DeleteInstanceIPAddress(ctx, a.ID, second.Address); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteInstanceIPAddress(ctx, a.ID, primary); err == nil {
		t.Fatal("a Linode's only public address was removed")
	} else {
		wantField(t, err, "address")
	}
	if err := c.DeleteInstanceIPAddress(ctx, a.ID, second.Address); !linodego.IsNotFound(err) {
		t.Fatalf("a removed address removed again: %v", err)
	}
}

// TestVPCIPAddresses: a Linode's VPC interface shows in the VPC's addresses and the account's.
func TestVPCIPAddresses(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	vpcID, _ := e.AddVPC("cluster", "us-ord")
	subnetID, _ := e.AddVPCSubnet(vpcID, "nodes", "10.0.4.0/24")
	other, _ := e.AddVPC("other", "us-ord")
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-ord", Type: "g6-standard-2", Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
		Interfaces: []linodego.InstanceConfigInterfaceCreateOptions{
			{Purpose: linodego.InterfacePurposePublic},
			{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID, IPv4: &linodego.VPCIPv4{NAT1To1: ptr("any")}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.ListAllVPCIPAddresses(ctx, nil)
	if err != nil || len(all) != 1 || all[0].LinodeID != in.ID || all[0].SubnetID != subnetID || all[0].Prefix != 24 || all[0].SubnetMask != "255.255.255.0" {
		t.Fatalf("VPC addresses: %+v, %v", all, err)
	}
	if ofOther, err := c.ListVPCIPAddresses(ctx, other, nil); err != nil || len(ofOther) != 0 {
		t.Fatalf("another VPC's addresses: %+v, %v", ofOther, err)
	}
	public, err := c.GetIPAddress(ctx, in.IPv4[0].String())
	if err != nil || public.VPCNAT1To1 == nil || public.VPCNAT1To1.SubnetID != subnetID {
		t.Fatalf("the public address's 1:1 NAT: %+v, %v", public, err)
	}
}
