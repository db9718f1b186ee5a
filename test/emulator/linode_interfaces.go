package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Linode Interfaces: a Linode created with "interface_generation": "linode" has its network
// interfaces on itself rather than on a configuration profile, each with its own firewall. The
// wire format follows linodego v1.69.1 (interfaces.go) and Linode's API description of
// /linode/instances/{linodeId}/interfaces; no recording shows them.

// Interface generations of a Linode.
const (
	generationLegacyConfig = "legacy_config"
	generationLinode       = "linode"
)

// addressAuto asks Linode to pick an address (or a range of the size given, for "/n").
const addressAuto = "auto"

type linodeInterface struct {
	ID, Version      int
	MAC              string
	Created, Updated time.Time
	// FirewallID is the interface's firewall, 0 for none.
	FirewallID               int
	FirewallDeviceID         int
	DefaultIPv4, DefaultIPv6 bool
	Public                   *publicInterface
	VPC                      *vpcInterface
	VLAN                     *vlanInterface
}

type publicInterface struct {
	// IPv4 are the interface's addresses, the primary first.
	IPv4 []string
	// IPv6Ranges are the ranges routed to the Linode's SLAAC address.
	IPv6Ranges []string
}

type vpcInterface struct {
	VPCID, SubnetID int
	Address         string
	// NAT1To1 is the public address mapped 1:1 onto Address, "" for none.
	NAT1To1 string
	Ranges  []string
}

type vlanInterface struct {
	Label, IPAMAddress string
}

func (iface *linodeInterface) kind() string {
	switch {
	case iface.Public != nil:
		return purposePublic
	case iface.VPC != nil:
		return purposeVPC
	}
	return purposeVLAN
}

// Requests, as linodego's LinodeInterfaceCreateOptions sends them.

type linodeInterfaceRequest struct {
	FirewallID   *int                    `json:"firewall_id"`
	DefaultRoute *defaultRouteRequest    `json:"default_route"`
	Public       *publicInterfaceRequest `json:"public"`
	VPC          *vpcInterfaceRequest    `json:"vpc"`
	VLAN         *struct {
		VLANLabel   string  `json:"vlan_label"`
		IPAMAddress *string `json:"ipam_address"`
	} `json:"vlan"`
}

type defaultRouteRequest struct {
	IPv4 *bool `json:"ipv4"`
	IPv6 *bool `json:"ipv6"`
}

type rangeRequest struct {
	Range string `json:"range"`
}

type publicInterfaceRequest struct {
	IPv4 *struct {
		Addresses []struct {
			Address *string `json:"address"`
			Primary *bool   `json:"primary"`
		} `json:"addresses"`
	} `json:"ipv4"`
	IPv6 *struct {
		Ranges []rangeRequest `json:"ranges"`
	} `json:"ipv6"`
}

type vpcInterfaceRequest struct {
	SubnetID int                      `json:"subnet_id"`
	IPv4     *vpcInterfaceIPv4Request `json:"ipv4"`
}

type vpcInterfaceIPv4Request struct {
	Addresses []struct {
		Address        *string `json:"address"`
		Primary        *bool   `json:"primary"`
		NAT1To1Address *string `json:"nat_1_1_address"`
	} `json:"addresses"`
	Ranges []rangeRequest `json:"ranges"`
}

