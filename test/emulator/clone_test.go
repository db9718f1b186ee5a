package emulator

import (
	"context"
	"testing"

	"github.com/linode/linodego"
)

// TestCloneInstance: a clone gets the source's image and profiles with disks and a VPC address
// of its own, ends offline, and its event, on the source, names it and finishes then.
func TestCloneInstance(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	vpcID, _ := e.AddVPC("cluster", "us-ord")
	subnetID, _ := e.AddVPCSubnet(vpcID, "nodes", "10.0.4.0/24")
	source, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-ord", Type: "g6-standard-2", Label: "source", Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
		Interfaces: []linodego.InstanceConfigInterfaceCreateOptions{
			{Purpose: linodego.InterfacePurposePublic},
			{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID, IPv4: &linodego.VPCIPv4{NAT1To1: ptr("any")}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)

	clone, err := c.CloneInstance(ctx, source.ID, linodego.InstanceCloneOptions{PrivateIP: true})
	if err != nil || clone.ID == source.ID || clone.Image != source.Image || clone.Type != source.Type || len(clone.IPv4) != 2 {
		t.Fatalf("clone: %+v, %v", clone, err)
	}
	sourceConfigs, _ := c.ListInstanceConfigs(ctx, source.ID, nil)
	cloneConfigs, err := c.ListInstanceConfigs(ctx, clone.ID, nil)
	if err != nil || len(cloneConfigs) != 1 || cloneConfigs[0].ID == sourceConfigs[0].ID ||
		cloneConfigs[0].Devices.SDA.DiskID == sourceConfigs[0].Devices.SDA.DiskID ||
		cloneConfigs[0].Interfaces[1].IPv4.VPC == sourceConfigs[0].Interfaces[1].IPv4.VPC ||
		*cloneConfigs[0].Interfaces[1].IPv4.NAT1To1 != clone.IPv4[0].String() {
		t.Fatalf("clone's profile %+v, source's %+v, %v", cloneConfigs, sourceConfigs, err)
	}

	clk.Step(DefaultDelays().Provisioning)
	if got, err := c.GetInstance(ctx, clone.ID); err != nil || got.Status != linodego.InstanceOffline {
		t.Fatalf("clone after provisioning: %+v, %v", got, err)
	}
	events, err := c.ListEvents(ctx, &linodego.ListOptions{Filter: `{"action": "linode_clone"}`})
	// linodego leaves entity ids as decoded JSON numbers.
	if err != nil || len(events) != 1 || events[0].Entity.ID != float64(source.ID) || events[0].SecondaryEntity == nil ||
		events[0].SecondaryEntity.ID != float64(clone.ID) || events[0].Status != linodego.EventFinished {
		t.Fatalf("clone event: %+v, %v", events, err)
	}

	if _, err := c.CloneInstance(ctx, clone.ID, linodego.InstanceCloneOptions{LinodeID: source.ID}); err == nil {
		t.Fatal("cloned onto a running Linode")
	} else {
		wantField(t, err, "linode_id")
	}
	if _, err := c.CloneInstance(ctx, source.ID, linodego.InstanceCloneOptions{LinodeID: clone.ID}); err != nil {
		t.Fatalf("clone onto an offline Linode: %v", err)
	}
}
