package requestrules

import (
	"encoding/json"
	"regexp"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// The description (4.189.0, October 2024) is older than the recordings of the real API and, read
// as JSON Schema, refuses bodies the real API accepted. Where they disagree the recording wins:
// the corrections below are applied to the loaded description, each with the recording that
// shows it.

// openObjects drops `additionalProperties: false` from every schema of a request body. Read
// strictly, the description's allOf of closed objects refuses any body (each branch refuses the
// others' fields), and the API takes fields the description does not list:
// recordings/TestAccountEvents_List.yaml (firewall_id on POST /linode/instances),
// TestLKENodePool_Update.yaml (tags, and labels as a map, on PUT .../pools/{poolId}),
// TestVPC_IPv4Ranges.yaml (ipv4 on PUT /vpcs/{vpcId}). Fields the API refuses that the
// description omits are the Go rules' (rules.go).
func openObjects(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		s.AdditionalProperties.Has = nil
	}
	for _, p := range s.Properties {
		openObjects(p, seen)
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, member := range group {
			openObjects(member, seen)
		}
	}
	openObjects(s.Items, seen)
	openObjects(s.Not, seen)
	openObjects(s.AdditionalProperties.Schema, seen)
}

// nullableFields are fields the description does not mark nullable that the real API accepted as
// null, by the description's operation and the path of the field in its body.
var nullableFields = []struct {
	method, path string
	field        []string
	recording    string
}{
	// linodego sends null for a pool's unset disks, labels and taints.
	{"POST", "/{apiVersion}/lke/clusters", []string{"node_pools", "[]", "disks"}, "TestLKEClusters_List"},
	{"POST", "/{apiVersion}/lke/clusters", []string{"node_pools", "[]", "labels"}, "TestLKEClusters_List"},
	{"POST", "/{apiVersion}/lke/clusters", []string{"node_pools", "[]", "taints"}, "TestLKEClusters_List"},
	// A cluster's pools are pool creates: tags null as on POST .../pools.
	{"POST", "/{apiVersion}/lke/clusters", []string{"node_pools", "[]", "tags"}, "TestLKENodePool_CreateWithLabelsAndTaints"},
	{"POST", "/{apiVersion}/lke/clusters/{clusterId}/pools", []string{"disks"}, "TestLKENodePool_CreateWithLabelsAndTaints"},
	{"POST", "/{apiVersion}/lke/clusters/{clusterId}/pools", []string{"labels"}, "TestLKENodePool_GetFound"},
	{"POST", "/{apiVersion}/lke/clusters/{clusterId}/pools", []string{"taints"}, "TestLKENodePool_GetFound"},
	{"POST", "/{apiVersion}/lke/clusters/{clusterId}/pools", []string{"tags"}, "TestLKENodePool_CreateWithLabelsAndTaints"},
	// A firewall created with "outbound": null rules; inbound is the same list of rules.
	{"POST", "/{apiVersion}/networking/firewalls", []string{"rules", "outbound"}, "TestFirewall_Get"},
	{"POST", "/{apiVersion}/networking/firewalls", []string{"rules", "inbound"}, "TestFirewall_Get"},
	// A configuration profile created with "interfaces": null.
	{"POST", "/{apiVersion}/linode/instances/{linodeId}/configs", []string{"interfaces"}, "TestInstance_withMetadata"},
}

// optionalFields are fields the description requires that a body newer than the description
// leaves out, by the description's operation, with the source of the newer form.
var optionalFields = []struct {
	method, path, field string
	source              string
}{
	// Reserving an address ({"reserved": true}) came after the description, which requires rdns
	// on every update: linodego v1.41.0 UpdateIPAddressV2.
	{"PUT", "/{apiVersion}/networking/ips/{address}", "rdns", "linodego v1.41.0, UpdateIPAddressV2"},
	// Allocating a reserved address for no Linode ({"reserved": true}) came after it too:
	// linodego v1.41.0 AllocateReserveIP.
	{"POST", "/{apiVersion}/networking/ips", "linode_id", "linodego v1.41.0, AllocateReserveIP"},
}