// validateLinodeInterfaces checks the interfaces of a new Linode, or one interface added to
// existing ones, for a Linode in region: at most three, one public and one VPC interface at
// most, VLANs on distinct labels, a VPC interface on a subnet of the region with at most one
// address (Linode's primary), a firewall that exists and only on a public or VPC interface.
func (e *Emulator) validateLinodeInterfaces(field, regionID string, existing []*linodeInterface, reqs []linodeInterfaceRequest, offset int) *apiError {
	if len(existing)+len(reqs) > maxInterfaces {
		return errInvalid(field, fmt.Sprintf("A Linode can have at most %d interfaces", maxInterfaces))
	}
	kinds := map[string]bool{}
	vlans := map[string]bool{}
	for _, iface := range existing {
		kinds[iface.kind()] = true
		if iface.VLAN != nil {
			vlans[iface.VLAN.Label] = true
		}
	}
	for i, req := range reqs {
		at := field
		if offset >= 0 {
			at = fmt.Sprintf("%s[%d]", field, offset+i)
		}
		name := func(sub string) string {
			if at == "" {
				return sub
			}
			return at + "." + sub
		}
		kind, set := "", 0
		for k, present := range map[string]bool{purposePublic: req.Public != nil, purposeVPC: req.VPC != nil, purposeVLAN: req.VLAN != nil} {
			if present {
				kind, set = k, set+1
			}
		}
		if set != 1 {
			return errInvalid(at, "Exactly one of public, vpc or vlan must be set")
		}
		switch kind {
		case purposePublic, purposeVPC:
			if kinds[kind] {
				return errInvalid(name(kind), fmt.Sprintf("A Linode can have only one %s interface", kind))
			}
		case purposeVLAN:
			if req.VLAN.VLANLabel == "" {
				return errInvalid(name("vlan.vlan_label"), "A VLAN interface needs a vlan_label")
			}
			if vlans[req.VLAN.VLANLabel] {
				return errInvalid(name("vlan.vlan_label"), "Each VLAN interface must be on a distinct VLAN")
			}
			vlans[req.VLAN.VLANLabel] = true
			if req.FirewallID != nil && *req.FirewallID != 0 {
				return errInvalid(name("firewall_id"), "Firewalls cannot be applied to VLAN interfaces")
			}
			if req.DefaultRoute != nil && (isTrue(req.DefaultRoute.IPv4) || isTrue(req.DefaultRoute.IPv6)) {
				return errInvalid(name("default_route"), "A VLAN interface cannot be the default route")
			}
		}
		kinds[kind] = true
		if req.FirewallID != nil && *req.FirewallID != 0 {
			if err := e.validateFirewall(name("firewall_id"), *req.FirewallID); err != nil {
				return err
			}
		}
		if kind == purposeVPC && req.DefaultRoute != nil && isTrue(req.DefaultRoute.IPv6) {
			return errInvalid(name("default_route.ipv6"), "Only a public interface can be the IPv6 default route")
		}
		if err := e.validatePublicRequest(name("public"), regionID, req.Public); err != nil {
			return err
		}
		if req.VPC != nil {
			if err := e.validateVPCRequest(name("vpc"), regionID, req.VPC.SubnetID, req.VPC.IPv4); err != nil {
				return err
			}
		}
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func (e *Emulator) validatePublicRequest(at, regionID string, req *publicInterfaceRequest) *apiError {
	if req == nil {
		return nil
	}
	if req.IPv4 != nil {
		for i, a := range req.IPv4.Addresses {
			if a.Address == nil || *a.Address == addressAuto {
				continue
			}
			if err := e.validateReservedIPv4([]string{*a.Address}, regionID); err != nil {
				return errInvalid(fmt.Sprintf("%s.ipv4.addresses[%d].address", at, i), err.Errors[0].Reason)
			}
		}
	}
	if req.IPv6 != nil {
		for i, r := range req.IPv6.Ranges {
			if r.Range != "/64" && r.Range != "/56" {
				return errInvalid(fmt.Sprintf("%s.ipv6.ranges[%d].range", at, i), "Must be a prefix length to allocate, /64 or /56")
			}
		}
	}
	return nil
}

// validateVPCRequest checks a VPC interface's subnet and IPv4 configuration.
func (e *Emulator) validateVPCRequest(at, regionID string, subnetID int, ipv4 *vpcInterfaceIPv4Request) *apiError {
	sub, ok := e.st.subnets[subnetID]
	if !ok {
		return errInvalid(at+".subnet_id", "Subnet not found")
	}
	if v := e.st.vpcs[sub.VPCID]; v.Region != regionID {
		return errInvalid(at+".subnet_id", fmt.Sprintf("Subnet %d belongs to a VPC in %s, not %s", sub.ID, v.Region, regionID))
	}
	if ipv4 == nil {
		return nil
	}
	if len(ipv4.Addresses) > 1 {
		return errInvalid(at+".ipv4.addresses", "A VPC interface has one IPv4 address; route more with ranges")
	}
	prefix := netip.MustParsePrefix(sub.IPv4).Masked()
	for i, a := range ipv4.Addresses {
		if a.Address != nil && *a.Address != addressAuto {
			addr, err := netip.ParseAddr(*a.Address)
			if err != nil || !prefix.Contains(addr) {
				return errInvalid(fmt.Sprintf("%s.ipv4.addresses[%d].address", at, i), "Must be an address in the subnet's range "+sub.IPv4)
			}
		}
		if a.NAT1To1Address != nil && *a.NAT1To1Address != addressAuto {
			if err := e.validateReservedIPv4([]string{*a.NAT1To1Address}, regionID); err != nil {
				return errInvalid(fmt.Sprintf("%s.ipv4.addresses[%d].nat_1_1_address", at, i), err.Errors[0].Reason)
			}
		}
	}
	for i, r := range ipv4.Ranges {
		if _, err := e.vpcRangeFor(sub, r.Range, nil); err != nil {
			return errInvalid(fmt.Sprintf("%s.ipv4.ranges[%d].range", at, i), err.Error())
		}
	}
	return nil
}

// vpcRangeFor resolves a requested VPC range: a CIDR inside the subnet, or "/n" for the next
// free block of that size after the subnet's first addresses. taken are the ranges already given.
func (e *Emulator) vpcRangeFor(sub *subnet, requested string, taken []string) (string, error) {
	subnetPrefix := netip.MustParsePrefix(sub.IPv4).Masked()
	if len(requested) > 1 && requested[0] == '/' {
		bits, err := strconv.Atoi(requested[1:])
		if err != nil || bits <= subnetPrefix.Bits() || bits > 32 {
			return "", fmt.Errorf("must be a prefix length longer than the subnet's /%d", subnetPrefix.Bits())
		}
		size := uint32(1) << (32 - bits)
		base := subnetPrefix.Addr().As4()
		start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
		// Skip the first block: the subnet's gateway and the interfaces' own addresses live there.
		for n := start + size; subnetPrefix.Contains(addrOf(n)) && subnetPrefix.Contains(addrOf(n+size-1)); n += size {
			candidate := netip.PrefixFrom(addrOf(n), bits).String()
			if !slices.Contains(taken, candidate) && !e.vpcRangeTaken(sub.ID, candidate) {
				return candidate, nil
			}
		}
		return "", fmt.Errorf("no free %s range left in subnet %s", requested, sub.IPv4)
	}
	p, err := netip.ParsePrefix(requested)
	if err != nil || !p.Addr().Is4() || p.Masked() != p || !subnetPrefix.Contains(p.Addr()) || p.Bits() <= subnetPrefix.Bits() {
		return "", fmt.Errorf("must be a range inside the subnet's %s, or a prefix length such as /28", sub.IPv4)
	}
	return p.String(), nil
}

func addrOf(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// vpcRangeTaken reports whether a Linode interface of the subnet has the range.
func (e *Emulator) vpcRangeTaken(subnetID int, r string) bool {
	for _, in := range e.st.instances {
		for _, a := range in.vpcAttachments() {
			if a.SubnetID == subnetID && slices.Contains(a.Ranges, r) {
				return true
			}
		}
	}
	return false
}

// newLinodeInterfaces builds validated interfaces for a Linode, a public one if none were asked
// for. The Linode's first public
// address (newInstance gave it one) goes to its public interface's first "auto" address, or to
// the 1:1 NAT of its VPC interface when it has no public interface; a Linode with neither has no
// public IPv4 address. Without a default route asked for, the public interface takes both, or
// the VPC interface IPv4's.
func (e *Emulator) newLinodeInterfaces(in *instance, reqs []linodeInterfaceRequest, now time.Time) {
	if len(reqs) == 0 {
		reqs = []linodeInterfaceRequest{{Public: &publicInterfaceRequest{}}}
	}
	spare := in.IPv4
	in.IPv4 = nil
	take := func() string {
		if len(spare) > 0 {
			address := spare[0]
			spare = spare[1:]
			return address
		}
		return e.st.nextIPv4()
	}
	for _, req := range reqs {
		iface := e.buildLinodeInterface(in, req, take, now)
		in.Interfaces = append(in.Interfaces, iface)
	}
	e.chooseDefaultRoutes(in, reqs)
}

// buildLinodeInterface makes one validated interface; take hands out public addresses.
func (e *Emulator) buildLinodeInterface(in *instance, req linodeInterfaceRequest, take func() string, now time.Time) *linodeInterface {
	iface := &linodeInterface{
		ID: e.st.nextID("interface"), Version: 1, Created: now, Updated: now,
		MAC: fmt.Sprintf("22:00:%s:%s:%s:%s", e.st.hex(2), e.st.hex(2), e.st.hex(2), e.st.hex(2)),
	}
	if req.FirewallID != nil && *req.FirewallID != 0 {
		e.putInterfaceBehindFirewall(iface, *req.FirewallID)
	}
	if req.DefaultRoute != nil {
		iface.DefaultIPv4, iface.DefaultIPv6 = isTrue(req.DefaultRoute.IPv4), isTrue(req.DefaultRoute.IPv6)
	}
	switch {
	case req.Public != nil:
		iface.Public = e.buildPublic(in, req.Public, take)
	case req.VPC != nil:
		sub := e.st.subnets[req.VPC.SubnetID]
		iface.VPC = &vpcInterface{VPCID: sub.VPCID, SubnetID: sub.ID}
		e.configureVPCIPv4(in, iface.VPC, req.VPC.IPv4, take)
	default:
		iface.VLAN = &vlanInterface{Label: req.VLAN.VLANLabel}
		setIfGiven(&iface.VLAN.IPAMAddress, req.VLAN.IPAMAddress)
	}
	return iface
}

func (e *Emulator) buildPublic(in *instance, req *publicInterfaceRequest, take func() string) *publicInterface {
	pub := &publicInterface{}
	if req.IPv4 == nil || len(req.IPv4.Addresses) == 0 {
		pub.IPv4 = []string{take()}
	} else {
		for _, a := range req.IPv4.Addresses {
			address := take
			if a.Address != nil && *a.Address != addressAuto {
				chosen := *a.Address
				address = func() string { return chosen }
			}
			if isTrue(a.Primary) {
				pub.IPv4 = append([]string{address()}, pub.IPv4...)
			} else {
				pub.IPv4 = append(pub.IPv4, address())
			}
		}
	}
	in.IPv4 = append(in.IPv4, pub.IPv4...)
	if req.IPv6 != nil {
		for _, r := range req.IPv6.Ranges {
			pub.IPv6Ranges = append(pub.IPv6Ranges, e.allocateIPv6Range(in, r.Range))
		}
	}
	return pub
}

// configureVPCIPv4 gives a VPC interface its address (the next free one of the subnet unless
// one is asked for), its 1:1 NAT and its ranges.
func (e *Emulator) configureVPCIPv4(in *instance, v *vpcInterface, req *vpcInterfaceIPv4Request, take func() string) {
	sub := e.st.subnets[v.SubnetID]
	v.Address, v.NAT1To1, v.Ranges = "", "", nil
	if req != nil && len(req.Addresses) == 1 {
		a := req.Addresses[0]
		if a.Address != nil && *a.Address != addressAuto {
			v.Address = *a.Address
		}
		switch {
		case a.NAT1To1Address == nil:
		case *a.NAT1To1Address == addressAuto:
			v.NAT1To1 = take()
		default:
			v.NAT1To1 = *a.NAT1To1Address
		}
	}
	if v.Address == "" {
		v.Address = e.freeSubnetAddress(sub)
	}
	if v.NAT1To1 != "" {
		in.IPv4 = append(in.IPv4, v.NAT1To1)
	}
	if req != nil {
		for _, r := range req.Ranges {
			got, _ := e.vpcRangeFor(sub, r.Range, v.Ranges)
			v.Ranges = append(v.Ranges, got)
		}
	}
}

// chooseDefaultRoutes applies Linode's defaults when no interface asked for a default route.
func (e *Emulator) chooseDefaultRoutes(in *instance, reqs []linodeInterfaceRequest) {
	if slices.ContainsFunc(reqs, func(r linodeInterfaceRequest) bool { return r.DefaultRoute != nil }) {
		return
	}
	for _, iface := range in.Interfaces {
		if iface.Public != nil {
			iface.DefaultIPv4, iface.DefaultIPv6 = true, true
			return
		}
	}
	for _, iface := range in.Interfaces {
		if iface.VPC != nil {
			iface.DefaultIPv4 = true
			return
		}
	}
}

// Wire format, as linodego's LinodeInterface reads it.

type linodeInterfaceWire struct {
	ID           int                  `json:"id"`
	Version      int                  `json:"version"`
	MACAddress   string               `json:"mac_address"`
	Created      apiTime              `json:"created"`
	Updated      apiTime              `json:"updated"`
	DefaultRoute defaultRouteWire     `json:"default_route"`
	Public       *publicInterfaceWire `json:"public"`
	VPC          *vpcInterfaceWire    `json:"vpc"`
	VLAN         *vlanInterfaceWire   `json:"vlan"`
}

type defaultRouteWire struct {
	IPv4 *bool `json:"ipv4,omitempty"`
	IPv6 *bool `json:"ipv6,omitempty"`
}

type addressWire struct {
	Address string `json:"address"`
	Primary bool   `json:"primary"`
}

type ipv6RangeRouteWire struct {
	Range       string  `json:"range"`
	RouteTarget *string `json:"route_target"`
}

type slaacWire struct {
	Prefix  int    `json:"prefix"`
	Address string `json:"address"`
}

type publicInterfaceWire struct {
	IPv4 struct {
		Addresses []addressWire `json:"addresses"`
		Shared    []any         `json:"shared"`
	} `json:"ipv4"`
	IPv6 struct {
		Ranges []ipv6RangeRouteWire `json:"ranges"`
		Shared []any                `json:"shared"`
		SLAAC  []slaacWire          `json:"slaac"`
	} `json:"ipv6"`
}

type vpcAddressWire struct {
	Address        string  `json:"address"`
	Primary        bool    `json:"primary"`
	NAT1To1Address *string `json:"nat_1_1_address"`
}

type vpcInterfaceWire struct {
	VPCID    int `json:"vpc_id"`
	SubnetID int `json:"subnet_id"`
	IPv4     struct {
		Addresses []vpcAddressWire `json:"addresses"`
		Ranges    []ipv4Range      `json:"ranges"`
	} `json:"ipv4"`
	IPv6 struct {
		SLAAC    []any `json:"slaac"`
		Ranges   []any `json:"ranges"`
		IsPublic *bool `json:"is_public"`
	} `json:"ipv6"`
}

type vlanInterfaceWire struct {
	VLANLabel   string  `json:"vlan_label"`
	IPAMAddress *string `json:"ipam_address"`
}

func (in *instance) linodeInterfaceToWire(iface *linodeInterface) linodeInterfaceWire {
	w := linodeInterfaceWire{
		ID: iface.ID, Version: iface.Version, MACAddress: iface.MAC,
		Created: apiTime(iface.Created), Updated: apiTime(iface.Updated),
	}
	if iface.kind() != purposeVLAN {
		w.DefaultRoute.IPv4 = ptrTo(iface.DefaultIPv4)
	}
	if iface.kind() == purposePublic {
		w.DefaultRoute.IPv6 = ptrTo(iface.DefaultIPv6)
	}
	switch {
	case iface.Public != nil:
		p := &publicInterfaceWire{}
		p.IPv4.Addresses, p.IPv4.Shared = []addressWire{}, []any{}
		for i, address := range iface.Public.IPv4 {
			p.IPv4.Addresses = append(p.IPv4.Addresses, addressWire{Address: address, Primary: i == 0})
		}
		slaac := in.slaacAddress()
		p.IPv6.Ranges, p.IPv6.Shared = []ipv6RangeRouteWire{}, []any{}
		p.IPv6.SLAAC = []slaacWire{{Prefix: 64, Address: slaac}}
		for _, r := range iface.Public.IPv6Ranges {
			p.IPv6.Ranges = append(p.IPv6.Ranges, ipv6RangeRouteWire{Range: r, RouteTarget: ptrTo(slaac)})
		}
		w.Public = p
	case iface.VPC != nil:
		v := &vpcInterfaceWire{VPCID: iface.VPC.VPCID, SubnetID: iface.VPC.SubnetID}
		address := vpcAddressWire{Address: iface.VPC.Address, Primary: true}
		if iface.VPC.NAT1To1 != "" {
			address.NAT1To1Address = ptrTo(iface.VPC.NAT1To1)
		}
		v.IPv4.Addresses, v.IPv4.Ranges = []vpcAddressWire{address}, []ipv4Range{}
		for _, r := range iface.VPC.Ranges {
			v.IPv4.Ranges = append(v.IPv4.Ranges, ipv4Range{Range: r})
		}
		v.IPv6.SLAAC, v.IPv6.Ranges = []any{}, []any{}
		w.VPC = v
	default:
		w.VLAN = &vlanInterfaceWire{VLANLabel: iface.VLAN.Label, IPAMAddress: nonEmpty(iface.VLAN.IPAMAddress)}
	}
	return w
}

// slaacAddress is the Linode's SLAAC address without its prefix length.
func (in *instance) slaacAddress() string {
	address, _, _ := strings.Cut(in.IPv6, "/")
	return address
}

// Handlers.

// lookupLinodeGeneration finds the Linode of the request, which must use Linode Interfaces.
func (e *Emulator) lookupLinodeGeneration(r *http.Request) (*instance, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.InterfaceGeneration != generationLinode {
		return nil, errInvalid("interface_generation", "This Linode uses configuration profile interfaces; Linode interfaces need interface_generation linode")
	}
	return in, nil
}

func (e *Emulator) lookupLinodeInterface(r *http.Request) (*instance, *linodeInterface, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, nil, err
	}
	id, convErr := strconv.Atoi(r.PathValue("interfaceId"))
	if convErr != nil {
		return nil, nil, errNotFound()
	}
	for _, iface := range in.Interfaces {
		if iface.ID == id {
			return in, iface, nil
		}
	}
	return nil, nil, errNotFound()
}

func (e *Emulator) listLinodeInterfaces(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	items := []linodeInterfaceWire{}
	for _, iface := range in.Interfaces {
		items = append(items, in.linodeInterfaceToWire(iface))
	}
	return mustList(newList(items, linodeInterfaceWire{}))
}

func (e *Emulator) getLinodeInterface(r *http.Request) (any, *apiError) {
	in, iface, err := e.lookupLinodeInterface(r)
	if err != nil {
		return nil, err
	}
	return in.linodeInterfaceToWire(iface), nil
}

// errNotPoweredOff is Linode's refusal to change a running Linode's interfaces.
func errNotPoweredOff() *apiError {
	return errStatus(http.StatusBadRequest, "The Linode must be powered off to add, update or delete its interfaces.")
}

func (in *instance) poweredOff() bool { return in.Status == statusOffline }

func (e *Emulator) createLinodeInterface(in *instance, req linodeInterfaceRequest) (any, *apiError) {
	if !in.poweredOff() {
		return nil, errNotPoweredOff()
	}
	if err := e.validateLinodeInterfaces("", in.Region, in.Interfaces, []linodeInterfaceRequest{req}, -1); err != nil {
		return nil, err
	}
	iface := e.buildLinodeInterface(in, req, e.st.nextIPv4, e.clock.Now())
	in.Interfaces = append(in.Interfaces, iface)
	return in.linodeInterfaceToWire(iface), nil
}

type linodeInterfaceUpdateRequest struct {
	DefaultRoute *defaultRouteRequest    `json:"default_route"`
	Public       *publicInterfaceRequest `json:"public"`
	VPC          *struct {
		IPv4 *vpcInterfaceIPv4Request `json:"ipv4"`
	} `json:"vpc"`
}

// updateLinodeInterface changes an interface's default route, its public addresses and IPv6
// ranges, or its VPC address, NAT and ranges; its kind and subnet stay.
func (e *Emulator) updateLinodeInterface(at found[*instance, *linodeInterface], req linodeInterfaceUpdateRequest) (any, *apiError) {
	in, iface := at.parent, at.child
	if !in.poweredOff() {
		return nil, errNotPoweredOff()
	}
	switch {
	case req.Public != nil && iface.Public == nil:
		return nil, errInvalid("public", "The interface is not a public interface")
	case req.VPC != nil && iface.VPC == nil:
		return nil, errInvalid("vpc", "The interface is not a VPC interface")
	case req.DefaultRoute != nil && iface.VLAN != nil:
		return nil, errInvalid("default_route", "A VLAN interface cannot be the default route")
	}
	if err := e.validatePublicRequest("public", in.Region, req.Public); err != nil {
		return nil, err
	}
	if req.VPC != nil {
		if err := e.validateVPCRequest("vpc", in.Region, iface.VPC.SubnetID, req.VPC.IPv4); err != nil {
			return nil, err
		}
	}
	if req.DefaultRoute != nil {
		setIfGiven(&iface.DefaultIPv4, req.DefaultRoute.IPv4)
		setIfGiven(&iface.DefaultIPv6, req.DefaultRoute.IPv6)
	}
	if req.Public != nil {
		e.releaseInterfaceAddresses(in, iface)
		iface.Public = e.buildPublic(in, req.Public, e.st.nextIPv4)
	}
	if req.VPC != nil {
		e.releaseInterfaceAddresses(in, iface)
		e.configureVPCIPv4(in, iface.VPC, req.VPC.IPv4, e.st.nextIPv4)
	}
	iface.Version++
	iface.Updated = e.clock.Now()
	return in.linodeInterfaceToWire(iface), nil
}

// releaseInterfaceAddresses takes the interface's public addresses and IPv6 ranges off the Linode.
func (e *Emulator) releaseInterfaceAddresses(in *instance, iface *linodeInterface) {
	var owned []string
	switch {
	case iface.Public != nil:
		owned = iface.Public.IPv4
		for _, r := range iface.Public.IPv6Ranges {
			address, _, _ := strings.Cut(r, "/")
			delete(e.st.ipv6Ranges, address)
		}
	case iface.VPC != nil && iface.VPC.NAT1To1 != "":
		owned = []string{iface.VPC.NAT1To1}
	}
	in.IPv4 = slices.DeleteFunc(in.IPv4, func(a string) bool { return slices.Contains(owned, a) })
}

func (e *Emulator) deleteLinodeInterface(r *http.Request) (any, *apiError) {
	in, iface, err := e.lookupLinodeInterface(r)
	if err != nil {
		return nil, err
	}
	if !in.poweredOff() {
		return nil, errNotPoweredOff()
	}
	e.releaseInterfaceAddresses(in, iface)
	in.Interfaces = slices.DeleteFunc(in.Interfaces, func(i *linodeInterface) bool { return i == iface })
	return emptyObject{}, nil
}

// listLinodeInterfaceFirewalls lists the interface's firewall, if it has one.
func (e *Emulator) listLinodeInterfaceFirewalls(r *http.Request) (any, *apiError) {
	_, iface, err := e.lookupLinodeInterface(r)
	if err != nil {
		return nil, err
	}
	items := []firewallWire{}
	if f, ok := e.st.firewalls[iface.FirewallID]; ok {
		items = append(items, e.firewallToWire(f))
	}
	return mustList(newList(items, firewallWire{}))
}

type interfaceSettingsWire struct {
	NetworkHelper bool `json:"network_helper"`
	DefaultRoute  struct {
		IPv4InterfaceID          *int  `json:"ipv4_interface_id"`
		IPv4EligibleInterfaceIDs []int `json:"ipv4_eligible_interface_ids"`
		IPv6InterfaceID          *int  `json:"ipv6_interface_id"`
		IPv6EligibleInterfaceIDs []int `json:"ipv6_eligible_interface_ids"`
	} `json:"default_route"`
}

// interfaceSettings shows which interfaces carry the default routes and which could: public
// and VPC interfaces for IPv4, public ones for IPv6.
func (in *instance) interfaceSettings() interfaceSettingsWire {
	w := interfaceSettingsWire{NetworkHelper: in.NetworkHelper}
	w.DefaultRoute.IPv4EligibleInterfaceIDs, w.DefaultRoute.IPv6EligibleInterfaceIDs = []int{}, []int{}
	for _, iface := range in.Interfaces {
		if iface.VLAN != nil {
			continue
		}
		w.DefaultRoute.IPv4EligibleInterfaceIDs = append(w.DefaultRoute.IPv4EligibleInterfaceIDs, iface.ID)
		if iface.DefaultIPv4 {
			w.DefaultRoute.IPv4InterfaceID = ptrTo(iface.ID)
		}
		if iface.Public != nil {
			w.DefaultRoute.IPv6EligibleInterfaceIDs = append(w.DefaultRoute.IPv6EligibleInterfaceIDs, iface.ID)
			if iface.DefaultIPv6 {
				w.DefaultRoute.IPv6InterfaceID = ptrTo(iface.ID)
			}
		}
	}
	return w
}

func (e *Emulator) getInterfaceSettings(r *http.Request) (any, *apiError) {
	in, err := e.lookupLinodeGeneration(r)
	if err != nil {
		return nil, err
	}
	return in.interfaceSettings(), nil
}

type interfaceSettingsUpdateRequest struct {
	NetworkHelper *bool `json:"network_helper"`
	DefaultRoute  *struct {
		IPv4InterfaceID *int `json:"ipv4_interface_id"`
		IPv6InterfaceID *int `json:"ipv6_interface_id"`
	} `json:"default_route"`
}

// updateInterfaceSettings turns the Network Helper on or off and moves a default route to
// another eligible interface.
func (e *Emulator) updateInterfaceSettings(in *instance, req interfaceSettingsUpdateRequest) (any, *apiError) {
	current := in.interfaceSettings()
	if req.DefaultRoute != nil {
		if id := req.DefaultRoute.IPv4InterfaceID; id != nil && !slices.Contains(current.DefaultRoute.IPv4EligibleInterfaceIDs, *id) {
			return nil, errInvalid("default_route.ipv4_interface_id", "Must be a public or VPC interface of the Linode")
		}
		if id := req.DefaultRoute.IPv6InterfaceID; id != nil && !slices.Contains(current.DefaultRoute.IPv6EligibleInterfaceIDs, *id) {
			return nil, errInvalid("default_route.ipv6_interface_id", "Must be a public interface of the Linode")
		}
		for _, iface := range in.Interfaces {
			if id := req.DefaultRoute.IPv4InterfaceID; id != nil {
				iface.DefaultIPv4 = iface.ID == *id
			}
			if id := req.DefaultRoute.IPv6InterfaceID; id != nil {
				iface.DefaultIPv6 = iface.ID == *id
			}
		}
	}
	setIfGiven(&in.NetworkHelper, req.NetworkHelper)
	return in.interfaceSettings(), nil
}

// decodeCreateInterfaces reads a create's "interfaces" in the form its interface generation
// gives: configuration profile interfaces (legacy_config, the account's default) or Linode
// interfaces.
func decodeCreateInterfaces(req *instanceCreateRequest) *apiError {
	switch req.InterfaceGeneration {
	case "", generationLegacyConfig, generationLinode:
	default:
		return errInvalid("interface_generation", "Must be one of legacy_config, linode")
	}
	if len(req.RawInterfaces) == 0 || string(req.RawInterfaces) == "null" {
		return nil
	}
	target := any(&req.Interfaces)
	if req.InterfaceGeneration == generationLinode {
		target = &req.LinodeInterfaces
	}
	if err := json.Unmarshal(req.RawInterfaces, target); err != nil {
		return errInvalid("interfaces", "Invalid interfaces: "+err.Error())
	}
	return nil
}
