package emulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// imageCapabilityCloudInit marks images whose cloud-init reads the Metadata service.
const imageCapabilityCloudInit = "cloud-init"

// image is what the emulator needs to know of an image, public or private.
type image struct {
	ID           string   `json:"id"`
	Label        string   `json:"label"`
	Vendor       string   `json:"vendor"`
	Deprecated   bool     `json:"deprecated"`
	Capabilities []string `json:"capabilities"`
}

// privateImage is an image of the account (private/<id>), which AddImage or an upload creates.
type privateImage struct {
	image
	Created     time.Time
	Size        int
	Description string
	Tags        []string
	// Status is "available", or "pending_upload" until its upload arrives.
	Status  string
	Regions []*imageRegion
	// uploadToken names the image's upload URL, as a signed object storage URL does.
	uploadToken string
}

// imageRegion is a region an image is stored in.
type imageRegion struct {
	Region string `json:"region"`
	Status string `json:"status"`
}

// Image statuses, of an image and of its copy in a region.
const (
	imageAvailable          = "available"
	imageCreating           = "creating"
	imagePendingUpload      = "pending_upload"
	imagePendingReplication = "pending replication"
)

// ImageSpec describes a private image for AddImage.
type ImageSpec struct {
	Label string
	// Created orders images: an image selector picks the newest match.
	Created time.Time
	// CloudInit gives the image the cloud-init capability, which user data needs.
	CloudInit  bool
	Deprecated bool
}

// AddImage creates a private image, as capturing a Linode's disk or uploading one would, and
// returns its id, "private/<n>".
func (e *Emulator) AddImage(spec ImageSpec) (id string) {
	e.writing(func() {
		img := &privateImage{
			image: image{
				ID: "private/" + strconv.Itoa(e.st.nextID("image")), Label: spec.Label,
				Deprecated: spec.Deprecated, Capabilities: []string{},
			},
			Created: spec.Created, Size: 2500, Status: imageAvailable,
		}
		if spec.CloudInit {
			img.Capabilities = append(img.Capabilities, imageCapabilityCloudInit)
		}
		e.st.images[img.ID] = img
		id = img.ID
	})
	return id
}

// privateImageWire is a private image as GET /images/{id} shows it: no vendor, not public.
type privateImageWire struct {
	ID           string           `json:"id"`
	Label        string           `json:"label"`
	Deprecated   bool             `json:"deprecated"`
	Size         int              `json:"size"`
	TotalSize    int              `json:"total_size"`
	Created      apiTime          `json:"created"`
	Updated      apiTime          `json:"updated"`
	Description  string           `json:"description"`
	CreatedBy    string           `json:"created_by"`
	Type         string           `json:"type"`
	Tags         []string         `json:"tags"`
	IsPublic     bool             `json:"is_public"`
	IsShared     bool             `json:"is_shared"`
	Vendor       *string          `json:"vendor"`
	Expiry       *apiTime         `json:"expiry"`
	EOL          *apiTime         `json:"eol"`
	Regions      []any            `json:"regions"`
	Status       string           `json:"status"`
	Capabilities []string         `json:"capabilities"`
	ImageSharing imageSharingWire `json:"image_sharing"`
}

// imageSharingWire is how a private image is shared: with no share group, in the emulator.
type imageSharingWire struct {
	SharedWith struct {
		SharegroupCount   int    `json:"sharegroup_count"`
		SharegroupListURL string `json:"sharegroup_list_url"`
	} `json:"shared_with"`
	SharedBy *struct{} `json:"shared_by"`
}

func (img *privateImage) toWire() privateImageWire {
	w := privateImageWire{
		ID: img.ID, Label: img.Label, Deprecated: img.Deprecated, Size: img.Size, TotalSize: img.Size * max(1, len(img.Regions)),
		Created: apiTime(img.Created), Updated: apiTime(img.Created), Description: img.Description, CreatedBy: "emulator", Type: "manual",
		Tags: nonNil(slices.Clone(img.Tags)), Regions: []any{}, Status: img.Status, Capabilities: slices.Clone(img.Capabilities),
	}
	for _, r := range img.Regions {
		w.Regions = append(w.Regions, *r)
	}
	w.ImageSharing.SharedWith.SharegroupListURL = "/images/" + img.ID + "/sharegroups"
	return w
}

// imageByID finds a public or private image.
func (e *Emulator) imageByID(id string) (image, bool) {
	if img, ok := e.st.images[id]; ok {
		return img.image, true
	}
	raw, ok := e.cat.imageRaw[id]
	if !ok {
		return image{}, false
	}
	var img image
	if err := json.Unmarshal(raw, &img); err != nil {
		return image{}, false
	}
	return img, true
}

func (e *Emulator) listImages(*http.Request) (any, *apiError) {
	if len(e.st.images) == 0 {
		return e.cat.images, nil
	}
	list := listResult{items: slices.Clone(e.cat.images.items), fields: e.cat.images.fields}
	for _, id := range sortedKeys(e.st.images) {
		raw, err := json.Marshal(e.st.images[id].toWire())
		if err != nil {
			return nil, errStatus(http.StatusInternalServerError, err.Error())
		}
		list.items = append(list.items, raw)
	}
	return list, nil
}

func (e *Emulator) getImage(r *http.Request) (any, *apiError) {
	id := r.PathValue("imageId")
	if img, ok := e.st.images[id]; ok {
		return img.toWire(), nil
	}
	return catalogueEntry(e.cat.imageRaw, id)
}
