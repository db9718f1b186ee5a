package requestrules

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// The Go rules are Linode's published request rules where the API description is silent: those
// of Linode's Cloud Manager, npm @linode/validation 0.83.0 (named by its schema), rewritten in Go.
// Where one and a recorded answer of the real API (../shared/linode-api/recordings) disagree, the
// recording wins and the rule's comment says so.

// goRule checks the bodies of one operation, named by its method and its path below the version
// prefix, with the description's parameter names.
type goRule struct {
	method string
	path   string
	check  func(body map[string]any) *Refusal
}

var goRules = []goRule{
	{"POST", "/lke/clusters", checkClusterPools},
	{"POST", "/lke/clusters/{clusterId}/pools", checkPool("")},
	{"PUT", "/lke/clusters/{clusterId}/pools/{poolId}", checkPool("")},
	{"POST", "/linode/instances", checkInstanceCreate},
	{"POST", "/linode/instances/{linodeId}/configs", checkConfigCreate},
	{"PUT", "/linode/instances/{linodeId}/configs/{configId}", checkConfigUpdate},
	{"POST", "/linode/instances/{linodeId}/configs/{configId}/interfaces", checkConfigInterfaceAppend},
	{"POST", "/linode/instances/{linodeId}/interfaces", checkLinodeInterfaceCreate},
	{"PUT", "/linode/instances/{linodeId}/interfaces/{interfaceId}", checkLinodeInterfaceUpdate},
}

const validation = "@linode/validation 0.83.0 "

// checkClusterPools applies the pool rules to each pool of a cluster create
// (createKubeClusterSchema.node_pools: CreateNodePoolSchema).
func checkClusterPools(body map[string]any) *Refusal {
	pools, _ := body["node_pools"].([]any)
	for i, pool := range pools {
		if p, ok := pool.(map[string]any); ok {
			if r := checkPool(fmt.Sprintf("node_pools[%d].", i))(p); r != nil {
				return r
			}
		}
	}
	return nil
}

// poolNamePart is a label value, a label key without a prefix, or a taint value:
// alphaNumericValidCharactersRegex.
var poolNamePart = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-._]*[a-zA-Z0-9])?$`)

// poolPrefixedKey is a label or taint key with a DNS prefix: dnsKeyRegex.
var poolPrefixedKey = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-._/]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$`)

// linodeNamespaces are the namespaces no pool label key may contain, and no taint value may be.
var linodeNamespaces = []string{"kubernetes.io", "linode.com"}

// checkPool checks a pool's labels (kubernetesLabelSchema) and taints (kubernetesTaintSchema) on
// a pool create or update. labels and taints may be null: linodego sends null for unset ones and
// the API accepted it (recordings/TestLKENodePool_GetFound.yaml), though kubernetesLabelSchema
// refuses a missing map.
func checkPool(prefix string) func(map[string]any) *Refusal {
	return func(body map[string]any) *Refusal {
		if labels, ok := body["labels"].(map[string]any); ok {
			for key, value := range labels {
				text, _ := value.(string)
				if !poolLabelAccepted(key, text) {
					return &Refusal{Field: prefix + "labels", Reason: "Labels must be valid key-value pairs.", Source: validation + "kubernetesLabelSchema"}
				}
			}
		}
		taints, _ := body["taints"].([]any)
		for i, taint := range taints {
			t, _ := taint.(map[string]any)
			field := fmt.Sprintf("%staints[%d].", prefix, i)
			key, _ := t["key"].(string)
			if key == "" || len(key) > 253 || (!poolNamePart.MatchString(key) && !poolPrefixedKey.MatchString(key)) {
				return &Refusal{Field: field + "key", Reason: "Key must start with a letter or number and may contain letters, numbers, hyphens, dots, and underscores, up to 253 characters.", Source: validation + "kubernetesTaintSchema"}
			}
			// An empty value is a taint without one: the description requires the value and
			// documents "" for it, where the schema's pattern would refuse it.
			text, _ := t["value"].(string)
			if text == "" {
				continue
			}
			if len(text) > 63 || !poolNamePart.MatchString(text) {
				return &Refusal{Field: field + "value", Reason: "Value must start with a letter or number and may contain letters, numbers, hyphens, dots, and underscores, up to 63 characters.", Source: validation + "kubernetesTaintSchema"}
			}
			for _, namespace := range linodeNamespaces {
				if text == namespace {
					return &Refusal{Field: field + "value", Reason: `Value cannot be "kubernetes.io" or "linode.com".`, Source: validation + "kubernetesTaintSchema"}
				}
			}
		}
		return nil
	}
}

