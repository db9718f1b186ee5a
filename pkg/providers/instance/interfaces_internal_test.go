package instance

import (
	"encoding/json"
	"testing"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// The emulator does not model IPv6 in VPCs: what the create sends for it is checked here, in the
// form Linode's request rules take (@linode/validation ipv6Interface): "auto" or a /64 CIDR of the
// subnet's IPv6 range for the SLAAC address and a routed range, at most one SLAAC entry, and
// is_public only when the class sets it. The prefix length ("/64") is the public interface's form.
func TestVPCIPv6AndRangesOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		generation v1.InterfaceGeneration
		ranges     []string
		ipv6       v1.VPCIPv6
		want       string
	}{
		{v1.InterfaceGenerationLinode, []string{"/28"}, v1.VPCIPv6{SLAAC: lo.ToPtr(true), Range: lo.ToPtr(true), Public: lo.ToPtr(true)},
			`{"default_route":{"ipv4":true},"vpc":{"subnet_id":7,"ipv4":{"addresses":[{"address":"auto","primary":true}],"ranges":[{"range":"/28"}]},"ipv6":{"slaac":[{"range":"auto"}],"ranges":[{"range":"auto"}],"is_public":true}}}`},
		{v1.InterfaceGenerationLinode, nil, v1.VPCIPv6{SLAAC: lo.ToPtr(true)},
			`{"default_route":{"ipv4":true},"vpc":{"subnet_id":7,"ipv4":{"addresses":[{"address":"auto","primary":true}]},"ipv6":{"slaac":[{"range":"auto"}]}}}`},
		{v1.InterfaceGenerationLegacyConfig, []string{"10.0.0.16/28"}, v1.VPCIPv6{SLAAC: lo.ToPtr(true), Range: lo.ToPtr(true), Public: lo.ToPtr(true)},
			`{"purpose":"vpc","primary":true,"subnet_id":7,"vpc_id":3,"ipv4":{},"ipv6":{"slaac":[{"range":"auto"}],"ranges":[{"range":"auto"}],"is_public":true},"ip_ranges":["10.0.0.16/28"]}`},
		{v1.InterfaceGenerationLegacyConfig, nil, v1.VPCIPv6{Range: lo.ToPtr(true)},
			`{"purpose":"vpc","primary":true,"subnet_id":7,"vpc_id":3,"ipv4":{},"ipv6":{"ranges":[{"range":"auto"}]}}`},
	} {
		t.Run(string(tc.generation), func(t *testing.T) {
			vpc := v1.NetworkInterface{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(7)}, IPv4Ranges: tc.ranges, IPv6: &tc.ipv6}}
			nodeClass := &v1.LinodeNodeClass{
				Spec:   v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(tc.generation), Interfaces: []v1.NetworkInterface{vpc}},
				Status: v1.LinodeNodeClassStatus{Subnet: &v1.ResolvedSubnet{ID: 7, VPCID: 3}},
			}
			var opts linode.InstanceCreateOptions
			setInterfaces(&opts, nodeClass)
			raw, err := json.Marshal(opts)
			if err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Generation string            `json:"interface_generation"`
				Interfaces []json.RawMessage `json:"interfaces"`
			}
			if err := json.Unmarshal(raw, &sent); err != nil {
				t.Fatal(err)
			}
			if sent.Generation != string(tc.generation) || len(sent.Interfaces) != 1 || string(sent.Interfaces[0]) != tc.want {
				t.Errorf("sent interface_generation %q, interfaces %s; want %s", sent.Generation, sent.Interfaces, tc.want)
			}
		})
	}
}
