package instance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// addressAuto asks Linode to choose an address, or a range of the size the request gives.
const addressAuto = "auto"

// networkInterfaces are the node's interfaces as the class lays them out: its interfaces, or, for
// a class that names only a vpc, a public interface and the VPC one (the VPC one alone when it has
// a 1:1 NAT, which is then the node's way to the internet). A class with Linode interfaces and a
// firewallID but no interfaces gets the one public interface a Linode has by default, spelled
// out, so that the firewall has an interface to go on. nil leaves Linode's default: one public
// interface.
func networkInterfaces(nodeClass *v1.LinodeNodeClass) []v1.NetworkInterface {
	spec := nodeClass.Spec
	switch {
	case len(spec.Interfaces) > 0:
		return spec.Interfaces
	case spec.VPC != nil && lo.FromPtr(spec.VPC.NAT1To1):
		return []v1.NetworkInterface{{VPC: &v1.VPCInterface{VPCConfiguration: *spec.VPC}}}
	case spec.VPC != nil:
		return []v1.NetworkInterface{{Public: &v1.PublicInterface{}}, {VPC: &v1.VPCInterface{VPCConfiguration: *spec.VPC}}}
	case linodeGeneration(nodeClass) && spec.FirewallID != nil:
		return []v1.NetworkInterface{{Public: &v1.PublicInterface{}}}
	}
	return nil
}

// linodeGeneration reports whether the class asks for Linode interfaces rather than
// configuration profile ones.
func linodeGeneration(nodeClass *v1.LinodeNodeClass) bool {
	return lo.FromPtr(nodeClass.Spec.InterfaceGeneration) == v1.InterfaceGenerationLinode
}

// hasVPC reports whether the class puts its nodes in a VPC subnet, which status.subnet resolves.
func hasVPC(nodeClass *v1.LinodeNodeClass) bool {
	return slices.ContainsFunc(networkInterfaces(nodeClass), func(i v1.NetworkInterface) bool { return i.VPC != nil })
}

// setInterfaces puts the class's interfaces on the create, in the generation the class asks for.
// With Linode interfaces each public or VPC interface carries its own firewall (the class's
// firewallID for those that name none), and the create none: Linode refuses a Linode-wide
// firewall_id with them.
func setInterfaces(opts *linode.InstanceCreateOptions, nodeClass *v1.LinodeNodeClass) {
	interfaces := networkInterfaces(nodeClass)
	if !linodeGeneration(nodeClass) {
		if nodeClass.Spec.InterfaceGeneration != nil {
			opts.InterfaceGeneration = linodego.GenerationLegacyConfig
		}
		if len(interfaces) > 0 {
			opts.ConfigInterfaces = configInterfaces(interfaces, nodeClass.Status.Subnet)
		}
		return
	}
	opts.InterfaceGeneration = linodego.GenerationLinode
	opts.FirewallID = 0
	if len(interfaces) > 0 {
		opts.LinodeInterfaces = linodeInterfaces(interfaces, nodeClass.Status.Subnet, nodeClass.Spec.FirewallID)
	}
}

// defaultRoute is the index of the interface that carries the default route: the first public or
// VPC interface.
func defaultRoute(interfaces []v1.NetworkInterface) int {
	return slices.IndexFunc(interfaces, func(i v1.NetworkInterface) bool { return i.Public != nil || i.VPC != nil })
}

