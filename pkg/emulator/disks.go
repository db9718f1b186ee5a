package emulator

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// A Linode's disks (GET .../disks) and images captured from one (POST /images). The emulator
// knows the disks a deployment makes; creating, resizing or deleting disks is not emulated.

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

func (e *Emulator) listDisks(r *http.Request) (any, *apiError) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	items := make([]diskWire, 0, len(in.Deployment.Disks))
	for _, d := range in.Deployment.Disks {
		items = append(items, diskToWire(in, d))
	}
	return mustList(newList(items, diskWire{}))
}

func (e *Emulator) getDisk(r *http.Request) (any, *apiError) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	id, convErr := strconv.Atoi(r.PathValue("diskId"))
	i := slices.IndexFunc(in.Deployment.Disks, func(d *instanceDisk) bool { return d.ID == id })
	if convErr != nil || i < 0 {
		return nil, errNotFound()
	}
	return diskToWire(in, in.Deployment.Disks[i]), nil
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

// captureImage makes a private image of a Linode's disk; it is "creating" for the time a Linode
// takes to provision, then available in the Linode's region.
func (e *Emulator) captureImage(r *http.Request) (any, *apiError) {
	var req struct {
		DiskID      int       `json:"disk_id"`
		Label       string    `json:"label"`
		Description string    `json:"description"`
		CloudInit   bool      `json:"cloud_init"`
		Tags        *[]string `json:"tags"`
	}
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
	e.mu.Lock()
	defer e.mu.Unlock()
	in, d := e.diskByID(req.DiskID)
	if d == nil {
		return nil, errInvalid("disk_id", "Disk not found")
	}
	if d.Filesystem == "swap" {
		return nil, errInvalid("disk_id", "A swap disk cannot be imaged")
	}
	now := e.clock.Now()
	img := &privateImage{
		image:   image{ID: "private/" + strconv.Itoa(e.st.nextID("image")), Label: req.Label, Capabilities: []string{}},
		Created: now, Size: d.Size, Description: req.Description, Status: imageCreating,
	}
	if img.Label == "" {
		img.Label = d.Label
	}
	if req.CloudInit {
		img.Capabilities = append(img.Capabilities, imageCapabilityCloudInit)
	}
	if req.Tags != nil {
		img.Tags = slices.Sorted(slices.Values(*req.Tags))
	}
	img.Regions = []*imageRegion{{Region: in.Region, Status: imageCreating}}
	e.st.images[img.ID] = img
	e.st.at(now.Add(e.cfg.delays.Provisioning), func(at time.Time) {
		img.Status, img.Regions[0].Status = imageAvailable, imageAvailable
	})
	return img.toWire(), nil
}
