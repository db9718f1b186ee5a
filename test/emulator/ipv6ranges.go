package emulator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ipv6Range is an IPv6 range routed to a Linode's SLAAC address: added with POST
// /networking/ipv6/ranges or asked for by a public Linode interface ("/64", "/56").
type ipv6Range struct {
	// Address is the range's first address, without its prefix length: the range's id in paths.
	Address  string
	Prefix   int
	Region   string
	LinodeID int
}

func (r *ipv6Range) String() string { return r.Address + "/" + strconv.Itoa(r.Prefix) }

// newIPv6Range routes a new range of the prefix length to the Linode. Ranges come out of the
// documentation prefix, apart from the Linodes' SLAAC addresses (nextIPv6).
func (e *Emulator) newIPv6Range(in *instance, prefix int) *ipv6Range {
	n := e.st.nextID("ipv6Range")
	r := &ipv6Range{Address: fmt.Sprintf("2001:db8:%x::", n), Prefix: prefix, Region: in.Region, LinodeID: in.ID}
	e.st.ipv6Ranges[r.Address] = r
	return r
}

// allocateIPv6Range serves a public interface's request for a range ("/64" or "/56") and
// returns the range with its prefix length, as the interface shows it.
func (e *Emulator) allocateIPv6Range(in *instance, requested string) string {
	prefix, _ := strconv.Atoi(requested[1:])
	return e.newIPv6Range(in, prefix).String()
}

// rangesOf are the ranges routed to the Linode, oldest first.
func (e *Emulator) rangesOf(linodeID int) []*ipv6Range {
	return valuesWhere(e.st.ipv6Ranges, func(r *ipv6Range) bool { return r.LinodeID == linodeID })
}

type ipv6RangeWire struct {
	Range       string `json:"range"`
	Prefix      int    `json:"prefix"`
	Region      string `json:"region"`
	RouteTarget string `json:"route_target"`
}

type ipv6RangeDetailWire struct {
	Range   string `json:"range"`
	Prefix  int    `json:"prefix"`
	Region  string `json:"region"`
	IsBGP   bool   `json:"is_bgp"`
	Linodes []int  `json:"linodes"`
}

func (e *Emulator) ipv6RangeToWire(r *ipv6Range) ipv6RangeWire {
	w := ipv6RangeWire{Range: r.Address, Prefix: r.Prefix, Region: r.Region}
	if in, ok := e.st.instances[r.LinodeID]; ok {
		w.RouteTarget = in.slaacAddress()
	}
	return w
}

func (e *Emulator) listIPv6Ranges(*http.Request) (any, *apiError) {
	items := []ipv6RangeWire{}
	for _, key := range sortedKeys(e.st.ipv6Ranges) {
		items = append(items, e.ipv6RangeToWire(e.st.ipv6Ranges[key]))
	}
	return mustList(newList(items, ipv6RangeWire{}))
}

func (e *Emulator) lookupIPv6Range(r *http.Request) (*ipv6Range, *apiError) {
	address, _, _ := strings.Cut(r.PathValue("range"), "/")
	return byKey(e.st.ipv6Ranges, address)
}

func ipv6RangeDetail(found *ipv6Range) ipv6RangeDetailWire {
	return ipv6RangeDetailWire{Range: found.Address, Prefix: found.Prefix, Region: found.Region, Linodes: []int{found.LinodeID}}
}

// createIPv6Range routes a new range to a Linode named by id or by its SLAAC address.
func (e *Emulator) createIPv6Range(r *http.Request) (any, *apiError) {
	var req struct {
		LinodeID     int    `json:"linode_id"`
		RouteTarget  string `json:"route_target"`
		PrefixLength int    `json:"prefix_length"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.PrefixLength != 56 && req.PrefixLength != 64 {
		return nil, errInvalid("prefix_length", "Must be one of 56, 64")
	}
	var target *instance
	switch {
	case req.LinodeID != 0:
		if target = e.st.instances[req.LinodeID]; target == nil {
			return nil, errInvalid("linode_id", "Linode not found")
		}
	case req.RouteTarget != "":
		for _, id := range sortedKeys(e.st.instances) {
			if in := e.st.instances[id]; in.slaacAddress() == req.RouteTarget {
				target = in
			}
		}
		if target == nil {
			return nil, errInvalid("route_target", "Must be the SLAAC address of one of your Linodes")
		}
	default:
		return nil, errInvalid("linode_id", "A linode_id or a route_target is required")
	}
	created := e.newIPv6Range(target, req.PrefixLength)
	return struct {
		Range       string `json:"range"`
		RouteTarget string `json:"route_target"`
	}{created.String(), target.slaacAddress()}, nil
}

func (e *Emulator) deleteIPv6Range(r *http.Request) (any, *apiError) {
	found, err := e.lookupIPv6Range(r)
	if err != nil {
		return nil, err
	}
	delete(e.st.ipv6Ranges, found.Address)
	for _, in := range e.st.instances {
		for _, iface := range in.Interfaces {
			if iface.Public != nil {
				iface.Public.IPv6Ranges = slices.DeleteFunc(iface.Public.IPv6Ranges, func(r string) bool { return r == found.String() })
			}
		}
	}
	return emptyObject{}, nil
}
