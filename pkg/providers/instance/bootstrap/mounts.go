package bootstrap

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Drop-ins that hold the container runtime and kubelet until the data disks are mounted.
const (
	PathContainerdMountsDropIn = "/etc/systemd/system/containerd.service.d/20-karpenter-linode-mounts.conf"
	PathKubeletMountsDropIn    = "/etc/systemd/system/kubelet.service.d/21-karpenter-linode-mounts.conf"
)

// Mount is a data disk the node mounts: Linode created it with its filesystem, so there is
// nothing to format.
type Mount struct {
	// Device is the disk's block device, from its slot in the Linode's boot profile: /dev/sdc for
	// the disk in sdc.
	Device string
	// Path is where the disk is mounted.
	Path string
	// Filesystem is the disk's filesystem, ext4 or ext3.
	Filesystem string
}

// mountPathCharacters keep a mount path the same in a Jinja template, fstab, a shell argument
// and a systemd unit, none of which then needs escaping.
var mountPathCharacters = regexp.MustCompile(`^/[A-Za-z0-9._/-]*$`)

// ValidateMountPath accepts an absolute path of letters, digits and . _ - / other than the root.
func ValidateMountPath(mountPath string) error {
	if !mountPathCharacters.MatchString(mountPath) {
		return fmt.Errorf("mount path %q must be absolute and hold only letters, digits and . _ - /", mountPath)
	}
	if path.Clean(mountPath) == "/" {
		return fmt.Errorf("mount path %q is the root filesystem", mountPath)
	}
	return nil
}

func (o Options) validateMounts() error {
	var errs []error
	seen := map[string]bool{}
	for _, m := range o.Mounts {
		if err := ValidateMountPath(m.Path); err != nil {
			errs = append(errs, err)
		}
		if !strings.HasPrefix(m.Device, "/dev/") || m.Filesystem == "" {
			errs = append(errs, fmt.Errorf("the disk mounted at %s has no device or filesystem", m.Path))
		}
		if seen[path.Clean(m.Path)] {
			errs = append(errs, fmt.Errorf("two disks are mounted at %s", m.Path))
		}
		seen[path.Clean(m.Path)] = true
	}
	return errors.Join(errs...)
}

// sortedMounts are the mounts, a directory's before those inside it.
func (o Options) sortedMounts() []Mount {
	mounts := slices.Clone(o.Mounts)
	for i := range mounts {
		mounts[i].Path = path.Clean(mounts[i].Path)
	}
	slices.SortFunc(mounts, func(a, b Mount) int { return strings.Compare(a.Path, b.Path) })
	return mounts
}

// mountCommands mount the disks at the very start of the first boot (bootcmd), before cloud-init
// writes any file, which a disk mounted later would hide (the kubelet's configuration in
// /var/lib/kubelet), and before the container runtime starts on images that enable it. They run
// at every boot and do nothing once fstab has mounted a disk.
func (o Options) mountCommands() [][]string {
	var commands [][]string
	for _, m := range o.sortedMounts() {
		commands = append(commands, []string{"sh", "-c", `mkdir -p "$1" && { mountpoint -q "$1" || mount -t "$2" "$3" "$1"; }`, "karpenter-linode-mount", m.Path, m.Filesystem, m.Device})
	}
	return commands
}

// fstab are cloud-init's mounts entries, which put the disks in /etc/fstab for later boots.
// nofail lets a node whose disk is gone still boot, for its logs; the runtime and kubelet do not
// start without it (mountsDropIn).
func (o Options) fstab() [][]string {
	var entries [][]string
	for _, m := range o.sortedMounts() {
		entries = append(entries, []string{m.Device, m.Path, m.Filesystem, "defaults,nofail", "0", "2"})
	}
	return entries
}

// mountsDropIn makes a unit require the mounted disks, and wait for them, at every boot.
func (o Options) mountsDropIn() string {
	paths := make([]string, 0, len(o.Mounts))
	for _, m := range o.sortedMounts() {
		paths = append(paths, m.Path)
	}
	return "[Unit]\nRequiresMountsFor=" + strings.Join(paths, " ") + "\n"
}
