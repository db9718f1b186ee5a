package emulator

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

// catalogue.json is the emulator's own copy of Linode's read-only catalogue:
// regions with capabilities, plan types with region prices and add-ons,
// per-region plan availability, LKE types and versions, and public images.
// It was derived from real API answers so that the emulator works without
// any recordings on disk.
//
//go:embed catalogue.json
var catalogueJSON []byte

// Region capabilities the emulator enforces.
const (
	capKubernetes           = "Kubernetes"
	capKubernetesEnterprise = "Kubernetes Enterprise"
	capGPU                  = "GPU Linodes"
	capPremium              = "Premium Plans"
	capMetadata             = "Metadata"
	capVPCs                 = "VPCs"
	capPlacementGroup       = "Placement Group"
	capCloudFirewall        = "Cloud Firewall"
)

// LKE tiers.
const (
	tierStandard   = "standard"
	tierEnterprise = "enterprise"
)

type region struct {
	ID           string   `json:"id"`
	Capabilities []string `json:"capabilities"`
	SiteType     string   `json:"site_type"`
}

func (r region) has(capability string) bool { return slices.Contains(r.Capabilities, capability) }

type plan struct {
	ID       string `json:"id"`
	Class    string `json:"class"`
	Memory   int    `json:"memory"`
	Disk     int    `json:"disk"`
	Transfer int    `json:"transfer"`
	VCPUs    int    `json:"vcpus"`
	GPUs     int    `json:"gpus"`
}

// requiredCapability is the region capability a plan class needs, if any.
func (p plan) requiredCapability() string {
	switch p.Class {
	case "gpu":
		return capGPU
	case "premium":
		return capPremium
	}
	return ""
}

type availabilityEntry struct {
	Region    string `json:"region"`
	Plan      string `json:"plan"`
	Available bool   `json:"available"`
}

type catalogue struct {
	regions      listResult
	regionIDs    []string // in the API's order
	regionRaw    map[string]json.RawMessage
	regionByID   map[string]region
	types        listResult
	typeRaw      map[string]json.RawMessage
	typeByID     map[string]plan
	images       listResult
	imageRaw     map[string]json.RawMessage
	lkeTypes     listResult
	lkeVersions  map[string][]string
	availability []availabilityEntry
}

type catalogueFile struct {
	Regions      []json.RawMessage   `json:"regions"`
	Types        []json.RawMessage   `json:"types"`
	Availability []availabilityEntry `json:"availability"`
	LKETypes     []json.RawMessage   `json:"lke_types"`
	Images       []json.RawMessage   `json:"images"`
	LKEVersions  map[string][]string `json:"lke_versions"`
}

func loadCatalogue() (*catalogue, error) {
	var f catalogueFile
	if err := json.Unmarshal(catalogueJSON, &f); err != nil {
		return nil, fmt.Errorf("catalogue.json: %w", err)
	}
	c := &catalogue{
		regionRaw:    map[string]json.RawMessage{},
		regionByID:   map[string]region{},
		typeRaw:      map[string]json.RawMessage{},
		typeByID:     map[string]plan{},
		imageRaw:     map[string]json.RawMessage{},
		lkeVersions:  f.LKEVersions,
		availability: f.Availability,
	}
	var err error
	if c.regions, err = indexRaw(f.Regions, func(raw json.RawMessage) (string, error) {
		var r region
		err := json.Unmarshal(raw, &r)
		c.regionByID[r.ID], c.regionRaw[r.ID] = r, raw
		c.regionIDs = append(c.regionIDs, r.ID)
		return r.ID, err
	}); err != nil {
		return nil, err
	}
	if c.types, err = indexRaw(f.Types, func(raw json.RawMessage) (string, error) {
		var p plan
		err := json.Unmarshal(raw, &p)
		c.typeByID[p.ID], c.typeRaw[p.ID] = p, raw
		return p.ID, err
	}); err != nil {
		return nil, err
	}
	if c.images, err = indexRaw(f.Images, func(raw json.RawMessage) (string, error) {
		var img struct {
			ID string `json:"id"`
		}
		err := json.Unmarshal(raw, &img)
		c.imageRaw[img.ID] = raw
		return img.ID, err
	}); err != nil {
		return nil, err
	}
	if c.lkeTypes, err = indexRaw(f.LKETypes, func(json.RawMessage) (string, error) { return "", nil }); err != nil {
		return nil, err
	}
	return c, nil
}

// indexRaw turns catalogue objects into a listResult whose filterable fields
// are the union of the objects' keys, calling index on each object.
func indexRaw(items []json.RawMessage, index func(json.RawMessage) (string, error)) (listResult, error) {
	out := listResult{items: items, fields: map[string]bool{}}
	for _, raw := range items {
		if _, err := index(raw); err != nil {
			return out, fmt.Errorf("catalogue.json: %w", err)
		}
		keys := map[string]json.RawMessage{}
		if err := json.Unmarshal(raw, &keys); err != nil {
			return out, fmt.Errorf("catalogue.json: %w", err)
		}
		for k := range keys {
			out.fields[k] = true
		}
	}
	return out, nil
}

// removeCapabilities takes capabilities away from a region, in what the API answers and in what
// the emulator validates against.
func (c *catalogue) removeCapabilities(regionID string, capabilities []string) error {
	r, ok := c.regionByID[regionID]
	if !ok {
		return fmt.Errorf("no region %q in the catalogue", regionID)
	}
	r.Capabilities = slices.DeleteFunc(slices.Clone(r.Capabilities), func(capability string) bool { return slices.Contains(capabilities, capability) })
	fields := map[string]any{}
	if err := json.Unmarshal(c.regionRaw[regionID], &fields); err != nil {
		return err
	}
	fields["capabilities"] = r.Capabilities
	raw, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	c.regionByID[regionID], c.regionRaw[regionID] = r, raw
	items := slices.Clone(c.regions.items)
	for i, item := range items {
		var entry struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(item, &entry); err == nil && entry.ID == regionID {
			items[i] = raw
		}
	}
	c.regions.items = items
	return nil
}

// latestLKEVersion is the newest version of a tier (the catalogue lists
// versions newest first, as the API does).
func (c *catalogue) latestLKEVersion(tier string) string {
	if v := c.lkeVersions[tier]; len(v) > 0 {
		return v[0]
	}
	return ""
}
