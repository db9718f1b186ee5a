package emulator

import (
	"encoding/json"
	"fmt"
	"slices"

	snapshot "github.com/linode/karpenter-provider-linode/pkg/catalogue"
)

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
	lkeTypeRaw   map[string]json.RawMessage
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
	if err := json.Unmarshal(snapshot.JSON(), &f); err != nil {
		return nil, fmt.Errorf("catalogue.json: %w", err)
	}
	c := &catalogue{
		regions:     listResult{fields: map[string]bool{}},
		regionRaw:   map[string]json.RawMessage{},
		regionByID:  map[string]region{},
		types:       listResult{fields: map[string]bool{}},
		typeRaw:     map[string]json.RawMessage{},
		typeByID:    map[string]plan{},
		images:      listResult{fields: map[string]bool{}},
		imageRaw:    map[string]json.RawMessage{},
		lkeTypes:    listResult{fields: map[string]bool{}},
		lkeTypeRaw:  map[string]json.RawMessage{},
		lkeVersions: map[string][]string{},
	}
	if err := c.add(f); err != nil {
		return nil, fmt.Errorf("catalogue.json: %w", err)
	}
	return c, nil
}

// add puts the regions, plans, images, LKE types and versions of f that the catalogue does not
// have yet after those it has, and f's availability for region and plan pairs it does not list.
// What the catalogue has already stays as it is.
func (c *catalogue) add(f catalogueFile) error {
	for _, raw := range f.Regions {
		var r region
		added, err := addNew(&c.regions, c.regionRaw, raw, &r)
		if err != nil {
			return fmt.Errorf("region: %w", err)
		}
		if added {
			c.regionByID[r.ID] = r
			c.regionIDs = append(c.regionIDs, r.ID)
		}
	}
	for _, raw := range f.Types {
		var p plan
		added, err := addNew(&c.types, c.typeRaw, raw, &p)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if added {
			c.typeByID[p.ID] = p
		}
	}
	for _, raw := range f.Images {
		if _, err := addNew(&c.images, c.imageRaw, raw, &struct{}{}); err != nil {
			return fmt.Errorf("image: %w", err)
		}
	}
	for _, raw := range f.LKETypes {
		if _, err := addNew(&c.lkeTypes, c.lkeTypeRaw, raw, &struct{}{}); err != nil {
			return fmt.Errorf("LKE type: %w", err)
		}
	}
	for _, a := range f.Availability {
		if !slices.ContainsFunc(c.availability, func(known availabilityEntry) bool { return known.Region == a.Region && known.Plan == a.Plan }) {
			c.availability = append(c.availability, a)
		}
	}
	for tier, versions := range f.LKEVersions {
		for _, v := range versions {
			if !slices.Contains(c.lkeVersions[tier], v) {
				c.lkeVersions[tier] = append(c.lkeVersions[tier], v)
			}
		}
	}
	return nil
}

// addNew appends a catalogue object to list and to raws, by its id, unless raws has that id
// already, and decodes it into into when it does add it.
func addNew(list *listResult, raws map[string]json.RawMessage, raw json.RawMessage, into any) (bool, error) {
	var object struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &object); err != nil {
		return false, err
	}
	if _, known := raws[object.ID]; known {
		return false, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return false, err
	}
	for k := range keys {
		// X-Filter may refer to any top-level key of the collection's objects.
		list.fields[k] = true
	}
	list.items = append(list.items, raw)
	raws[object.ID] = raw
	return true, nil
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
