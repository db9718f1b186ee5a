package instancetype

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linode/linodego"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// unsupportedClasses are the plan classes a mode cannot launch. LKE answers 400 "The Linode type
// g6-nanode-1 is currently not supported by LKE" for every Nanode; instance mode launches any plan.
var unsupportedClasses = map[mode.Mode]sets.Set[linodego.LinodeTypeClass]{
	mode.LKE: sets.New(linodego.ClassNanode),
}

// requiredCapabilities are the region capabilities a plan class needs; Linode refuses to launch
// the class in a region without it.
var requiredCapabilities = map[linodego.LinodeTypeClass]string{
	linodego.ClassGPU: "GPU Linodes",
	"premium":         "Premium Plans",
}

// catalogue is what Linode sells in the cluster's region, as read at readAt.
type catalogue struct {
	// seq changes with every successful read, so memoised instance types know they are stale.
	seq    uint64
	readAt time.Time
	plans  []*plan
}

// plan is a Linode plan with everything the provider derives from the catalogue about it.
type plan struct {
	linodego.LinodeType
	// price is the hourly price in the cluster's region.
	price float64
	// unavailableReason says why the plan cannot launch in the region; empty when it can.
	unavailableReason string
	generation        string
	gpuName           string
}

// readCatalogue reads plans, the region's capabilities and its plan availability.
func readCatalogue(ctx context.Context, api linode.CatalogueAPI, regionID string, mode mode.Mode) (*catalogue, error) {
	types, err := api.ListTypes(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing plans: %w", err)
	}
	regions, err := api.ListRegions(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing regions: %w", err)
	}
	regionIndex := slices.IndexFunc(regions, func(r linodego.Region) bool { return r.ID == regionID })
	if regionIndex < 0 {
		return nil, fmt.Errorf("region %q is not in Linode's region list", regionID)
	}
	region := regions[regionIndex]
	availability, err := api.ListRegionsAvailability(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing plan availability: %w", err)
	}
	soldOut := sets.New[string]()
	for _, a := range availability {
		if a.Region == regionID && !a.Available {
			soldOut.Insert(a.Plan)
		}
	}

	cat := &catalogue{readAt: time.Now()}
	seen := sets.New[string]()
	for _, t := range types {
		// The API has listed a plan twice; the first answer is as good as the second.
		if seen.Has(t.ID) || unsupportedClasses[mode].Has(t.Class) {
			continue
		}
		seen.Insert(t.ID)
		cat.plans = append(cat.plans, &plan{
			LinodeType:        t,
			price:             regionalPrice(t, regionID),
			unavailableReason: unavailableReason(t, region, soldOut),
			generation:        generation(t.ID),
			gpuName:           gpuName(t),
		})
	}
	if len(cat.plans) == 0 {
		return nil, fmt.Errorf("the API listed no plan that %s mode can launch", mode)
	}
	return cat, nil
}

// regionalPrice is the plan's hourly price in the region: its region_prices entry, else the list
// price. Prices travel as float32; formatting them at float32 precision recovers the decimal the
// API sent (0.018, not 0.017999999225139618).
func regionalPrice(t linodego.LinodeType, regionID string) float64 {
	hourly := float32(0)
	if t.Price != nil {
		hourly = t.Price.Hourly
	}
	if i := slices.IndexFunc(t.RegionPrices, func(p linodego.LinodeRegionPrice) bool { return p.ID == regionID }); i >= 0 {
		hourly = t.RegionPrices[i].Hourly
	}
	price, _ := strconv.ParseFloat(strconv.FormatFloat(float64(hourly), 'f', -1, 32), 64)
	return price
}

func unavailableReason(t linodego.LinodeType, region linodego.Region, soldOut sets.Set[string]) string {
	if capability, ok := requiredCapabilities[t.Class]; ok && !slices.Contains(region.Capabilities, capability) {
		return fmt.Sprintf("region %s lacks the %q capability", region.ID, capability)
	}
	if soldOut.Has(t.ID) {
		return fmt.Sprintf("unavailable in %s per /regions/availability", region.ID)
	}
	return ""
}

var generationPattern = regexp.MustCompile(`^g(\d+)-`)

// generation is the plan generation from the id prefix: "g6-standard-2" is generation 6.
func generation(id string) string {
	if m := generationPattern.FindStringSubmatch(id); m != nil {
		return m[1]
	}
	return ""
}

var gpuCountWord = regexp.MustCompile(`^x\d+$`)

// gpuName is the GPU model a plan's label names, lower-cased for use as a label value:
// "Dedicated 32GB + RTX6000 GPU x1" has "rtx6000". Labels that name no model give "".
func gpuName(t linodego.LinodeType) string {
	if t.GPUs == 0 {
		return ""
	}
	_, accelerator, found := strings.Cut(t.Label, "+ ")
	if !found {
		return ""
	}
	var words []string
	for _, word := range strings.Fields(accelerator) {
		if strings.EqualFold(word, "GPU") || gpuCountWord.MatchString(word) {
			break
		}
		words = append(words, strings.ToLower(word))
	}
	return strings.Join(words, "-")
}
