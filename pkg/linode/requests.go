package linode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/linode/linodego"
)

// The request bodies below are the provider's own where linodego v1.69.1's option types write
// what Linode refuses or cannot write what it asks for: a pool create always carries "disks",
// "labels" and "taints", null or empty, which the user never set (and the API description's
// taints take at least one item); a configuration profile update always carries "interfaces":
// null, "init_rd": null, "comments": "" and "memory_limit": 0, which would drop the node's VPC
// interface and memory limit; a configuration profile's VPC interface has no vpc_id, which
// Linode's request rules require; a VPC interface's IPv6 "is_public" is null when unset. Each
// type carries what the provider sets and nothing else, and the client sends it through
// linodego's own request path (retries, pacing and errors are linodego's).
//
// Sources, cited where a field is kept: the API description (../shared/linode-api/openapi.yaml,
// 4.189.0), the request types of Linode's Cloud Manager (npm @linode/api-v4 0.158.0) and its
// request rules (npm @linode/validation 0.83.0), and the recorded answers of the real API
// (../shared/linode-api/recordings).

// NodePoolCreateOptions is the body of POST /lke/clusters/{clusterId}/pools.
type NodePoolCreateOptions struct {
	Count int    `json:"count"`
	Type  string `json:"type"`
	// Label names the pool (@linode/api-v4 CreateNodePoolData.label).
	Label string   `json:"label,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	// Labels and Taints are put on every node of the pool; only what Linode's rules accept (see
	// the LKE provider's poolLabels).
	Labels linodego.LKENodePoolLabels `json:"labels,omitempty"`
	Taints []PoolTaint                `json:"taints,omitempty"`
	// Autoscaler, in the API description.
	Autoscaler *linodego.LKENodePoolAutoscaler `json:"autoscaler,omitempty"`
	// FirewallID, K8sVersion and UpdateStrategy: @linode/api-v4 CreateNodePoolData, the last two
	// on LKE Enterprise clusters only.
	FirewallID     *int                                `json:"firewall_id,omitempty"`
	K8sVersion     *string                             `json:"k8s_version,omitempty"`
	UpdateStrategy *linodego.LKENodePoolUpdateStrategy `json:"update_strategy,omitempty"`
	// DiskEncryption is in no request type or description, but the real API took it on a pool
	// create (recordings/TestLKENodePool_Update.yaml).
	DiskEncryption *linodego.InstanceDiskEncryption `json:"disk_encryption,omitempty"`
}

// PoolTaint is a taint of a pool create. The API description requires its value, "" for a taint
// without one (POST /lke/clusters/{clusterId}/pools: taints[].value "can be specified as an empty
// string"), which linodego's LKENodePoolTaint leaves out.
type PoolTaint struct {
	Key    string                          `json:"key"`
	Value  string                          `json:"value"`
	Effect linodego.LKENodePoolTaintEffect `json:"effect"`
}

// ConfigUpdateOptions is the body of PUT /linode/instances/{linodeId}/configs/{configId}: the
// profile's device slots, which the API replaces as a whole, and nothing else of the profile.
type ConfigUpdateOptions struct {
	Devices *linodego.InstanceConfigDeviceMap `json:"devices,omitempty"`
}

// InstanceCreateOptions is the body of POST /linode/instances: linodego's options, whose
// Interfaces and LinodeInterfaces stay unset, and the Linode's interfaces in the generation
// InterfaceGeneration names.
type InstanceCreateOptions struct {
	linodego.InstanceCreateOptions
	// ConfigInterfaces are the interfaces of the Linode's configuration profile (legacy_config).
	ConfigInterfaces []ConfigInterface
	// LinodeInterfaces are the Linode's own interfaces (interface_generation linode). They stand
	// in for linodego's field of the same name.
	LinodeInterfaces []LinodeInterface
}

// MarshalJSON writes linodego's options with the interfaces of the generation the options have.
func (o InstanceCreateOptions) MarshalJSON() ([]byte, error) {
	if o.Interfaces != nil || o.InstanceCreateOptions.LinodeInterfaces != nil {
		return nil, errors.New("set ConfigInterfaces or LinodeInterfaces, not linodego's interface fields")
	}
	if o.ConfigInterfaces != nil && o.LinodeInterfaces != nil {
		return nil, errors.New("a Linode has configuration profile interfaces or Linode interfaces, not both")
	}
	body, err := json.Marshal(o.InstanceCreateOptions)
	if err != nil {
		return nil, err
	}
	var interfaces any
	switch {
	case o.ConfigInterfaces != nil:
		interfaces = o.ConfigInterfaces
	case o.LinodeInterfaces != nil:
		interfaces = o.LinodeInterfaces
	default:
		return body, nil
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	if fields["interfaces"], err = json.Marshal(interfaces); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// ConfigInterface is an interface of a configuration profile (API description:
// POST /linode/instances, interfaces; @linode/api-v4 InterfacePayload).
type ConfigInterface struct {
	Purpose linodego.ConfigInterfacePurpose `json:"purpose"`
	Primary bool                            `json:"primary,omitempty"`
	// Label and IPAMAddress are a VLAN interface's.
	Label       string `json:"label,omitempty"`
	IPAMAddress string `json:"ipam_address,omitempty"`
	// SubnetID and VPCID are a VPC interface's, both required by Linode's rules
	// (@linode/validation ConfigProfileInterfaceSchema).
	SubnetID *int `json:"subnet_id,omitempty"`
	VPCID    *int `json:"vpc_id,omitempty"`
	// IPv4 is a VPC interface's: Linode's rules want it, or IPv6, on every VPC interface; empty,
	// the interface takes an address of the subnet.
	IPv4 *ConfigInterfaceIPv4 `json:"ipv4,omitempty"`
	IPv6 *VPCInterfaceIPv6    `json:"ipv6,omitempty"`
	// IPRanges are IPv4 CIDRs of the subnet routed to the interface; not prefix lengths.
	IPRanges []string `json:"ip_ranges,omitempty"`
}

// ConfigInterfaceIPv4 is a configuration profile VPC interface's IPv4.
type ConfigInterfaceIPv4 struct {
	// VPC is the interface's address in the subnet; unset, Linode picks one.
	VPC string `json:"vpc,omitempty"`
	// NAT1To1 "any" maps the Linode's public IPv4 address onto the VPC address.
	NAT1To1 string `json:"nat_1_1,omitempty"`
}

// VPCInterfaceIPv6 is a VPC interface's IPv6, in either generation (@linode/validation
// ipv6Interface): each range is "auto" or a /64 CIDR of the subnet's IPv6 range, and there is at
// most one SLAAC entry.
type VPCInterfaceIPv6 struct {
	SLAAC    []IPv6Range `json:"slaac,omitempty"`
	Ranges   []IPv6Range `json:"ranges,omitempty"`
	IsPublic *bool       `json:"is_public,omitempty"`
}

// IPv6Range is one IPv6 range of an interface.
type IPv6Range struct {
	Range string `json:"range"`
}

// IPv6RangeAuto asks Linode for a /64 of the subnet's IPv6 range.
const IPv6RangeAuto = "auto"

// LinodeInterface is one of a Linode's own interfaces (interface_generation linode; linodego's
// LinodeInterfaceCreateOptions, with a VPC interface whose IPv6 sends no null).
type LinodeInterface struct {
	FirewallID   *int                                   `json:"firewall_id,omitempty"`
	DefaultRoute *linodego.InterfaceDefaultRoute        `json:"default_route,omitempty"`
	Public       *linodego.PublicInterfaceCreateOptions `json:"public,omitempty"`
	VPC          *VPCInterface                          `json:"vpc,omitempty"`
	VLAN         *linodego.VLANInterface                `json:"vlan,omitempty"`
}

// VPCInterface is a Linode interface in a VPC subnet.
type VPCInterface struct {
	SubnetID int                                     `json:"subnet_id"`
	IPv4     *linodego.VPCInterfaceIPv4CreateOptions `json:"ipv4,omitempty"`
	IPv6     *VPCInterfaceIPv6                       `json:"ipv6,omitempty"`
}

// sendJSON makes one request of the API with body as JSON through linodego's request path and decodes
// the answer into a T. Errors are linodego's: a *linodego.Error with the answer's status code and
// Linode's reasons.
func sendJSON[T any](ctx context.Context, client *linodego.Client, method, path string, body any) (*T, error) {
	encoded, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request body of %s %s: %w", method, path, err)
	}
	var result T
	resp, err := client.R(ctx).SetBody(string(encoded)).SetResult(&result).Execute(method, path)
	if err != nil {
		return nil, linodego.NewError(err)
	}
	if !resp.IsError() {
		return &result, nil
	}
	if apiErr, ok := resp.Error().(*linodego.APIError); ok && len(apiErr.Errors) > 0 {
		return nil, linodego.NewError(resp)
	}
	return nil, &linodego.Error{Code: resp.StatusCode(), Message: fmt.Sprintf("%s %s: %s", method, path, http.StatusText(resp.StatusCode())), Response: resp.RawResponse}
}
