package emulator

import (
	"net/http"
	"slices"
)

// reservedIP is a public IPv4 address the account keeps whether or not a Linode uses it. A
// Linode created with it ("ipv4": [address]) uses it as its public address; deleting the Linode
// leaves it reserved, and releasing it leaves the Linode its address, no longer reserved.
type reservedIP struct {
	Address string
	Region  string
	Tags    []string
}

// reservedIPToWire shows a reserved address, which ipAddress always knows.
func (e *Emulator) reservedIPToWire(ip *reservedIP) ipAddressWire {
	w, _ := e.ipAddress(ip.Address)
	return w
}

func (e *Emulator) listReservedIPs(*http.Request) (any, *apiError) {
	items := make([]ipAddressWire, 0, len(e.st.reservedIPs))
	for _, address := range sortedKeys(e.st.reservedIPs) {
		items = append(items, e.reservedIPToWire(e.st.reservedIPs[address]))
	}
	return mustList(newList(items, ipAddressWire{}))
}

func (e *Emulator) reserveIP(r *http.Request) (any, *apiError) {
	var req struct {
		Region string   `json:"region"`
		Tags   []string `json:"tags"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := validateTags("tags", req.Tags); err != nil {
		return nil, err
	}
	reg, err := e.validateRegion("region", req.Region, "")
	if err != nil {
		return nil, err
	}
	ip := &reservedIP{Address: e.st.nextIPv4(), Region: reg.ID, Tags: slices.Clone(req.Tags)}
	e.st.reservedIPs[ip.Address] = ip
	return e.reservedIPToWire(ip), nil
}

func (e *Emulator) lookupReservedIP(r *http.Request) (*reservedIP, *apiError) {
	return byKey(e.st.reservedIPs, r.PathValue("address"))
}

type reservedIPUpdateRequest struct {
	Tags *[]string `json:"tags"`
}

func (req *reservedIPUpdateRequest) validate() *apiError {
	return validateOptionalTags("tags", req.Tags)
}

// updateReservedIP changes an address's tags, the one thing about it a user sets.
func (e *Emulator) updateReservedIP(ip *reservedIP, req reservedIPUpdateRequest) (any, *apiError) {
	if req.Tags != nil {
		ip.Tags = slices.Clone(*req.Tags)
	}
	return e.reservedIPToWire(ip), nil
}

func (e *Emulator) releaseReservedIP(ip *reservedIP) { delete(e.st.reservedIPs, ip.Address) }

// validateReservedIPv4 checks the "ipv4" of a Linode create request for region: one reserved
// address of the account's, in the region, that no Linode uses.
func (e *Emulator) validateReservedIPv4(addresses []string, regionID string) *apiError {
	if len(addresses) != 1 {
		return errInvalid("ipv4", "Must provide a single valid reserved ipv4 address")
	}
	ip, ok := e.st.reservedIPs[addresses[0]]
	if !ok {
		return errInvalid("ipv4", "Must provide a single valid reserved ipv4 address")
	}
	if ip.Region != regionID {
		return errInvalid("ipv4", "Address must be in the same region as the Linode")
	}
	if e.holderOf(ip.Address) != nil {
		return errInvalid("ipv4", "Address must be currently unassigned.")
	}
	return nil
}

// reservedIPTypeWire is what reserving an address costs.
type reservedIPTypeWire struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Price struct {
		Hourly  float64  `json:"hourly"`
		Monthly *float64 `json:"monthly"`
	} `json:"price"`
	RegionPrices []any `json:"region_prices"`
	Transfer     int   `json:"transfer"`
}

// reservedIPv4Hourly is Linode's price of a reserved IPv4 address, billed by the hour only.
const reservedIPv4Hourly = 0.0068

func (e *Emulator) listReservedIPTypes(*http.Request) (any, *apiError) {
	t := reservedIPTypeWire{ID: "reserved-ipv4", Label: "Reserved IPv4", RegionPrices: []any{}}
	t.Price.Hourly = reservedIPv4Hourly
	return mustList(newList([]reservedIPTypeWire{t}, reservedIPTypeWire{}))
}
