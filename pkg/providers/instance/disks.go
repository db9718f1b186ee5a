package instance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// A node's disks. Linode deploys the image onto a boot disk of rootDiskSizeMB (boot_size) and
// makes the swap disk, leaving the rest of the plan's disk free. A class with data disks or a
// boot disk label needs more before the node first boots, so its Linode is created not booted,
// and the launch then:
//
//  1. creates each data disk Linode lacks, by label, in the free space (Linode formats ext4 and
//     ext3 disks as it creates them),
//  2. renames the boot disk to rootDiskLabel,
//  3. puts the data disks in the boot profile's slots after swap, in the order of dataDisks,
//  4. boots the Linode.
//
// Each step reads what Linode has before it acts, so a launch retried after a crash, a lost
// answer or a "Linode busy." finishes what an earlier attempt began, and never makes a disk
// twice. Once the Linode has booted there is nothing left to do: the disks are the class's as it
// was at launch, as the user data that mounts them is.

// ReasonDisksDoNotFit: the plan's disk cannot hold the class's boot, swap and data disks.
const ReasonDisksDoNotFit = "DisksDoNotFit"

// profileSlots are a boot profile's device slots.
var profileSlots = []string{"sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh"}

// dataDiskSlots are the boot profile's slots of the class's data disks, in the order of dataDisks:
// right after the boot disk in sda and swap in sdb, or in sdb when swapSizeMB is 0. The disks'
// slots leave no gap: a guest names its disks in the order it finds them, so only then is the
// disk in slot sdX sure to be /dev/sdX, the device the user data mounts.
func dataDiskSlots(spec *v1.LinodeNodeClassSpec) []string {
	first := 2
	if lo.FromPtrOr(spec.SwapSizeMB, instancetype.DefaultSwapMB) == 0 {
		first = 1
	}
	return profileSlots[first : first+min(len(spec.DataDisks), len(profileSlots)-first)]
}

// needsFinishing reports whether the class's Linodes need steps after the create before they boot.
func needsFinishing(spec *v1.LinodeNodeClassSpec) bool {
	return len(spec.DataDisks) > 0 || spec.RootDiskLabel != nil
}

// setDiskOptions sizes the boot disk and, when the class needs more than Linode's create makes,
// leaves the Linode powered off for finishLaunch. It refuses a plan whose disk cannot hold the
// class's disks; the plans offered for the class leave those out already.
func setDiskOptions(opts *linodego.InstanceCreateOptions, nodeClass *v1.LinodeNodeClass, instanceType *cloudprovider.InstanceType) error {
	spec := &nodeClass.Spec
	if need, planDisk := instancetype.DiskNeedMB(spec), planDiskMB(instanceType); planDisk > 0 && need > planDisk {
		message := fmt.Sprintf("plan %s has %d MB of disk, less than the %d MB that rootDiskSizeMB, swapSizeMB (%d MB unset) and dataDisks[].sizeMB of LinodeNodeClass %s add up to",
			instanceType.Name, planDisk, need, instancetype.DefaultSwapMB, nodeClass.Name)
		return cloudprovider.NewCreateError(errors.New(message), ReasonDisksDoNotFit, message)
	}
	if size := spec.RootDiskSizeMB; size != nil {
		opts.BootSize = lo.ToPtr(int(*size))
	}
	if needsFinishing(spec) {
		opts.Booted = lo.ToPtr(false)
	}
	return nil
}

// planDiskMB is the plan's disk as its instance type labels it, 0 if it does not.
func planDiskMB(instanceType *cloudprovider.InstanceType) int {
	if !instanceType.Requirements.Has(v1.LabelInstanceDisk) {
		return 0
	}
	disk, err := strconv.Atoi(instanceType.Requirements.Get(v1.LabelInstanceDisk).Any())
	if err != nil {
		return 0
	}
	return disk
}

// dataDiskMounts are the class's data disks that have a mount path, as the user data mounts them.
func dataDiskMounts(spec *v1.LinodeNodeClassSpec) []bootstrap.Mount {
	var mounts []bootstrap.Mount
	for i, slot := range dataDiskSlots(spec) {
		if disk := spec.DataDisks[i]; disk.MountPath != nil {
			mounts = append(mounts, bootstrap.Mount{Device: "/dev/" + slot, Path: *disk.MountPath, Filesystem: filesystemOf(disk)})
		}
	}
	return mounts
}

func filesystemOf(disk v1.DataDisk) string {
	return lo.FromPtrOr(disk.Filesystem, string(linodego.FilesystemExt4))
}

// validateDisks returns what the class's disks ask that no node can have, for the NodeClass's
// Ready condition: mount paths cloud-init cannot take, or that name one directory two ways. The
// CRD's rules refuse the rest (a raw disk with a mount path, a data disk labelled as the boot
// disk, paths written the same).
func validateDisks(spec *v1.LinodeNodeClassSpec) (reason, message string) {
	mountedAt := map[string]string{}
	for _, disk := range spec.DataDisks {
		if disk.MountPath == nil {
			continue
		}
		if err := bootstrap.ValidateMountPath(*disk.MountPath); err != nil {
			return ReasonUnsupported, fmt.Sprintf("dataDisks[%s].mountPath: %s", disk.Label, err)
		}
		clean := path.Clean(*disk.MountPath)
		if other, taken := mountedAt[clean]; taken {
			return ReasonUnsupported, fmt.Sprintf("dataDisks[%s] and dataDisks[%s] are both mounted at %s", other, disk.Label, clean)
		}
		mountedAt[clean] = disk.Label
	}
	return "", ""
}

