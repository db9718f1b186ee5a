package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/catalogue"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// Catalogue is what Linode sells and where, as the API lists it: the plans, the regions with
// their capabilities, and which plans each region has sold out. Its JSON form is the snapshot's
// (pkg/catalogue) ("regions", "types", "availability", "as_of").
type Catalogue struct {
	// AsOf is the day the catalogue was read; for the live API, now.
	AsOf         time.Time                     `json:"-"`
	Regions      []linodego.Region             `json:"regions"`
	Types        []linodego.LinodeType         `json:"types"`
	Availability []linodego.RegionAvailability `json:"availability"`
	// Source says where the catalogue came from, for the report.
	Source string `json:"-"`
}

// BuiltInCatalogue is the catalogue built into the binary: pkg/catalogue's snapshot, read from the real API
// and dated by its "as_of".
func BuiltInCatalogue() (*Catalogue, error) {
	c, err := ParseCatalogue(catalogue.JSON())
	if err != nil {
		return nil, fmt.Errorf("the built-in catalogue: %w", err)
	}
	c.Source = "built-in snapshot"
	return c, nil
}

// ParseCatalogue reads a catalogue file: a JSON object with the API's "regions", "types" and
// "availability" lists, and optionally "as_of" (YYYY-MM-DD).
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var file struct {
		Catalogue
		AsOf string `json:"as_of"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	c := file.Catalogue
	if len(c.Types) == 0 || len(c.Regions) == 0 {
		return nil, errors.New(`want a JSON object with the API's "regions" and "types" lists, and "availability"`)
	}
	if file.AsOf != "" {
		asOf, err := time.Parse(time.DateOnly, file.AsOf)
		if err != nil {
			return nil, fmt.Errorf("as_of: %w", err)
		}
		c.AsOf = asOf
	}
	return &c, nil
}

// ReadCatalogue reads the catalogue from the Linode API.
func ReadCatalogue(ctx context.Context, api linode.CatalogueAPI) (*Catalogue, error) {
	c := &Catalogue{AsOf: time.Now(), Source: "the Linode API"}
	var err error
	if c.Types, err = api.ListTypes(ctx, nil); err != nil {
		return nil, fmt.Errorf("listing plans: %w", err)
	}
	if c.Regions, err = api.ListRegions(ctx, nil); err != nil {
		return nil, fmt.Errorf("listing regions: %w", err)
	}
	if c.Availability, err = api.ListRegionsAvailability(ctx, nil); err != nil {
		return nil, fmt.Errorf("listing plan availability: %w", err)
	}
	return c, nil
}

// Age is how old the catalogue is at now, in whole days; -1 when it is undated.
func (c *Catalogue) Age(now time.Time) int {
	if c.AsOf.IsZero() {
		return -1
	}
	return int(now.Sub(c.AsOf).Hours() / 24)
}

// HasRegion says whether the catalogue lists the region.
func (c *Catalogue) HasRegion(region string) bool {
	return slices.ContainsFunc(c.Regions, func(r linodego.Region) bool { return r.ID == region })
}

// Price is the plan's hourly and monthly price in the region (Linode bills by the hour up to the
// monthly price); ok is false for a plan the catalogue does not list.
func (c *Catalogue) Price(plan, region string) (hourly, monthly float64, ok bool) {
	i := slices.IndexFunc(c.Types, func(t linodego.LinodeType) bool { return t.ID == plan })
	if i < 0 {
		return 0, 0, false
	}
	t := c.Types[i]
	var price linodego.LinodePrice
	if t.Price != nil {
		price = *t.Price
	}
	if j := slices.IndexFunc(t.RegionPrices, func(p linodego.LinodeRegionPrice) bool { return p.ID == region }); j >= 0 {
		price = linodego.LinodePrice{Hourly: t.RegionPrices[j].Hourly, Monthly: t.RegionPrices[j].Monthly}
	}
	return decimal(price.Hourly), decimal(price.Monthly), true
}

// decimal is the price the API sent: prices travel as float32, and at float32 precision they are
// the decimals the API sent (0.018, not 0.017999999225139618).
func decimal(price float32) float64 {
	d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(price), 'f', -1, 32), 64)
	return d
}

// api serves the catalogue to the instance type provider as the Linode API would.
type api struct{ *Catalogue }

var _ linode.CatalogueAPI = api{}

var errNotInCatalogue = errors.New("the planner's catalogue holds plans, regions and availability only")

func (a api) ListTypes(context.Context, *linodego.ListOptions) ([]linodego.LinodeType, error) {
	return a.Types, nil
}

func (a api) ListRegions(context.Context, *linodego.ListOptions) ([]linodego.Region, error) {
	return a.Regions, nil
}

func (a api) ListRegionsAvailability(context.Context, *linodego.ListOptions) ([]linodego.RegionAvailability, error) {
	return a.Availability, nil
}

func (a api) GetRegion(_ context.Context, regionID string) (*linodego.Region, error) {
	if i := slices.IndexFunc(a.Regions, func(r linodego.Region) bool { return r.ID == regionID }); i >= 0 {
		return &a.Regions[i], nil
	}
	return nil, fmt.Errorf("region %q is not in the catalogue", regionID)
}

func (a api) ListImages(context.Context, *linodego.ListOptions) ([]linodego.Image, error) {
	return nil, errNotInCatalogue
}

func (a api) GetImage(context.Context, string) (*linodego.Image, error) {
	return nil, errNotInCatalogue
}

func (a api) ListLKEVersions(context.Context, *linodego.ListOptions) ([]linodego.LKEVersion, error) {
	return nil, errNotInCatalogue
}
