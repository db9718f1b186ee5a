package emulator

import (
	"fmt"
	"slices"
	"time"
)

// deployRequest is the part of POST /linode/instances that deploys an image onto the new Linode:
// credentials, the configuration profile's network interfaces, and the boot disk's layout.
type deployRequest struct {
	RootPass        string   `json:"root_pass"`
	AuthorizedKeys  []string `json:"authorized_keys"`
	AuthorizedUsers []string `json:"authorized_users"`
	BackupsEnabled  bool     `json:"backups_enabled"`
	SwapSize        *int     `json:"swap_size"`
	// Kernel is the kernel the configuration profile boots, instead of GRUB 2.
	Kernel *string `json:"kernel"`
	// BootSize is the size of the image's disk, in MiB; the rest of the plan's disk that swap
	// does not take is left free for disks created later. Unset, the image's disk takes it all.
	BootSize *int `json:"boot_size"`
	// Interfaces are the configuration profile's, decoded from the create's "interfaces" when
	// its interface generation is legacy_config (decodeCreateInterfaces).
	Interfaces []configInterfaceRequest `json:"-"`
}

// deployment is what the emulator keeps of a Linode's deployment. The root password is not
// kept: like the API, the emulator never shows it again, so it has no reason to hold it.
type deployment struct {
	AuthorizedKeys  []string
	AuthorizedUsers []string
	BackupsEnabled  bool
	Configs         []*instanceConfig
	// Disks are the disks deploying the image made: the image's and swap.
	Disks []*instanceDisk
}

// instanceDisk is a disk of a Linode.
type instanceDisk struct {
	ID         int
	Label      string
	Filesystem string
	Size       int // MiB
	Created    time.Time
}

// defaultSwapSize is the swap disk a deployment makes unless swap_size says otherwise, in MiB.
const defaultSwapSize = 512

// minBootSize is the smallest boot_size the emulator deploys an image onto, in MiB: its public
// images are no larger. Linode's own minimum is the image's size.
const minBootSize = 1024

// swapSize is the swap disk a create asks for.
func swapSize(req *instanceCreateRequest) int {
	if req.SwapSize != nil {
		return *req.SwapSize
	}
	return defaultSwapSize
}

// Limits the API documents for credentials.
const (
	minRootPassLength = 7
	maxRootPassLength = 128
)

// validateDeploy checks the deployment fields of a create. An image needs a way in (a root
// password, authorized keys or authorized users, as linodego documents), and user data needs an
// image with the cloud-init capability: without it, nothing on the Linode reads the Metadata
// service. The reasons' wording could not be confirmed against the live API; the fields are the
// API's.
func (e *Emulator) validateDeploy(req *instanceCreateRequest) *apiError {
	if req.Label != "" && slices.ContainsFunc(sortedKeys(e.st.instances), func(id int) bool { return e.st.instances[id].Label == req.Label }) {
		return errInvalid("label", "Label must be unique among your Linodes")
	}
	if req.RootPass != "" && (len(req.RootPass) < minRootPassLength || len(req.RootPass) > maxRootPassLength) {
		return errInvalid("root_pass", fmt.Sprintf("Length must be %d-%d characters", minRootPassLength, maxRootPassLength))
	}
	if req.Image == "" {
		if req.BootSize != nil {
			return errInvalid("boot_size", "boot_size needs an image to deploy")
		}
		return e.validateInterfaces("interfaces", req.Region, req.Interfaces)
	}
	img, ok := e.imageByID(req.Image)
	if !ok {
		return errInvalid("image", "No image exists with id "+req.Image)
	}
	if req.RootPass == "" && len(req.AuthorizedKeys) == 0 && len(req.AuthorizedUsers) == 0 {
		return errInvalid("root_pass", "A root password, authorized keys or authorized users are required when deploying an image")
	}
	if req.Metadata != nil && req.Metadata.UserData != "" && !slices.Contains(img.Capabilities, imageCapabilityCloudInit) {
		return errInvalid("metadata.user_data", fmt.Sprintf("Image %s does not support cloud-init; user data needs an image with the %s capability", req.Image, imageCapabilityCloudInit))
	}
	if req.SwapSize != nil && (*req.SwapSize < 0 || *req.SwapSize > e.cat.typeByID[req.Type].Disk/2) {
		return errInvalid("swap_size", "Swap size must be at least 0 and at most half the plan's disk")
	}
	if req.BootSize != nil && (*req.BootSize < minBootSize || *req.BootSize+swapSize(req) > e.cat.typeByID[req.Type].Disk) {
		return errInvalid("boot_size", fmt.Sprintf("Boot size must be at least %d MB, and with the swap disk fit in the plan's %d MB", minBootSize, e.cat.typeByID[req.Type].Disk))
	}
	return e.validateInterfaces("interfaces", req.Region, req.Interfaces)
}

// deploy records the deployment of a new Linode. A Linode deployed from an image gets the
// configuration profile the API creates for it, with the requested interfaces; one created
// without an image has no profile until one is created.
func (e *Emulator) deploy(in *instance, req *instanceCreateRequest, now time.Time) {
	in.Deployment = deployment{
		AuthorizedKeys:  slices.Clone(req.AuthorizedKeys),
		AuthorizedUsers: slices.Clone(req.AuthorizedUsers),
		BackupsEnabled:  req.BackupsEnabled,
	}
	if req.Image == "" {
		return
	}
	img, _ := e.imageByID(req.Image)
	disk := e.st.nextID("disk")
	cfg := e.newConfig("My "+img.Label+" Disk Profile", now)
	cfg.Kernel = "linode/grub2"
	setIfGiven(&cfg.Kernel, req.Kernel)
	cfg.Devices["sda"] = &configDevice{DiskID: disk}
	cfg.Devices["sdb"] = &configDevice{DiskID: disk + 1}
	e.st.ids["disk"] = disk + 1
	swap := swapSize(req)
	boot := e.cat.typeByID[in.Type].Disk - swap
	setIfGiven(&boot, req.BootSize)
	in.Deployment.Disks = []*instanceDisk{
		{ID: disk, Label: img.Label + " Disk", Filesystem: "ext4", Size: boot, Created: now},
		{ID: disk + 1, Label: fmt.Sprintf("%d MB Swap Image", swap), Filesystem: "swap", Size: swap, Created: now},
	}
	cfg.Interfaces = e.newInterfaces(req.Interfaces, in.publicIPv4())
	in.Deployment.Configs = append(in.Deployment.Configs, cfg)
}

// bootConfig is the profile a Linode boots with: the first one, or none.
func (in *instance) bootConfig() *instanceConfig {
	if len(in.Deployment.Configs) == 0 {
		return nil
	}
	return in.Deployment.Configs[0]
}
