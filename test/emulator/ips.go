package emulator

import (
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The account's IPv4 addresses: each Linode's (its public address first, then any it was given
// since and its private one), and reserved addresses (reservedips.go) whether a Linode uses them
// or not.

// privateIPv4 is the range of Linodes' private addresses ("private_ip": true); Linode shows
// them in a /17.
var privateIPv4 = netip.MustParsePrefix("192.168.0.0/16")

func isPrivateIPv4(address string) bool {
	addr, err := netip.ParseAddr(address)
	return err == nil && privateIPv4.Contains(addr)
}

type natWire struct {
	VPCID    int    `json:"vpc_id"`
	SubnetID int    `json:"subnet_id"`
	Address  string `json:"address"`
}

// ipAddressWire is an IPv4 address as /networking/ips, a Linode's /ips and the reserved
// addresses show it.
type ipAddressWire struct {
	Address        string              `json:"address"`
	Gateway        *string             `json:"gateway"`
	SubnetMask     string              `json:"subnet_mask"`
	Prefix         int                 `json:"prefix"`
	Type           string              `json:"type"`
	Public         bool                `json:"public"`
	RDNS           *string             `json:"rdns"`
	LinodeID       *int                `json:"linode_id"`
	InterfaceID    *int                `json:"interface_id"`
	Region         string              `json:"region"`
	VPCNAT1To1     *natWire            `json:"vpc_nat_1_1"`
	Reserved       bool                `json:"reserved"`
	AssignedEntity *assignedEntityWire `json:"assigned_entity"`
	// Tags are a reserved address's; other addresses have none to show.
	Tags *[]string `json:"tags,omitempty"`
}

type assignedEntityWire struct {
	ID    int    `json:"id"`
	Type  string `json:"type"`
	Label string `json:"label"`
	URL   string `json:"url"`
}

// holderOf is the Linode that has the address, if any.
func (e *Emulator) holderOf(address string) *instance {
	for _, id := range sortedKeys(e.st.instances) {
		if in := e.st.instances[id]; slices.Contains(in.IPv4, address) {
			return in
		}
	}
	return nil
}

// ipAddress describes an address of the account's; ok is false for any other address.
func (e *Emulator) ipAddress(address string) (w ipAddressWire, ok bool) {
	holder, reserved := e.holderOf(address), e.st.reservedIPs[address]
	if holder == nil && reserved == nil {
		return w, false
	}
	w = ipAddressWire{Address: address, Type: "ipv4", Public: !isPrivateIPv4(address), Reserved: reserved != nil}
	if w.Public {
		w.Gateway, w.SubnetMask, w.Prefix = ptrTo(gatewayOf(address)), "255.255.255.0", 24
	} else {
		w.SubnetMask, w.Prefix = "255.255.128.0", 17
	}
	if reserved != nil {
		w.Region, w.Tags = reserved.Region, ptrTo(nonNil(reserved.Tags))
	}
	if rdns, custom := e.st.rdns[address]; custom {
		w.RDNS = rdns
	} else if holder != nil && w.Public {
		w.RDNS = ptrTo(strings.ReplaceAll(address, ".", "-") + ".ip.linodeusercontent.com")
	}
	if holder != nil {
		w.Region, w.LinodeID = holder.Region, ptrTo(holder.ID)
		w.AssignedEntity = &assignedEntityWire{ID: holder.ID, Type: "linode", Label: holder.Label, URL: fmt.Sprintf("/v4/linode/instances/%d", holder.ID)}
		for _, a := range holder.vpcAttachments() {
			if a.NAT1To1 == address {
				w.VPCNAT1To1 = &natWire{VPCID: a.VPCID, SubnetID: a.SubnetID, Address: a.Address}
				if a.ConfigID == nil {
					w.InterfaceID = ptrTo(a.InterfaceID)
				}
			}
		}
		for _, iface := range holder.Interfaces {
			if iface.Public != nil && slices.Contains(iface.Public.IPv4, address) {
				w.InterfaceID = ptrTo(iface.ID)
			}
		}
	}
	return w, true
}

// gatewayOf is the first address of the /24 an address is in, as Linode's public gateways are.
func gatewayOf(address string) string {
	return address[:strings.LastIndex(address, ".")] + ".1"
}

// accountAddresses are the account's addresses: the Linodes' in order, then the reserved ones
// no Linode has.
func (e *Emulator) accountAddresses() []string {
	var out []string
	for _, id := range sortedKeys(e.st.instances) {
		out = append(out, e.st.instances[id].IPv4...)
	}
	for _, address := range sortedKeys(e.st.reservedIPs) {
		if e.holderOf(address) == nil {
			out = append(out, address)
		}
	}
	return out
}

func (e *Emulator) listIPAddresses(*http.Request) (any, *apiError) {
	var items []ipAddressWire
	for _, address := range e.accountAddresses() {
		if w, ok := e.ipAddress(address); ok {
			items = append(items, w)
		}
	}
	return mustList(newList(items, ipAddressWire{}))
}

func (e *Emulator) getIPAddress(r *http.Request) (any, *apiError) {
	w, ok := e.ipAddress(r.PathValue("address"))
	if !ok {
		return nil, errNotFound()
	}
	return w, nil
}

// rdnsPattern is a domain name, which a reverse DNS entry must be.
var rdnsPattern = regexp.MustCompile(`^(?i)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$`)

// updateIPAddress sets an address's reverse DNS (null restores Linode's) and whether it is
// reserved: reserving keeps it for the account, unreserving a reserved address no Linode has
// gives it back.
func (e *Emulator) updateIPAddress(r *http.Request) (any, *apiError) {
	var req struct {
		RDNS     *string `json:"rdns"`
		Reserved *bool   `json:"reserved"`
	}
	present, err := decodeBodyKeys(r, &req)
	if err != nil {
		return nil, err
	}
	if req.RDNS != nil && !rdnsPattern.MatchString(*req.RDNS) {
		return nil, errInvalid("rdns", "Domain is not valid.")
	}
	address := r.PathValue("address")
	w, ok := e.ipAddress(address)
	if !ok {
		return nil, errNotFound()
	}
	if req.Reserved != nil && *req.Reserved && !w.Public {
		return nil, errInvalid("reserved", "Only public IPv4 addresses can be reserved")
	}
	if present["rdns"] {
		if req.RDNS == nil {
			delete(e.st.rdns, address)
		} else {
			e.st.rdns[address] = req.RDNS
		}
	}
	if req.Reserved != nil {
		switch _, reserved := e.st.reservedIPs[address]; {
		case *req.Reserved && !reserved:
			e.st.reservedIPs[address] = &reservedIP{Address: address, Region: w.Region}
		case !*req.Reserved && reserved:
			delete(e.st.reservedIPs, address)
		}
	}
	after, ok := e.ipAddress(address)
	if !ok {
		// Unreserved with no Linode to keep it: the address went back; the API shows it once
		// more, as it was but no longer reserved.
		w.Reserved, w.Tags = false, nil
		return w, nil
	}
	return after, nil
}

// allocateIPAddress gives a Linode another public address, or reserves a new one, or both.
func (e *Emulator) allocateIPAddress(r *http.Request) (any, *apiError) {
	var req struct {
		Type     string `json:"type"`
		Public   bool   `json:"public"`
		Reserved bool   `json:"reserved"`
		Region   string `json:"region"`
		LinodeID int    `json:"linode_id"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Type != "ipv4" {
		return nil, errInvalid("type", "Must be ipv4")
	}
	if !req.Public {
		return nil, errInvalid("public", "Only public addresses can be allocated")
	}
	var holder *instance
	if req.LinodeID != 0 {
		if holder = e.st.instances[req.LinodeID]; holder == nil {
			return nil, errInvalid("linode_id", "Linode is not active")
		}
	}
	region := req.Region
	switch {
	case holder != nil && region != "" && region != holder.Region:
		return nil, errInvalid("region", "Must be the Linode's region")
	case holder != nil:
		region = holder.Region
	case !req.Reserved:
		return nil, errInvalid("linode_id", "A Linode must be provided")
	case region == "":
		return nil, errStatus(http.StatusBadRequest, "A datacenter or a Linode must be provided when reserving an address.")
	}
	if _, err := e.validateRegion("region", region, ""); err != nil {
		return nil, err
	}
	address := e.st.nextIPv4()
	if req.Reserved {
		e.st.reservedIPs[address] = &reservedIP{Address: address, Region: region}
	}
	if holder != nil {
		holder.IPv4 = append(holder.IPv4, address)
	}
	w, _ := e.ipAddress(address)
	return w, nil
}

// assignIPAddresses moves addresses to the Linodes named, in one region.
func (e *Emulator) assignIPAddresses(r *http.Request) (any, *apiError) {
	var req struct {
		Region      string `json:"region"`
		Assignments []struct {
			Address  string `json:"address"`
			LinodeID int    `json:"linode_id"`
		} `json:"assignments"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if _, err := e.validateRegion("region", req.Region, ""); err != nil {
		return nil, err
	}
	for _, a := range req.Assignments {
		w, ok := e.ipAddress(a.Address)
		if !ok || !w.Public {
			return nil, errStatus(http.StatusBadRequest, "IP Address not found.")
		}
		to := e.st.instances[a.LinodeID]
		if to == nil {
			return nil, errStatus(http.StatusBadRequest, "Invalid Linode ID "+strconv.Itoa(a.LinodeID))
		}
		if w.Region != req.Region || to.Region != req.Region {
			return nil, errInvalid("region", "Addresses and Linodes must be in the region")
		}
	}
	for _, a := range req.Assignments {
		if from := e.holderOf(a.Address); from != nil {
			from.IPv4 = slices.DeleteFunc(from.IPv4, func(address string) bool { return address == a.Address })
		}
		to := e.st.instances[a.LinodeID]
		to.IPv4 = append(to.IPv4, a.Address)
	}
	return emptyObject{}, nil
}

// vpcAttachment is a Linode's place in a VPC subnet: a VPC interface of one of its
// configuration profiles (ConfigID set) or its Linode VPC interface.
type vpcAttachment struct {
	InterfaceID     int
	ConfigID        *int
	VPCID, SubnetID int
	Address         string
	NAT1To1         string
	Ranges          []string
	// Active is whether the interface is in use: the Linode is up, with the profile if it has one.
	Active bool
}

// vpcAttachments are the Linode's VPC interfaces of either generation.
func (in *instance) vpcAttachments() []vpcAttachment {
	up := in.Status != statusOffline && in.Status != statusProvisioning
	var out []vpcAttachment
	for _, cfg := range in.Deployment.Configs {
		for _, iface := range cfg.Interfaces {
			if iface.Purpose == purposeVPC {
				out = append(out, vpcAttachment{
					InterfaceID: iface.ID, ConfigID: ptrTo(cfg.ID), VPCID: iface.VPCID, SubnetID: iface.SubnetID,
					Address: iface.VPCAddress, NAT1To1: iface.NAT1To1, Active: up && in.bootConfig() == cfg,
				})
			}
		}
	}
	for _, iface := range in.Interfaces {
		if v := iface.VPC; v != nil {
			out = append(out, vpcAttachment{
				InterfaceID: iface.ID, VPCID: v.VPCID, SubnetID: v.SubnetID,
				Address: v.Address, NAT1To1: v.NAT1To1, Ranges: v.Ranges, Active: up,
			})
		}
	}
	return out
}

// vpcIPWire is a Linode's address in a VPC subnet.
type vpcIPWire struct {
	Address        *string `json:"address"`
	AddressRange   *string `json:"address_range"`
	VPCID          int     `json:"vpc_id"`
	SubnetID       int     `json:"subnet_id"`
	Region         string  `json:"region"`
	LinodeID       int     `json:"linode_id"`
	ConfigID       *int    `json:"config_id"`
	InterfaceID    int     `json:"interface_id"`
	NodeBalancerID *int    `json:"nodebalancer_id"`
	DatabaseID     *int    `json:"database_id"`
	Active         bool    `json:"active"`
	NAT1To1        *string `json:"nat_1_1"`
	Gateway        string  `json:"gateway"`
	Prefix         int     `json:"prefix"`
	SubnetMask     string  `json:"subnet_mask"`
}

// vpcIPs lists the VPC addresses and ranges of every Linode, of one VPC's if vpcID is not 0.
func (e *Emulator) vpcIPs(vpcID int) []vpcIPWire {
	var out []vpcIPWire
	for _, id := range sortedKeys(e.st.instances) {
		in := e.st.instances[id]
		for _, a := range in.vpcAttachments() {
			sub, ok := e.st.subnets[a.SubnetID]
			if !ok || (vpcID != 0 && a.VPCID != vpcID) {
				continue
			}
			prefix := netip.MustParsePrefix(sub.IPv4).Masked()
			w := vpcIPWire{
				Address: ptrTo(a.Address), VPCID: a.VPCID, SubnetID: a.SubnetID, Region: in.Region,
				LinodeID: in.ID, ConfigID: a.ConfigID, InterfaceID: a.InterfaceID, Active: a.Active,
				Gateway: prefix.Addr().Next().String(), Prefix: prefix.Bits(), SubnetMask: maskOf(prefix),
			}
			if a.NAT1To1 != "" {
				w.NAT1To1 = ptrTo(a.NAT1To1)
			}
			out = append(out, w)
			for _, r := range a.Ranges {
				ranged := w
				ranged.Address, ranged.AddressRange, ranged.NAT1To1 = nil, ptrTo(r), nil
				out = append(out, ranged)
			}
		}
	}
	return out
}

// maskOf is a prefix's netmask in dotted form.
func maskOf(prefix netip.Prefix) string {
	mask := uint32(0xffffffff) << (32 - prefix.Bits())
	return fmt.Sprintf("%d.%d.%d.%d", mask>>24, mask>>16&0xff, mask>>8&0xff, mask&0xff)
}

func (e *Emulator) listVPCIPs(*http.Request) (any, *apiError) {
	return mustList(newList(e.vpcIPs(0), vpcIPWire{}))
}

func (e *Emulator) listVPCIPsOfVPC(r *http.Request) (any, *apiError) {
	v, err := e.lookupVPC(r)
	if err != nil {
		return nil, err
	}
	return mustList(newList(e.vpcIPs(v.ID), vpcIPWire{}))
}

type instanceIPv6Wire struct {
	Address    string  `json:"address"`
	Gateway    string  `json:"gateway"`
	SubnetMask string  `json:"subnet_mask"`
	Prefix     int     `json:"prefix"`
	Type       string  `json:"type"`
	RDNS       *string `json:"rdns"`
	LinodeID   int     `json:"linode_id"`
	Region     string  `json:"region"`
	Public     bool    `json:"public"`
}

type instanceIPsWire struct {
	IPv4 struct {
		Public   []ipAddressWire `json:"public"`
		Private  []ipAddressWire `json:"private"`
		Shared   []ipAddressWire `json:"shared"`
		Reserved []ipAddressWire `json:"reserved"`
		VPC      []vpcIPWire     `json:"vpc"`
	} `json:"ipv4"`
	IPv6 struct {
		SLAAC     instanceIPv6Wire `json:"slaac"`
		LinkLocal instanceIPv6Wire `json:"link_local"`
		Global    []ipv6RangeWire  `json:"global"`
		VPC       []any            `json:"vpc"`
	} `json:"ipv6"`
}

// getInstanceIPs lists a Linode's addresses by kind. Its reserved addresses are public ones too.
func (e *Emulator) getInstanceIPs(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	var w instanceIPsWire
	w.IPv4.Public, w.IPv4.Private, w.IPv4.Shared, w.IPv4.Reserved = []ipAddressWire{}, []ipAddressWire{}, []ipAddressWire{}, []ipAddressWire{}
	for _, address := range in.IPv4 {
		ip, _ := e.ipAddress(address)
		switch {
		case !ip.Public:
			w.IPv4.Private = append(w.IPv4.Private, ip)
		case ip.Reserved:
			w.IPv4.Reserved = append(w.IPv4.Reserved, ip)
			w.IPv4.Public = append(w.IPv4.Public, ip)
		default:
			w.IPv4.Public = append(w.IPv4.Public, ip)
		}
	}
	w.IPv4.VPC = nonNil(slices.DeleteFunc(e.vpcIPs(0), func(ip vpcIPWire) bool { return ip.LinodeID != in.ID }))
	slaac := strings.TrimSuffix(in.IPv6, "/128")
	w.IPv6.SLAAC = instanceIPv6Wire{Address: slaac, Gateway: "fe80::1", SubnetMask: "ffff:ffff:ffff:ffff::", Prefix: 64, Type: "ipv6", LinodeID: in.ID, Region: in.Region, Public: true}
	w.IPv6.LinkLocal = instanceIPv6Wire{Address: "fe80::" + strings.TrimPrefix(slaac, "2001:db8::"), Gateway: "fe80::1", SubnetMask: "ffff:ffff:ffff:ffff::", Prefix: 64, Type: "ipv6", LinodeID: in.ID, Region: in.Region}
	w.IPv6.Global, w.IPv6.VPC = []ipv6RangeWire{}, []any{}
	for _, r := range e.rangesOf(in.ID) {
		w.IPv6.Global = append(w.IPv6.Global, e.ipv6RangeToWire(r))
	}
	return w, nil
}

type instanceIPAddRequest struct {
	Type    string  `json:"type"`
	Public  bool    `json:"public"`
	Address *string `json:"address"`
}

func (req *instanceIPAddRequest) validate() *apiError {
	if req.Type != "ipv4" {
		return errInvalid("type", "Only addresses of type ipv4 are currently supported.")
	}
	if req.Address != nil && !req.Public {
		return errInvalid("address", "Cannot reserve a private address.")
	}
	if req.Address != nil {
		if _, err := netip.ParseAddr(*req.Address); err != nil {
			return errInvalid("address", "Must provide a valid reserved address")
		}
	}
	return nil
}

// addInstanceIP gives a Linode another public address (a reserved one it names, or a new one),
// or its private one.
func (e *Emulator) addInstanceIP(in *instance, req instanceIPAddRequest) (any, *apiError) {
	if req.Address != nil {
		reserved, ok := e.st.reservedIPs[*req.Address]
		switch {
		case !ok || e.holderOf(*req.Address) != nil:
			return nil, errInvalid("address", "Address must be reserved and must be currently unassigned.")
		case reserved.Region != in.Region:
			return nil, errInvalid("address", "Address must belong to same region as linode.")
		}
		in.IPv4 = append(in.IPv4, *req.Address)
		w, _ := e.ipAddress(*req.Address)
		return w, nil
	}
	address := e.st.nextIPv4()
	if !req.Public {
		if slices.ContainsFunc(in.IPv4, isPrivateIPv4) {
			return nil, errInvalid("public", "The Linode has a private address already")
		}
		address = privateAddressOf(in.ID)
	}
	in.IPv4 = append(in.IPv4, address)
	w, _ := e.ipAddress(address)
	return w, nil
}

// removeInstanceIP takes an address from a Linode; its only public address stays.
func (e *Emulator) removeInstanceIP(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	address := r.PathValue("address")
	if !slices.Contains(in.IPv4, address) {
		return nil, errNotFound()
	}
	public := slices.DeleteFunc(slices.Clone(in.IPv4), isPrivateIPv4)
	if !isPrivateIPv4(address) && len(public) == 1 {
		return nil, errInvalid("address", "A Linode keeps at least one public IPv4 address")
	}
	in.IPv4 = slices.DeleteFunc(in.IPv4, func(a string) bool { return a == address })
	return emptyObject{}, nil
}