// configInterfaces are the interfaces of the Linode's configuration profile. A VPC interface
// names its subnet and the subnet's VPC, and always has an ipv4 object, which Linode's rules want
// on every VPC interface: empty, the interface takes an address of the subnet; with a 1:1 NAT it
// maps the Linode's public address onto it ("any"). Its ranges are the class's CIDRs: a range by
// prefix length is for Linode interfaces only, and the class's validation refuses it here.
func configInterfaces(interfaces []v1.NetworkInterface, subnet *v1.ResolvedSubnet) []linode.ConfigInterface {
	primary := defaultRoute(interfaces)
	out := make([]linode.ConfigInterface, 0, len(interfaces))
	for i, iface := range interfaces {
		opts := linode.ConfigInterface{Primary: i == primary}
		switch {
		case iface.Public != nil:
			opts.Purpose = linodego.InterfacePurposePublic
		case iface.VPC != nil:
			opts.Purpose = linodego.InterfacePurposeVPC
			if subnet != nil {
				opts.SubnetID, opts.VPCID = lo.ToPtr(subnet.ID), lo.ToPtr(subnet.VPCID)
			}
			opts.IPv4 = &linode.ConfigInterfaceIPv4{}
			if lo.FromPtr(iface.VPC.NAT1To1) {
				opts.IPv4.NAT1To1 = "any"
			}
			opts.IPRanges = slices.Clone(iface.VPC.IPv4Ranges)
			opts.IPv6 = vpcIPv6(iface.VPC.IPv6)
		default:
			opts.Purpose = linodego.InterfacePurposeVLAN
			opts.Label = iface.VLAN.Label
			opts.IPAMAddress = lo.FromPtr(iface.VLAN.IPAMAddress)
		}
		out = append(out, opts)
	}
	return out
}

// vpcIPv6 is a VPC interface's IPv6, in either generation: the SLAAC address and the routed range
// are each a /64 of the subnet's IPv6 range that Linode chooses ("auto"; Linode's rules take
// "auto" or a /64 CIDR there, the prefix length being the public interface's form).
func vpcIPv6(ipv6 *v1.VPCIPv6) *linode.VPCInterfaceIPv6 {
	if ipv6 == nil {
		return nil
	}
	out := &linode.VPCInterfaceIPv6{IsPublic: ipv6.Public}
	if lo.FromPtr(ipv6.SLAAC) {
		out.SLAAC = []linode.IPv6Range{{Range: linode.IPv6RangeAuto}}
	}
	if lo.FromPtr(ipv6.Range) {
		out.Ranges = []linode.IPv6Range{{Range: linode.IPv6RangeAuto}}
	}
	return out
}

// linodeInterfaces are the Linode's own interfaces. The first public or VPC interface carries the
// IPv4 default route and the first public one the IPv6 default route (only a public interface
// can). A VPC interface takes an address of the subnet and, with a 1:1 NAT, a public address
// mapped onto it.
func linodeInterfaces(interfaces []v1.NetworkInterface, subnet *v1.ResolvedSubnet, classFirewall *int) []linode.LinodeInterface {
	ipv4Route := defaultRoute(interfaces)
	ipv6Route := slices.IndexFunc(interfaces, func(i v1.NetworkInterface) bool { return i.Public != nil })
	out := make([]linode.LinodeInterface, 0, len(interfaces))
	for i, iface := range interfaces {
		var opts linode.LinodeInterface
		if i == ipv4Route || i == ipv6Route {
			opts.DefaultRoute = &linodego.InterfaceDefaultRoute{}
			if i == ipv4Route {
				opts.DefaultRoute.IPv4 = lo.ToPtr(true)
			}
			if i == ipv6Route {
				opts.DefaultRoute.IPv6 = lo.ToPtr(true)
			}
		}
		if iface.VLAN == nil {
			opts.FirewallID = lo.CoalesceOrEmpty(iface.FirewallID, classFirewall)
		}
		switch {
		case iface.Public != nil:
			opts.Public = &linodego.PublicInterfaceCreateOptions{}
			if len(iface.Public.IPv6Ranges) > 0 {
				ranges := lo.Map(iface.Public.IPv6Ranges, func(prefix string, _ int) linodego.PublicInterfaceIPv6RangeCreateOptions {
					return linodego.PublicInterfaceIPv6RangeCreateOptions{Range: prefix}
				})
				opts.Public.IPv6 = &linodego.PublicInterfaceIPv6CreateOptions{Ranges: &ranges}
			}
		case iface.VPC != nil:
			opts.VPC = vpcInterface(iface.VPC, subnet)
		default:
			opts.VLAN = &linodego.VLANInterface{VLANLabel: iface.VLAN.Label, IPAMAddress: iface.VLAN.IPAMAddress}
		}
		out = append(out, opts)
	}
	return out
}

