package emulator

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Images the account uploads (POST /images/upload, then a PUT of the disk image to the URL it
// answers), changes, replicates to other regions and deletes. The upload URL is the emulator's
// own, signed by a token in its path as Linode's object storage URLs are by their query.

const imageUploadPath = "/_emulator/image-uploads/"

type imageUploadRequest struct {
	Region      string    `json:"region"`
	Label       string    `json:"label"`
	Description string    `json:"description"`
	CloudInit   bool      `json:"cloud_init"`
	Tags        *[]string `json:"tags"`
}

type imageUploadWire struct {
	UploadTo string           `json:"upload_to"`
	Image    privateImageWire `json:"image"`
}

func validateImageLabel(label string) *apiError {
	if len(label) < 1 || len(label) > 50 {
		return errInvalid("label", "Length must be 1-50 characters")
	}
	return nil
}

// addPrivateImage creates an image of the account, stored in one region, captured or uploaded.
func (e *Emulator) addPrivateImage(label, description, regionID, status string, cloudInit bool, tags *[]string) *privateImage {
	img := &privateImage{
		image:   image{ID: "private/" + strconv.Itoa(e.st.nextID("image")), Label: label, Capabilities: []string{}},
		Created: e.clock.Now(), Description: description, Status: status,
		Regions: []*imageRegion{{Region: regionID, Status: status}},
	}
	if cloudInit {
		img.Capabilities = append(img.Capabilities, imageCapabilityCloudInit)
	}
	if tags != nil {
		img.Tags = slices.Sorted(slices.Values(*tags))
	}
	e.st.images[img.ID] = img
	return img
}

func (e *Emulator) createImageUpload(r *http.Request) (any, *apiError) {
	var req imageUploadRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := validateImageLabel(req.Label); err != nil {
		return nil, err
	}
	if err := validateOptionalTags("tags", req.Tags); err != nil {
		return nil, err
	}
	if _, err := e.validateRegion("region", req.Region, ""); err != nil {
		return nil, err
	}
	img := e.addPrivateImage(req.Label, req.Description, req.Region, imagePendingUpload, req.CloudInit, req.Tags)
	img.uploadToken = e.st.hex(32)
	return imageUploadWire{UploadTo: e.URL() + imageUploadPath + img.uploadToken, Image: img.toWire()}, nil
}

// receiveImageUpload takes the disk image for a pending upload: the image becomes available in
// its region, its size the upload's in MiB.
func (e *Emulator) receiveImageUpload(w http.ResponseWriter, r *http.Request) {
	size, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		writeError(w, errInvalid("", "Unable to read the upload"))
		return
	}
	received := false
	e.writing(func() {
		for _, img := range e.st.images {
			if img.uploadToken == "" || img.uploadToken != r.PathValue("token") {
				continue
			}
			const mebibyte = 1 << 20
			img.Size, img.Status, img.uploadToken = int(max(1, (size+mebibyte-1)/mebibyte)), imageAvailable, ""
			for _, region := range img.Regions {
				region.Status = imageAvailable
			}
			received = true
			return
		}
	})
	if !received {
		writeError(w, errStatus(http.StatusForbidden, "The upload URL is not valid"))
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (e *Emulator) lookupPrivateImage(r *http.Request) (*privateImage, *apiError) {
	return byKey(e.st.images, r.PathValue("imageId"))
}

type imageUpdateRequest struct {
	Label       *string   `json:"label"`
	Description *string   `json:"description"`
	Tags        *[]string `json:"tags"`
}

func (req *imageUpdateRequest) validate() *apiError {
	if req.Label != nil {
		if err := validateImageLabel(*req.Label); err != nil {
			return err
		}
	}
	return validateOptionalTags("tags", req.Tags)
}

func (e *Emulator) updateImage(img *privateImage, req imageUpdateRequest) (any, *apiError) {
	setIfGiven(&img.Label, req.Label)
	setIfGiven(&img.Description, req.Description)
	if req.Tags != nil {
		img.Tags = slices.Sorted(slices.Values(*req.Tags))
	}
	return img.toWire(), nil
}

type replicateImageRequest struct {
	Regions []string `json:"regions"`
}

func (req *replicateImageRequest) validate() *apiError {
	if len(req.Regions) == 0 {
		return errInvalid("regions", "At least one region is required")
	}
	return nil
}

// replicateImage stores an available image in exactly the regions named: new ones are "pending
// replication" for the time a Linode takes to provision, regions left out lose their copy.
func (e *Emulator) replicateImage(img *privateImage, req replicateImageRequest) (any, *apiError) {
	if img.Status != imageAvailable {
		return nil, errInvalid("", "Only an available image can be replicated")
	}
	for _, id := range req.Regions {
		if _, err := e.validateRegion("regions", id, ""); err != nil {
			return nil, err
		}
	}
	now := e.clock.Now()
	var regions []*imageRegion
	for _, id := range req.Regions {
		i := slices.IndexFunc(img.Regions, func(stored *imageRegion) bool { return stored.Region == id })
		if i >= 0 {
			regions = append(regions, img.Regions[i])
			continue
		}
		copied := &imageRegion{Region: id, Status: imagePendingReplication}
		e.st.at(now.Add(e.cfg.delays.Provisioning), func(time.Time) { copied.Status = imageAvailable })
		regions = append(regions, copied)
	}
	img.Regions = regions
	return img.toWire(), nil
}

func (e *Emulator) deleteImage(img *privateImage) { delete(e.st.images, img.ID) }
