package bootstrap_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
)

// mountsOf is the provider's part's bootcmd and mounts.
func mountsOf(t *testing.T, out rendered) (bootcmd, fstab [][]string) {
	t.Helper()
	var doc struct {
		BootCmd [][]string `json:"bootcmd"`
		Mounts  [][]string `json:"mounts"`
	}
	if err := yaml.Unmarshal([]byte(out.parts[len(out.parts)-1].body), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.BootCmd, doc.Mounts
}

// TestDataDisksAreMountedBeforeTheRuntimeAndKubelet: the disks are mounted by bootcmd, which
// cloud-init runs before it writes files (the kubelet's configuration would be hidden under a
// disk mounted at /var/lib/kubelet afterwards), a directory's disk before those inside it; fstab
// mounts them at later boots, and containerd and kubelet require them.
func TestDataDisksAreMountedBeforeTheRuntimeAndKubelet(t *testing.T) {
	opts := options()
	opts.Mounts = []bootstrap.Mount{
		{Device: "/dev/sdc", Path: "/var/lib/containerd", Filesystem: "ext4"},
		{Device: "/dev/sdd", Path: "/var/lib/kubelet/", Filesystem: "ext3"},
		{Device: "/dev/sde", Path: "/var/lib", Filesystem: "ext4"},
	}
	out := render(t, opts)
	bootcmd, fstab := mountsOf(t, out)
	wantFstab := [][]string{
		{"/dev/sde", "/var/lib", "ext4", "defaults,nofail", "0", "2"},
		{"/dev/sdc", "/var/lib/containerd", "ext4", "defaults,nofail", "0", "2"},
		{"/dev/sdd", "/var/lib/kubelet", "ext3", "defaults,nofail", "0", "2"},
	}
	if !slices.EqualFunc(fstab, wantFstab, slices.Equal) {
		t.Errorf("mounts %q, want %q", fstab, wantFstab)
	}
	if len(bootcmd) != 3 || !slices.Equal(bootcmd[0][len(bootcmd[0])-3:], []string{"/var/lib", "ext4", "/dev/sde"}) ||
		!slices.Equal(bootcmd[2][len(bootcmd[2])-3:], []string{"/var/lib/kubelet", "ext3", "/dev/sdd"}) {
		t.Errorf("bootcmd %q mounts the disks out of order", bootcmd)
	}
	for _, dropIn := range []string{bootstrap.PathContainerdMountsDropIn, bootstrap.PathKubeletMountsDropIn} {
		if want := "[Unit]\nRequiresMountsFor=/var/lib /var/lib/containerd /var/lib/kubelet\n"; out.files[dropIn] != want {
			t.Errorf("%s is %q, want %q", dropIn, out.files[dropIn], want)
		}
	}

	without := render(t, options())
	if bootcmd, fstab := mountsOf(t, without); bootcmd != nil || fstab != nil {
		t.Errorf("a node without data disks mounts %q, %q", bootcmd, fstab)
	}
	if _, ok := without.files[bootstrap.PathContainerdMountsDropIn]; ok {
		t.Error("a node without data disks holds containerd for mounts")
	}
}

// TestMountCommandMountsOnceAtEveryBoot runs the bootcmd of a disk with stand-ins for mount and
// mountpoint: it makes the directory and mounts the disk at the first boot, and leaves it at a
// later boot, where fstab mounted it already.
func TestMountCommandMountsOnceAtEveryBoot(t *testing.T) {
	target := filepath.Join(t.TempDir(), "containerd")
	opts := options()
	opts.Mounts = []bootstrap.Mount{{Device: "/dev/sdc", Path: target, Filesystem: "ext4"}}
	bootcmd, _ := mountsOf(t, render(t, opts))
	if len(bootcmd) != 1 {
		t.Fatalf("bootcmd %q", bootcmd)
	}
	boot := func(mounted bool) string {
		bin, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
		status := "1"
		if mounted {
			status = "0"
		}
		stubs := map[string]string{
			"mount":      "#!/bin/sh\necho \"mount $*\" >> " + calls + "\n",
			"mountpoint": "#!/bin/sh\nexit " + status + "\n",
		}
		for name, stub := range stubs {
			if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bootcmd[0][0], bootcmd[0][1:]...)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bootcmd failed: %v\n%s", err, output)
		}
		got, _ := os.ReadFile(calls)
		return string(got)
	}
	if calls := boot(false); calls != "mount -t ext4 /dev/sdc "+target+"\n" {
		t.Errorf("first boot ran %q", calls)
	}
	if info, err := os.Stat(target); err != nil || !info.IsDir() {
		t.Errorf("the mount point was not made: %v", err)
	}
	if calls := boot(true); calls != "" {
		t.Errorf("a later boot mounted again: %q", calls)
	}
}

func TestMountsThatCannotBeMadeAreRefused(t *testing.T) {
	for name, mounts := range map[string][]bootstrap.Mount{
		"the root":                {{Device: "/dev/sdc", Path: "/", Filesystem: "ext4"}},
		"a Jinja expression":      {{Device: "/dev/sdc", Path: "/data/{{ v1.region }}", Filesystem: "ext4"}},
		"a relative path":         {{Device: "/dev/sdc", Path: "data", Filesystem: "ext4"}},
		"no device":               {{Path: "/data", Filesystem: "ext4"}},
		"two disks on one path":   {{Device: "/dev/sdc", Path: "/data", Filesystem: "ext4"}, {Device: "/dev/sdd", Path: "/data/", Filesystem: "ext4"}},
		"no filesystem (raw)":     {{Device: "/dev/sdc", Path: "/data"}},
		"a path with a specifier": {{Device: "/dev/sdc", Path: "/data/%i", Filesystem: "ext4"}},
	} {
		opts := options()
		opts.Mounts = mounts
		if _, err := opts.Render(); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

// TestMountsCountTowardsLinodesLimit: the mounts are part of the user data Linode limits.
func TestMountsCountTowardsLinodesLimit(t *testing.T) {
	opts := options()
	padding := "#cloud-config\n# "
	opts.UserData = &padding
	raw, err := opts.Render()
	if err != nil {
		t.Fatal(err)
	}
	padding += strings.Repeat("x", bootstrap.MaxUserDataBytes-len(raw))
	if raw, err = opts.Render(); err != nil || len(raw) != bootstrap.MaxUserDataBytes {
		t.Fatalf("user data of exactly the limit: %d bytes, %v", len(raw), err)
	}
	opts.Mounts = []bootstrap.Mount{{Device: "/dev/sdc", Path: "/var/lib/containerd", Filesystem: "ext4"}}
	if _, err := opts.Render(); !errors.Is(err, bootstrap.ErrUserDataTooLarge) {
		t.Errorf("user data over the limit with its mounts: %v", err)
	}
}
