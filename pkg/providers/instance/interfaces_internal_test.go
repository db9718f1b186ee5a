package instance

import (
	"encoding/json"
	"testing"

	"github.com/linode/linodego"
	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// The emulator does not model IPv6 in VPCs nor a configuration profile VPC interface's ip_ranges:
// what the create sends for them is checked here, in the form Linode's API reference gives
// (a /64 of the subnet's IPv6 range for SLAAC and for a routed range).
func TestVPCIPv6AndRangesOnTheWire(t *testing.T) {
	vpc := v1.NetworkInterface{VPC: &v1.VPCInterface{
		VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(7)},
		IPv4Ranges:       []string{"/28"},
		IPv6:             &v1.VPCIPv6{SLAAC: lo.ToPtr(true), Range: lo.ToPtr(true), Public: lo.ToPtr(true)},
	}}
	for _, tc := range []struct {
		generation v1.InterfaceGeneration
		want       string
	}{
		{v1.InterfaceGenerationLinode, `{"default_route":{"ipv4":true},"vpc":{"subnet_id":7,"ipv4":{"addresses":[{"address":"auto","primary":true}],"ranges":[{"range":"/28"}]},"ipv6":{"slaac":[{"range":"/64"}],"ranges":[{"range":"/64"}],"is_public":true}}}`},
		{v1.InterfaceGenerationLegacyConfig, `{"purpose":"vpc","primary":true,"subnet_id":7,"ipv6":{"slaac":[{"range":"/64"}],"ranges":[{"range":"/64"}],"is_public":true},"ip_ranges":["/28"]}`},
	} {
		t.Run(string(tc.generation), func(t *testing.T) {
			nodeClass := &v1.LinodeNodeClass{
				Spec:   v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(tc.generation), Interfaces: []v1.NetworkInterface{vpc}},
				Status: v1.LinodeNodeClassStatus{Subnet: &v1.ResolvedSubnet{ID: 7}},
			}
			var opts linodego.InstanceCreateOptions
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
