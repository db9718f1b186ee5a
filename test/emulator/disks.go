package emulator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Linode's disks (GET, POST .../disks, PUT .../disks/{diskId}) and images captured from one
// (POST /images). A deployment makes the image's disk and swap; more disks are created blank in
// the plan's space they leave free. Resizing, deleting and deploying an image onto a disk are not
// emulated.

type diskWire struct {
	ID             int     `json:"id"`
	Status         string  `json:"status"`
	Label          string  `json:"label"`
	Created        apiTime `json:"created"`
	Updated        apiTime `json:"updated"`
	Filesystem     string  `json:"filesystem"`
	Size           int     `json:"size"`
	DiskEncryption string  `json:"disk_encryption"`
}

// diskToWire shows a disk "not ready" while its Linode provisions, as the API does.
func diskToWire(in *instance, d *instanceDisk) diskWire {
	status := "ready"
	if in.Status == statusProvisioning {
		status = "not ready"
	}
	return diskWire{
		ID: d.ID, Status: status, Label: d.Label, Created: apiTime(d.Created), Updated: apiTime(d.Created),
		Filesystem: d.Filesystem, Size: d.Size, DiskEncryption: in.DiskEncryption,
	}
}

// disksToWire is the Linode's disks as listed.
func disksToWire(in *instance) []diskWire {
	return toWires(in.Deployment.Disks, func(d *instanceDisk) diskWire { return diskToWire(in, d) })
}

func (e *Emulator) getDisk(r *http.Request) (any, *apiError) {
	in, disk, err := e.lookupDisk(r)
	if err != nil {
		return nil, err
	}
	return diskToWire(in, disk), nil
}

// Disk limits the API documents (POST /linode/instances/{linodeId}/disks).
const (
	maxDisks           = 50
	maxDiskLabelLength = 48
)

// diskFilesystems are the filesystems a disk can have; ext4 is the default.
var diskFilesystems = []string{"raw", "swap", "ext3", "ext4", "initrd"}

type diskCreateRequest struct {
	Label      string `json:"label"`
	Size       int    `json:"size"`
	Filesystem string `json:"filesystem"`
	Image      string `json:"image"`
}

func (req *diskCreateRequest) validate() *apiError {
	if req.Image != "" {
		return errInvalid("image", "The emulator creates blank disks only")
	}
	if len(req.Label) < 1 || len(req.Label) > maxDiskLabelLength {
		return errInvalid("label", fmt.Sprintf("Length must be 1-%d characters", maxDiskLabelLength))
	}
	if req.Filesystem == "" {
		req.Filesystem = "ext4"
	}
	if !slices.Contains(diskFilesystems, req.Filesystem) {
		return errInvalid("filesystem", "Must be one of "+strings.Join(diskFilesystems, ", "))
	}
	if req.Size < 1 {
		return errInvalid("size", "Size must be at least 1 MB")
	}
	return nil
}

// createDisk adds a blank disk to a Linode, formatted with its filesystem, in the plan's space
// the Linode's disks leave free. Linode refuses disk jobs while the Linode provisions ("Linode
// busy."). The reasons' wording for a disk that does not fit could not be confirmed against the
// live API; the field is the API's.
func (e *Emulator) createDisk(in *instance, req diskCreateRequest) (any, *apiError) {
	if in.Status == statusProvisioning {
		return nil, errBusy()
	}
	if len(in.Deployment.Disks) >= maxDisks {
		return nil, errInvalid("", fmt.Sprintf("A Linode can have at most %d disks", maxDisks))
	}
	if free := e.freeDiskSpace(in); req.Size > free {
		return nil, errInvalid("size", fmt.Sprintf("Not enough free space on this Linode: %d MB are free", free))
	}
	now := e.clock.Now()
	d := &instanceDisk{ID: e.st.nextID("disk"), Label: req.Label, Filesystem: req.Filesystem, Size: req.Size, Created: now}
	in.Deployment.Disks = append(in.Deployment.Disks, d)
	return diskToWire(in, d), nil
}

// freeDiskSpace is the part of the plan's disk the Linode's disks leave free, in MiB.
func (e *Emulator) freeDiskSpace(in *instance) int {
	free := e.cat.typeByID[in.Type].Disk
	for _, d := range in.Deployment.Disks {
		free -= d.Size
	}
	return free
}

type diskUpdateRequest struct {
	Label *string `json:"label"`
}

func (req *diskUpdateRequest) validate() *apiError {
	if req.Label != nil && (len(*req.Label) < 1 || len(*req.Label) > maxDiskLabelLength) {
		return errInvalid("label", fmt.Sprintf("Length must be 1-%d characters", maxDiskLabelLength))
	}
	return nil
}

// updateDisk renames a disk, the one thing PUT .../disks/{diskId} changes.
func (e *Emulator) updateDisk(at found[*instance, *instanceDisk], req diskUpdateRequest) (any, *apiError) {
	in, disk := at.parent, at.child
	setIfGiven(&disk.Label, req.Label)
	return diskToWire(in, disk), nil
}

// lookupDisk finds the Linode and the disk a request's path names; the caller holds e.mu.
func (e *Emulator) lookupDisk(r *http.Request) (*instance, *instanceDisk, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, nil, err
	}
	id, convErr := strconv.Atoi(r.PathValue("diskId"))
	i := slices.IndexFunc(in.Deployment.Disks, func(d *instanceDisk) bool { return d.ID == id })
	if convErr != nil || i < 0 {
		return nil, nil, errNotFound()
	}
	return in, in.Deployment.Disks[i], nil
}

// diskByID finds a disk and its Linode.
func (e *Emulator) diskByID(id int) (*instance, *instanceDisk) {
	for _, linodeID := range sortedKeys(e.st.instances) {
		in := e.st.instances[linodeID]
		for _, d := range in.Deployment.Disks {
			if d.ID == id {
				return in, d
			}
		}
	}
	return nil, nil
}

type imageCaptureRequest struct {
	DiskID      int       `json:"disk_id"`
	Label       string    `json:"label"`
	Description string    `json:"description"`
	CloudInit   bool      `json:"cloud_init"`
	Tags        *[]string `json:"tags"`
}

// captureImage makes a private image of a Linode's disk; it is "creating" for the time a Linode
// takes to provision, then available in the Linode's region.
func (e *Emulator) captureImage(r *http.Request) (any, *apiError) {
	var req imageCaptureRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Label != "" {
		if err := validateImageLabel(req.Label); err != nil {
			return nil, err
		}
	}
	if err := validateOptionalTags("tags", req.Tags); err != nil {
		return nil, err
	}
	in, d := e.diskByID(req.DiskID)
	if d == nil {
		return nil, errInvalid("disk_id", "Disk not found")
	}
	if d.Filesystem == "swap" {
		return nil, errInvalid("disk_id", "A swap disk cannot be imaged")
	}
	label := req.Label
	if label == "" {
		label = d.Label
	}
	img := e.addPrivateImage(label, req.Description, in.Region, imageCreating, req.CloudInit, req.Tags)
	img.Size = d.Size
	e.st.at(e.clock.Now().Add(e.cfg.delays.Provisioning), func(at time.Time) {
		img.Status, img.Regions[0].Status = imageAvailable, imageAvailable
	})
	return img.toWire(), nil
}