// finishLaunch takes the node's Linode through the steps after its create, from wherever an
// earlier attempt stopped, and boots it. A Linode that has booted is done: its launch ended with
// the boot. One still provisioning, or busy with a disk, is an error to retry: Karpenter calls
// Create again, which finds the Linode and goes on. A Linode left powered off is booted even if
// the class no longer asks for the steps: nothing else would start it.
func (p *Provider) finishLaunch(ctx context.Context, nodeClass *v1.LinodeNodeClass, node *nodeprovider.Node) error {
	spec, linodeID := &nodeClass.Spec, node.InstanceID
	if node.Status != string(linodego.InstanceOffline) && node.Status != string(linodego.InstanceProvisioning) {
		return nil
	}
	in, err := p.api.GetInstance(ctx, linodeID)
	if err != nil {
		return fmt.Errorf("reading Linode %d to finish its launch: %w", linodeID, err)
	}
	switch in.Status {
	case linodego.InstanceOffline:
	case linodego.InstanceProvisioning:
		if !needsFinishing(spec) {
			// Created to boot by itself, unless the class changed since; a Linode that then stays
			// off is replaced by the OfflineController.
			return nil
		}
		return fmt.Errorf("Linode %d is provisioning; its disks are added once it has", linodeID)
	default:
		return nil
	}
	disks, err := p.api.ListInstanceDisks(ctx, linodeID, nil)
	if err != nil {
		return fmt.Errorf("listing the disks of Linode %d: %w", linodeID, err)
	}
	configs, err := p.api.ListInstanceConfigs(ctx, linodeID, nil)
	if err != nil {
		return fmt.Errorf("listing the configuration profiles of Linode %d: %w", linodeID, err)
	}
	if len(configs) == 0 || configs[0].Devices == nil || configs[0].Devices.SDA == nil {
		return fmt.Errorf("Linode %d has no boot profile with a boot disk to add its disks to", linodeID)
	}
	boot := configs[0]
	devices, moved := *boot.Devices, false
	for i, slot := range dataDiskSlots(spec) {
		want := spec.DataDisks[i]
		disk, found := lo.Find(disks, func(d linodego.InstanceDisk) bool { return d.Label == want.Label })
		if !found {
			created, err := p.api.CreateInstanceDisk(ctx, linodeID, linodego.InstanceDiskCreateOptions{
				Label: want.Label, Size: int(want.SizeMB), Filesystem: filesystemOf(want),
			})
			if err != nil {
				return stepError(err, node, fmt.Sprintf("creating data disk %s", want.Label))
			}
			log.FromContext(ctx).WithValues("linode-id", linodeID, "disk", want.Label, "disk-id", created.ID).V(1).Info("created data disk")
			disk = *created
		}
		moved = setSlot(&devices, slot, disk.ID) || moved
	}
	if label := spec.RootDiskLabel; label != nil {
		rootID := boot.Devices.SDA.DiskID
		root, found := lo.Find(disks, func(d linodego.InstanceDisk) bool { return d.ID == rootID })
		if !found || root.Label != *label {
			if _, err := p.api.UpdateInstanceDisk(ctx, linodeID, rootID, linodego.InstanceDiskUpdateOptions{Label: *label}); err != nil {
				return stepError(err, node, "labelling the boot disk "+*label)
			}
		}
	}
	if moved {
		// The whole map, the slots Linode filled included: the API replaces the profile's devices.
		if _, err := p.api.UpdateInstanceConfig(ctx, linodeID, boot.ID, linode.ConfigUpdateOptions{Devices: &devices}); err != nil {
			return stepError(err, node, "adding the data disks to the boot profile")
		}
	}
	if err := p.api.BootInstance(ctx, linodeID, boot.ID); err != nil {
		return stepError(err, node, "booting it")
	}
	log.FromContext(ctx).WithValues("linode-id", linodeID, "data-disks", len(spec.DataDisks)).V(1).Info("booted Linode with its disks")
	return nil
}

// setSlot puts the disk in the profile's slot, one of sdb to sdh, and reports whether the slot
// held something else.
func setSlot(devices *linodego.InstanceConfigDeviceMap, slot string, diskID int) bool {
	target := map[string]**linodego.InstanceConfigDevice{
		"sdb": &devices.SDB, "sdc": &devices.SDC, "sdd": &devices.SDD, "sde": &devices.SDE, "sdf": &devices.SDF, "sdg": &devices.SDG, "sdh": &devices.SDH,
	}[slot]
	if *target != nil && (*target).DiskID == diskID && (*target).VolumeID == 0 {
		return false
	}
	*target = &linodego.InstanceConfigDevice{DiskID: diskID}
	return true
}

// stepError classifies a failed step. Linode refusing it means the class asks for what the plan or
// Linode cannot give: like a refused create, the class is marked rejected until its spec changes,
// and the powered-off Linode is left to garbage collection. Anything else ("Linode busy.", rate
// limits, a lost answer) is retried with the next Create.
func stepError(err error, node *nodeprovider.Node, step string) error {
	wrapped := fmt.Errorf("%s on Linode %d: %w", step, node.InstanceID, err)
	if linode.IsInvalidRequest(err) {
		return nodeprovider.NewInvalidLaunchError(wrapped, node.InstanceType, linode.Reason(err))
	}
	return wrapped
}