// markOptional applies optionalFields to the loaded description.
func markOptional(doc *openapi3.T) {
	for _, f := range optionalFields {
		item := doc.Paths.Value(f.path)
		if item == nil || item.GetOperation(f.method) == nil || item.GetOperation(f.method).RequestBody == nil {
			continue
		}
		media := item.GetOperation(f.method).RequestBody.Value.Content.Get("application/json")
		if media == nil {
			continue
		}
		for _, s := range append([]*openapi3.Schema{media.Schema.Value}, members(media.Schema.Value)...) {
			s.Required = slices.DeleteFunc(slices.Clone(s.Required), func(name string) bool { return name == f.field })
		}
	}
}

// members are the schemas of s's allOf, anyOf and oneOf, at any depth.
func members(s *openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, member := range group {
			if member.Value != nil {
				out = append(out, member.Value)
				out = append(out, members(member.Value)...)
			}
		}
	}
	return out
}

// withoutLinodeInterfaces leaves a Linode create's interfaces out of the description's check when
// they are Linode interfaces (interface_generation "linode"): the description knows only
// configuration profile interfaces, as Linode interfaces came after it (linodego v1.69.1,
// CreateInstance with LinodeInterfaces); the Go rules check them (CreateLinodeInterfaceSchema).
func withoutLinodeInterfaces(method, path string, body []byte) []byte {
	if method != "POST" || path != "/{apiVersion}/linode/instances" {
		return body
	}
	var object map[string]any
	if json.Unmarshal(body, &object) != nil || object["interface_generation"] != "linode" {
		return body
	}
	delete(object, "interfaces")
	stripped, err := json.Marshal(object)
	if err != nil {
		return body
	}
	return stripped
}

// extraEnumValues are values newer than the description of a field it enumerates.
var extraEnumValues = []struct {
	method, path string
	field        string
	value        string
	source       string
}{
	// A firewall's device may be a Linode interface: linodego v1.69.1 FirewallDeviceLinodeInterface.
	{"POST", "/{apiVersion}/networking/firewalls/{firewallId}/devices", "type", "linode_interface", "linodego v1.69.1, FirewallDeviceLinodeInterface"},
}

// markExtraEnumValues applies extraEnumValues to the loaded description.
func markExtraEnumValues(doc *openapi3.T) {
	for _, f := range extraEnumValues {
		item := doc.Paths.Value(f.path)
		if item == nil || item.GetOperation(f.method) == nil || item.GetOperation(f.method).RequestBody == nil {
			continue
		}
		media := item.GetOperation(f.method).RequestBody.Value.Content.Get("application/json")
		if media == nil {
			continue
		}
		for _, s := range descend(media.Schema.Value, f.field) {
			if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(f.value)) {
				s.Enum = append(slices.Clone(s.Enum), f.value)
			}
		}
	}
}

// lenientPattern matches what Go's regexp cannot compile: the description's label patterns use
// Perl lookahead ("(?!--|__|\.\.)"), which RE2 lacks. The Go rules check the fields that matter.
type lenientPattern struct{}

func (lenientPattern) MatchString(string) bool { return true }

func compilePattern(expr string) (openapi3.RegexMatcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return lenientPattern{}, nil
	}
	return re, nil
}

// markNullable applies nullableFields to the loaded description.
func markNullable(doc *openapi3.T) {
	for _, f := range nullableFields {
		item := doc.Paths.Value(f.path)
		if item == nil || item.GetOperation(f.method) == nil || item.GetOperation(f.method).RequestBody == nil {
			continue
		}
		media := item.GetOperation(f.method).RequestBody.Value.Content.Get("application/json")
		if media == nil {
			continue
		}
		schemas := []*openapi3.Schema{media.Schema.Value}
		for _, step := range f.field {
			var next []*openapi3.Schema
			for _, s := range schemas {
				next = append(next, descend(s, step)...)
			}
			schemas = next
		}
		for _, s := range schemas {
			s.Nullable = true
		}
	}
}

// descend returns the schemas of a property ("[]": an array's items) of s, through its allOf,
// anyOf and oneOf members.
func descend(s *openapi3.Schema, step string) []*openapi3.Schema {
	var out []*openapi3.Schema
	if step == "[]" {
		if s.Items != nil && s.Items.Value != nil {
			out = append(out, s.Items.Value)
		}
	} else if p := s.Properties[step]; p != nil && p.Value != nil {
		out = append(out, p.Value)
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, member := range group {
			if member.Value != nil {
				out = append(out, descend(member.Value, step)...)
			}
		}
	}
	return out
}
