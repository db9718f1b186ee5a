package instancetype

import (
	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// DefaultSwapMB is the swap disk Linode makes when a create gives no swap_size.
const DefaultSwapMB = 512

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