// poolLabelAccepted is validateKubernetesLabel for one label: a key and a value, neither empty; no
// key containing kubernetes.io or linode.com; a key with a prefix of at most 62 characters and 128
// in all, or one without of at most 63; a value of at most 63 letters, digits and . _ -,
// alphanumeric at both ends.
func poolLabelAccepted(key, value string) bool {
	if key == "" || value == "" {
		return false
	}
	for _, namespace := range linodeNamespaces {
		if strings.Contains(key, namespace) {
			return false
		}
	}
	if prefix, _, prefixed := strings.Cut(key, "/"); prefixed {
		if !poolPrefixedKey.MatchString(key) || len(key) > 128 || len(prefix) > 62 {
			return false
		}
	} else if len(key) > 63 || !poolNamePart.MatchString(key) {
		return false
	}
	return len(value) <= 63 && poolNamePart.MatchString(value)
}

// checkInstanceCreate checks a Linode's interfaces (CreateLinodeSchema.interfaces): Linode
// interfaces (CreateLinodeInterfaceSchema) with interface_generation "linode", configuration
// profile interfaces (ConfigProfileInterfacesSchema) otherwise.
func checkInstanceCreate(body map[string]any) *Refusal {
	interfaces, _ := body["interfaces"].([]any)
	for i, iface := range interfaces {
		object, _ := iface.(map[string]any)
		field := fmt.Sprintf("interfaces[%d]", i)
		var r *Refusal
		if body["interface_generation"] == "linode" {
			r = checkLinodeInterface(field+".", object, true)
		} else {
			r = checkConfigInterface(field+".", object)
		}
		if r != nil {
			return r
		}
	}
	return nil
}

// checkConfigCreate checks a configuration profile's interfaces (CreateLinodeConfigSchema).
// "interfaces": null, which the schema refuses, is accepted: the API took it
// (recordings/TestInstance_withMetadata.yaml, TestInstances_List.yaml).
func checkConfigCreate(body map[string]any) *Refusal {
	return checkConfigInterfaces(body)
}

// checkConfigUpdate checks a configuration profile update (UpdateLinodeConfigSchema): its
// interfaces may be left out, but not null, which would mean the profile's interfaces replaced by
// none.
func checkConfigUpdate(body map[string]any) *Refusal {
	if value, present := body["interfaces"]; present && value == nil {
		return &Refusal{Field: "interfaces", Reason: "interfaces must be a list; leave it out to keep the profile's interfaces", Source: validation + "UpdateLinodeConfigSchema"}
	}
	return checkConfigInterfaces(body)
}

func checkConfigInterfaces(body map[string]any) *Refusal {
	interfaces, _ := body["interfaces"].([]any)
	for i, iface := range interfaces {
		object, _ := iface.(map[string]any)
		if r := checkConfigInterface(fmt.Sprintf("interfaces[%d].", i), object); r != nil {
			return r
		}
	}
	return nil
}

// checkConfigInterfaceAppend checks the interface appended to a profile as one of a profile's.
func checkConfigInterfaceAppend(body map[string]any) *Refusal {
	return checkConfigInterface("", body)
}

// checkConfigInterface is ConfigProfileInterfaceSchema: a VPC interface names its subnet; its
// ip_ranges are IPv4 CIDRs and its IPv6 ranges "auto" or a /64; other interfaces carry none of the
// VPC fields. The schema also wants a VPC interface's vpc_id, and its ipv4 unless it has ipv6;
// the real API appended {"purpose":"vpc","subnet_id":...} with neither
// (recordings/TestInstance_ConfigInterfaces_AppendDelete.yaml), and linodego's interface type,
// which the same recording sent, cannot write vpc_id, so neither is required.
func checkConfigInterface(prefix string, iface map[string]any) *Refusal {
	source := validation + "ConfigProfileInterfaceSchema"
	if iface["purpose"] != "vpc" {
		for _, name := range []string{"subnet_id", "vpc_id", "ip_ranges"} {
			if value, present := iface[name]; present && value != nil {
				return &Refusal{Field: prefix + name, Reason: name + " is not allowed for interfaces that do not have a purpose set to vpc.", Source: source}
			}
		}
		return nil
	}
	if iface["subnet_id"] == nil {
		return &Refusal{Field: prefix + "subnet_id", Reason: "Subnet is required.", Source: source}
	}
	ranges, _ := iface["ip_ranges"].([]any)
	for i, r := range ranges {
		text, _ := r.(string)
		if _, err := netip.ParsePrefix(text); text != "" && err != nil {
			return &Refusal{Field: fmt.Sprintf("%sip_ranges[%d]", prefix, i), Reason: "Must be a valid IPv4 range, e.g. 192.0.2.0/24.", Source: source}
		}
	}
	ipv6, _ := iface["ipv6"].(map[string]any)
	return checkVPCIPv6(prefix+"ipv6.", ipv6, createIPv6Rules)
}