func vpcInterface(vpc *v1.VPCInterface, subnet *v1.ResolvedSubnet) *linode.VPCInterface {
	opts := &linode.VPCInterface{}
	if subnet != nil {
		opts.SubnetID = subnet.ID
	}
	address := linodego.VPCInterfaceIPv4AddressCreateOptions{Address: lo.ToPtr(addressAuto), Primary: lo.ToPtr(true)}
	if lo.FromPtr(vpc.NAT1To1) {
		address.NAT1To1Address = lo.ToPtr(addressAuto)
	}
	opts.IPv4 = &linodego.VPCInterfaceIPv4CreateOptions{Addresses: &[]linodego.VPCInterfaceIPv4AddressCreateOptions{address}}
	if len(vpc.IPv4Ranges) > 0 {
		ranges := lo.Map(vpc.IPv4Ranges, func(r string, _ int) linodego.VPCInterfaceIPv4RangeCreateOptions {
			return linodego.VPCInterfaceIPv4RangeCreateOptions{Range: r}
		})
		opts.IPv4.Ranges = &ranges
	}
	opts.IPv6 = vpcIPv6(vpc.IPv6)
	return opts
}

// validateConfigInterfaceRanges refuses a configuration profile VPC interface's range by prefix
// length ("/28"): such an interface takes ranges only as CIDRs of the subnet (ip_ranges); Linode
// allocates a range of a size to each node for Linode interfaces alone.
func validateConfigInterfaceRanges(nodeClass *v1.LinodeNodeClass) (reason, message string) {
	if linodeGeneration(nodeClass) {
		return "", ""
	}
	for i, iface := range nodeClass.Spec.Interfaces {
		if iface.VPC == nil {
			continue
		}
		for j, r := range iface.VPC.IPv4Ranges {
			if strings.HasPrefix(r, "/") {
				return ReasonRangeNotCIDR, fmt.Sprintf("interfaces[%d].vpc.ipv4Ranges[%d] is %q, a prefix length: configuration profile interfaces (interfaceGeneration legacy_config, or unset) take ranges as CIDRs of the subnet, e.g. 10.0.0.16/28; set interfaceGeneration: linode for a range of that size allocated to each node",
					i, j, r)
			}
		}
	}
	return "", ""
}

// legacyIPv6Ranges are the prefix lengths of the IPv6 ranges the class's public interface asks
// for when its interfaces are configuration profile ones: such an interface takes no ranges, and
// Linode routes a range to a Linode only once the Linode exists (POST /networking/ipv6/ranges).
func legacyIPv6Ranges(nodeClass *v1.LinodeNodeClass) []int {
	if linodeGeneration(nodeClass) {
		return nil
	}
	var prefixes []int
	for _, iface := range nodeClass.Spec.Interfaces {
		if iface.Public == nil {
			continue
		}
		for _, r := range iface.Public.IPv6Ranges {
			if prefix, err := strconv.Atoi(strings.TrimPrefix(r, "/")); err == nil {
				prefixes = append(prefixes, prefix)
			}
		}
	}
	return prefixes
}

// routeIPv6Ranges routes to the Linode the IPv6 ranges its class asks for that it lacks. A range
// it already has counts for one of the same size, so that a launch retried after an interrupted
// one routes no range twice.
func (p *Provider) routeIPv6Ranges(ctx context.Context, nodeClass *v1.LinodeNodeClass, linodeID int) error {
	wanted := legacyIPv6Ranges(nodeClass)
	if len(wanted) == 0 {
		return nil
	}
	addresses, err := p.api.GetInstanceIPAddresses(ctx, linodeID)
	if err != nil {
		return fmt.Errorf("reading the addresses of Linode %d: %w", linodeID, err)
	}
	var routed []int
	if addresses.IPv6 != nil {
		routed = lo.Map(addresses.IPv6.Global, func(r linodego.IPv6Range, _ int) int { return r.Prefix })
	}
	for _, prefix := range wanted {
		if i := slices.Index(routed, prefix); i >= 0 {
			routed = slices.Delete(routed, i, i+1)
			continue
		}
		if _, err := p.api.CreateIPv6Range(ctx, linodego.IPv6RangeCreateOptions{LinodeID: linodeID, PrefixLength: prefix}); err != nil {
			return fmt.Errorf("routing a /%d IPv6 range to Linode %d: %w", prefix, linodeID, err)
		}
	}
	return nil
}
