package emulator

import (
	"encoding/json"
	"net/http"
)

func (e *Emulator) listRegions(*http.Request) (any, *apiError) { return e.cat.regions, nil }

func (e *Emulator) getRegion(r *http.Request) (any, *apiError) {
	return catalogueEntry(e.cat.regionRaw, r.PathValue("regionId"))
}

// catalogueEntry answers a region, plan or public image of the catalogue as recorded from the API.
func catalogueEntry(entries map[string]json.RawMessage, id string) (any, *apiError) {
	raw, ok := entries[id]
	if !ok {
		return nil, errNotFound()
	}
	return rawJSON(raw), nil
}

func (e *Emulator) listTypes(*http.Request) (any, *apiError) { return e.cat.types, nil }

func (e *Emulator) getType(r *http.Request) (any, *apiError) {
	return catalogueEntry(e.cat.typeRaw, r.PathValue("typeId"))
}

func (e *Emulator) listLKETypes(*http.Request) (any, *apiError) { return e.cat.lkeTypes, nil }

type lkeVersionWire struct {
	ID string `json:"id"`
}

// listLKEVersions lists the standard tier's versions, as /lke/versions does.
func (e *Emulator) listLKEVersions(*http.Request) (any, *apiError) {
	var items []lkeVersionWire
	for _, v := range e.cat.lkeVersions[tierStandard] {
		items = append(items, lkeVersionWire{ID: v})
	}
	return mustList(newList(items, lkeVersionWire{}))
}

func (e *Emulator) getLKEVersion(r *http.Request) (any, *apiError) {
	for _, v := range e.cat.lkeVersions[tierStandard] {
		if v == r.PathValue("version") {
			return lkeVersionWire{ID: v}, nil
		}
	}
	return nil, errNotFound()
}

// availability is the catalogue's availability list with capacity applied:
// a plan is available unless its region has no capacity left for it. Plans
// given a capacity with SetCapacity are listed even if the catalogue does
// not mention them.
func (e *Emulator) availability(regionID string) []availabilityEntry {
	listed := map[capacityKey]bool{}
	var out []availabilityEntry
	add := func(key capacityKey) {
		if listed[key] || (regionID != "" && key.region != regionID) {
			return
		}
		listed[key] = true
		left, limited := e.st.capacity[key]
		out = append(out, availabilityEntry{Region: key.region, Plan: key.plan, Available: !limited || left > 0})
	}
	for _, a := range e.cat.availability {
		add(capacityKey{a.Region, a.Plan})
	}
	for _, key := range sortedCapacityKeys(e.st.capacity) {
		add(key)
	}
	return out
}

func (e *Emulator) listAvailability(*http.Request) (any, *apiError) {
	return mustList(newList(e.availability(""), availabilityEntry{}))
}

// getRegionAvailability answers a plain JSON array, not a page.
func (e *Emulator) getRegionAvailability(r *http.Request) (any, *apiError) {
	regionID := r.PathValue("regionId")
	if _, ok := e.cat.regionByID[regionID]; !ok {
		return nil, errNotFound()
	}
	entries := e.availability(regionID)
	raw, err := json.Marshal(nonNil(entries))
	if err != nil {
		return nil, errStatus(http.StatusInternalServerError, err.Error())
	}
	return rawJSON(raw), nil
}

// vpcAvailabilityWire is whether a region offers VPCs; no IPv6 prefix is offered, as for the
// accounts linodego's recordings come from.
type vpcAvailabilityWire struct {
	Region                     string `json:"region"`
	Available                  bool   `json:"available"`
	AvailableIPv6PrefixLengths []int  `json:"available_ipv6_prefix_lengths"`
}

func (e *Emulator) vpcAvailability(regionID string) vpcAvailabilityWire {
	return vpcAvailabilityWire{
		Region: regionID, Available: e.cat.regionByID[regionID].has(capVPCs), AvailableIPv6PrefixLengths: []int{},
	}
}

func (e *Emulator) listVPCAvailability(*http.Request) (any, *apiError) {
	var items []vpcAvailabilityWire
	for _, id := range e.cat.regionIDs {
		items = append(items, e.vpcAvailability(id))
	}
	return mustList(newList(items, vpcAvailabilityWire{}))
}

func (e *Emulator) getRegionVPCAvailability(r *http.Request) (any, *apiError) {
	regionID := r.PathValue("regionId")
	if _, ok := e.cat.regionByID[regionID]; !ok {
		return nil, errNotFound()
	}
	return e.vpcAvailability(regionID), nil
}