// ipv6Rules says which of a VPC interface's IPv6 ranges must be "auto" or a /64.
type ipv6Rules struct{ slaac, ranges bool }

// createIPv6Rules are ipv6Interface's: both. ModifyLinodeInterfaceSchema leaves SLAAC free.
var createIPv6Rules = ipv6Rules{slaac: true, ranges: true}

// checkVPCIPv6 is ipv6Interface (slaacSchema, VPCInterfaceIPv6RangeSchema): at most one SLAAC
// entry, and each range "auto" or an IPv6 CIDR of prefix length 64. "/64" alone is the public
// interface's form.
func checkVPCIPv6(prefix string, ipv6 map[string]any, rules ipv6Rules) *Refusal {
	if ipv6 == nil {
		return nil
	}
	slaac, _ := ipv6["slaac"].([]any)
	if len(slaac) > 1 {
		return &Refusal{Field: prefix + "slaac", Reason: "ipv6.slaac field must have zero or one entry", Source: validation + "ipv6Interface"}
	}
	for _, list := range []struct {
		name    string
		checked bool
	}{{"slaac", rules.slaac}, {"ranges", rules.ranges}} {
		name, checked := list.name, list.checked
		entries, _ := ipv6[name].([]any)
		for i, entry := range entries {
			object, _ := entry.(map[string]any)
			value, present := object["range"]
			if !checked || !present || value == nil {
				continue
			}
			if text, _ := value.(string); !isAutoOr64(text) {
				return &Refusal{Field: fmt.Sprintf("%s%s[%d].range", prefix, name, i), Reason: "Must be a /64 IPv6 network CIDR", Source: validation + "VPCInterfaceIPv6RangeSchema"}
			}
		}
	}
	return nil
}

func isAutoOr64(value string) bool {
	if value == "auto" {
		return true
	}
	p, err := netip.ParsePrefix(value)
	return err == nil && p.Addr().Is6() && !p.Addr().Is4In6() && p.Bits() == 64
}

// checkLinodeInterfaceCreate is CreateLinodeInterfaceSchema on POST .../interfaces.
func checkLinodeInterfaceCreate(body map[string]any) *Refusal {
	return checkLinodeInterface("", body, true)
}

// checkLinodeInterfaceUpdate is ModifyLinodeInterfaceSchema: ranges as on a create, SLAAC free.
// The schema also wants the VPC part's subnet_id, which linodego v1.69.1's
// VPCInterfaceUpdateOptions cannot write (an interface keeps its subnet), so it is not required.
func checkLinodeInterfaceUpdate(body map[string]any) *Refusal {
	return checkLinodeInterface("", body, false)
}

// checkLinodeInterface checks a Linode interface's VPC part (CreateVPCInterfaceSchema): its subnet
// on a create, and its IPv6 ranges.
func checkLinodeInterface(prefix string, iface map[string]any, create bool) *Refusal {
	vpc, _ := iface["vpc"].(map[string]any)
	if vpc == nil {
		return nil
	}
	rules := ipv6Rules{ranges: true}
	if create {
		rules = createIPv6Rules
	}
	if create && vpc["subnet_id"] == nil {
		return &Refusal{Field: prefix + "vpc.subnet_id", Reason: "Subnet is required.", Source: validation + "CreateVPCInterfaceSchema"}
	}
	ipv6, _ := vpc["ipv6"].(map[string]any)
	return checkVPCIPv6(prefix+"vpc.ipv6.", ipv6, rules)
}
