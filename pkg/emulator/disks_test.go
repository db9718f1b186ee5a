package emulator

import (
	"context"
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
