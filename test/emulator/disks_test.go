package emulator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/linode/linodego"
)

// TestDisksAndImageCapture: deploying an image makes its disk and swap, which fill the plan's
// disk; the image's disk can be captured as a private image, the swap cannot; a clone gets
// disks of its own.
func TestDisksAndImageCapture(t *testing.T) {
	_, c, clk := startEmulator(t)
	ctx := context.Background()
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-ord", Type: "g6-standard-2", Label: "source", Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	disks, err := c.ListInstanceDisks(ctx, in.ID, nil)
	if err != nil || len(disks) != 2 || disks[0].Filesystem != linodego.FilesystemExt4 || disks[1].Filesystem != linodego.FilesystemSwap ||
		disks[0].Size+disks[1].Size != in.Specs.Disk || disks[0].Status != linodego.DiskNotReady {
		t.Fatalf("a deployed Linode's disks: %+v, %v", disks, err)
	}
	clk.Step(DefaultDelays().Provisioning)
	if disk, err := c.GetInstanceDisk(ctx, in.ID, disks[0].ID); err != nil || disk.Status != linodego.DiskReady || disk.Label != "Ubuntu 24.04 LTS Disk" {
		t.Fatalf("the image's disk once provisioned: %+v, %v", disk, err)
	}

	if _, err := c.CreateImage(ctx, linodego.ImageCreateOptions{DiskID: disks[1].ID, Label: "swap"}); err == nil {
		t.Fatal("a swap disk was imaged")
	} else {
		wantField(t, err, "disk_id")
	}
	if _, err := c.CreateImage(ctx, linodego.ImageCreateOptions{DiskID: disks[1].ID + 100, Label: "nothing"}); err == nil {
		t.Fatal("an unknown disk was imaged")
	}
	img, err := c.CreateImage(ctx, linodego.ImageCreateOptions{DiskID: disks[0].ID, Label: "golden", CloudInit: true})
	if err != nil || img.Status != linodego.ImageStatusCreating || img.Size != disks[0].Size {
		t.Fatalf("captured image: %+v, %v", img, err)
	}
	clk.Step(DefaultDelays().Provisioning)
	if got, err := c.GetImage(ctx, img.ID); err != nil || got.Status != linodego.ImageStatusAvailable || len(got.Regions) != 1 || got.Regions[0].Region != "us-ord" {
		t.Fatalf("captured image once made: %+v, %v", got, err)
	}

	clone, err := c.CloneInstance(ctx, in.ID, linodego.InstanceCloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cloned, err := c.ListInstanceDisks(ctx, clone.ID, nil)
	if err != nil || len(cloned) != 2 || cloned[0].ID == disks[0].ID || cloned[0].Size != disks[0].Size {
		t.Fatalf("the clone's disks: %+v, %v", cloned, err)
	}
}

// TestDataDisks: a Linode created not booted, with a boot disk of boot_size, gets blank disks in
// the plan's space its disks leave free once it has provisioned, a renamed boot disk, and a
// profile that boots them all; what does not fit or names another Linode's disk is refused.
func TestDataDisks(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	create := func(label string, bootSize int) (*linodego.Instance, error) {
		return c.CreateInstance(ctx, linodego.InstanceCreateOptions{
			Region: "us-ord", Type: "g6-standard-2", Label: label, Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
			BootSize: &bootSize, SwapSize: new(1024), Booted: new(false),
		})
	}
	if _, err := create("too-big", 81920); err == nil {
		t.Fatal("a boot disk that leaves no room for swap was deployed")
	} else {
		wantField(t, err, "boot_size")
	}
	if _, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: "no-image", BootSize: new(20480)}); err == nil {
		t.Fatal("boot_size without an image was accepted")
	} else {
		wantField(t, err, "boot_size")
	}
	in, err := create("node", 20480)
	if err != nil {
		t.Fatal(err)
	}
	disks, err := c.ListInstanceDisks(ctx, in.ID, nil)
	if err != nil || len(disks) != 2 || disks[0].Size != 20480 || disks[1].Size != 1024 {
		t.Fatalf("the disks of a Linode deployed with boot_size: %+v, %v", disks, err)
	}
	data := linodego.InstanceDiskCreateOptions{Label: "containerd", Size: 40960, Filesystem: string(linodego.FilesystemExt4)}
	if _, err := c.CreateInstanceDisk(ctx, in.ID, data); err == nil || !strings.Contains(err.Error(), "Linode busy.") {
		t.Fatalf("a disk created while its Linode provisions: %v, want Linode busy.", err)
	}
	clk.Step(DefaultDelays().Provisioning)
	if got, err := c.GetInstance(ctx, in.ID); err != nil || got.Status != linodego.InstanceOffline {
		t.Fatalf("a Linode created not booted, provisioned: %+v, %v", got, err)
	}
	disk, err := c.CreateInstanceDisk(ctx, in.ID, data)
	if err != nil || disk.Label != "containerd" || disk.Size != 40960 || disk.Filesystem != linodego.FilesystemExt4 {
		t.Fatalf("created disk: %+v, %v", disk, err)
	}
	if _, err := c.CreateInstanceDisk(ctx, in.ID, linodego.InstanceDiskCreateOptions{Label: "too-big", Size: 81920 - 20480 - 1024 - 40960 + 1}); err == nil {
		t.Fatal("a disk larger than the free space was created")
	} else if reason := wantField(t, err, "size"); !strings.Contains(reason, "19456 MB are free") {
		t.Fatalf("refusal of a disk that does not fit: %q", reason)
	}
	raw, err := c.CreateInstanceDisk(ctx, in.ID, linodego.InstanceDiskCreateOptions{Label: "local-volumes", Size: 19456, Filesystem: string(linodego.FilesystemRaw)})
	if err != nil || raw.Filesystem != linodego.FilesystemRaw {
		t.Fatalf("raw disk filling the rest: %+v, %v", raw, err)
	}
	if renamed, err := c.UpdateInstanceDisk(ctx, in.ID, disks[0].ID, linodego.InstanceDiskUpdateOptions{Label: "root"}); err != nil || renamed.Label != "root" {
		t.Fatalf("renamed boot disk: %+v, %v", renamed, err)
	}

	configs, err := c.ListInstanceConfigs(ctx, in.ID, nil)
	if err != nil || len(configs) != 1 {
		t.Fatalf("profiles: %+v, %v", configs, err)
	}
	devices := *configs[0].Devices
	devices.SDC = &linodego.InstanceConfigDevice{DiskID: disk.ID}
	devices.SDD = &linodego.InstanceConfigDevice{DiskID: raw.ID}
	other, err := create("other", 20480)
	if err != nil {
		t.Fatal(err)
	}
	otherDisks, err := c.ListInstanceDisks(ctx, other.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign := devices
	foreign.SDE = &linodego.InstanceConfigDevice{DiskID: otherDisks[0].ID}
	// linodego's update options send "interfaces": null, which Linode refuses: only the devices.
	status, field := sendJSON(t, e, http.MethodPut, fmt.Sprintf("/linode/instances/%d/configs/%d", in.ID, configs[0].ID), map[string]any{"devices": foreign})
	if status != http.StatusBadRequest || field != "devices.sde.disk_id" {
		t.Fatalf("another Linode's disk put in a profile: %d, field %q", status, field)
	}
	if status, field := sendJSON(t, e, http.MethodPut, fmt.Sprintf("/linode/instances/%d/configs/%d", in.ID, configs[0].ID), map[string]any{"devices": devices}); status != http.StatusOK {
		t.Fatalf("profile with the data disks: %d, field %q", status, field)
	}
	updated, err := c.GetInstanceConfig(ctx, in.ID, configs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Devices.SDA.DiskID != disks[0].ID || updated.Devices.SDB.DiskID != disks[1].ID ||
		updated.Devices.SDC.DiskID != disk.ID || updated.Devices.SDD.DiskID != raw.ID || updated.Devices.SDE != nil {
		t.Fatalf("profile with the data disks: %+v, %v", updated.Devices, err)
	}
	if updated.Label != configs[0].Label || updated.Kernel != configs[0].Kernel || len(updated.Interfaces) != len(configs[0].Interfaces) {
		t.Fatalf("updating the devices changed the rest of the profile: %+v, was %+v", updated, configs[0])
	}

	if err := c.BootInstance(ctx, in.ID, configs[0].ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().Booting)
	if got, err := c.GetInstance(ctx, in.ID); err != nil || got.Status != linodego.InstanceRunning {
		t.Fatalf("the Linode once booted: %+v, %v", got, err)
	}

	// linodego's update always sends the profile's interfaces (null when unset, which Linode
	// refuses); the emulator changes them only through the interfaces routes.
	public := []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposePublic}}
	_, err = c.UpdateInstanceConfig(ctx, in.ID, configs[0].ID, linodego.InstanceConfigUpdateOptions{Devices: &devices, Interfaces: public})
	wantField(t, err, "interfaces")
}
