package instancetype

import (
	"path"
	"strings"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// DefaultSwapMB is the swap disk Linode makes when a create gives no swap_size.
const DefaultSwapMB = 512

// kubeletRootDir is where the kubelet keeps pods' ephemeral storage: the filesystem that holds it
// is what a node reports as its ephemeral-storage capacity.
const kubeletRootDir = "/var/lib/kubelet"

// DiskNeedMB is how much of a plan's disk a node of the class takes in instance mode: the boot
// disk of rootDiskSizeMB, the swap disk and the data disks. It is 0 without rootDiskSizeMB: the
// boot disk then takes whatever the plan has, which fits every plan.
func DiskNeedMB(spec *v1.LinodeNodeClassSpec) int {
	if spec.RootDiskSizeMB == nil {
		return 0
	}
	need := int(*spec.RootDiskSizeMB) + int(lo.FromPtrOr(spec.SwapSizeMB, DefaultSwapMB))
	for _, disk := range spec.DataDisks {
		need += int(disk.SizeMB)
	}
	return need
}

// diskLayout is what a class's disks change about the instance types of its plans.
type diskLayout struct {
	// needMB rules out the plans with less disk (DiskNeedMB).
	needMB int
	// nodeFSMB is the size of the disk that holds the kubelet's root directory; 0 when that is the
	// boot disk taking the plan's whole disk.
	nodeFSMB int
}

// layoutOf is the class's disk layout; in LKE mode, where LKE lays out the disks, there is none.
func layoutOf(spec *v1.LinodeNodeClassSpec, m mode.Mode) diskLayout {
	if m != mode.Instance {
		return diskLayout{}
	}
	layout := diskLayout{needMB: DiskNeedMB(spec), nodeFSMB: int(lo.FromPtr(spec.RootDiskSizeMB))}
	deepest := ""
	for _, disk := range spec.DataDisks {
		if disk.MountPath == nil {
			continue
		}
		mount := path.Clean(*disk.MountPath)
		if (mount == kubeletRootDir || strings.HasPrefix(kubeletRootDir, mount+"/")) && len(mount) > len(deepest) {
			deepest, layout.nodeFSMB = mount, int(disk.SizeMB)
		}
	}
	return layout
}
