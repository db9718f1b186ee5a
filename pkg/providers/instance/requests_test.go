package instance_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/examples"
)

// What instance mode sends Linode, read on the wire, for the classes a new user starts from:
// examples/instance.yaml, the vpc-nat class of docs/instance-mode.md, and its legacy_config interfaces.

const (
	instanceCreateRoute = "POST " + instancesRoute
	configUpdateRoute   = "PUT " + instancesRoute + "/{linodeId}/configs/{configId}"
)

// sentBody is the body of the one request the provider sent to route, as JSON.
func sentBody(route string) map[string]any {
	GinkgoHelper()
	sent := emu.SentTo(route)
	Expect(sent).To(HaveLen(1), "requests to %s", route)
	body, err := sent[0].Object()
	Expect(err).ToNot(HaveOccurred())
	return body
}

// asJSON is v as the generic JSON a body decodes to, to compare bodies with.
func asJSON(v any) any {
	GinkgoHelper()
	encoded, err := json.Marshal(v)
	Expect(err).ToNot(HaveOccurred())
	var out any
	Expect(json.Unmarshal(encoded, &out)).To(Succeed())
	return out
}

// expectNoNulls: no request the provider sent has a null anywhere, which would be a field the
// user did not set.
func expectNoNulls() {
	GinkgoHelper()
	for _, request := range emu.Sent() {
		if request.Method == http.MethodGet || len(request.Body) == 0 {
			continue
		}
		body, err := request.Object()
		Expect(err).ToNot(HaveOccurred())
		Expect(nullsIn(body, "")).To(BeEmpty(), "%s", request)
	}
}

func nullsIn(v any, at string) []string {
	switch v := v.(type) {
	case nil:
		return []string{at}
	case map[string]any:
		var nulls []string
		for key, value := range v {
			nulls = append(nulls, nullsIn(value, at+"."+key)...)
		}
		return nulls
	case []any:
		var nulls []string
		for i, value := range v {
			nulls = append(nulls, nullsIn(value, fmt.Sprintf("%s[%d]", at, i))...)
		}
		return nulls
	}
	return nil
}

// prodNodes is the README's VPC "prod" and its subnet "nodes".
func prodNodes() (vpcID, subnetID int) {
	GinkgoHelper()
	vpcID, err := emu.AddVPC("prod", test.Region)
	Expect(err).ToNot(HaveOccurred())
	subnetID, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
	Expect(err).ToNot(HaveOccurred())
	return vpcID, subnetID
}

var _ = Describe("What a launch sends Linode", func() {
	BeforeEach(func() { emu.RecordSent() })
	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			for _, request := range emu.Sent() {
				GinkgoWriter.Println(request)
			}
		}
	})

	It("creates the Linode of examples/instance.yaml with the fields the class sets, and nothing else", func() {
		example, _, err := examples.File("instance.yaml")
		Expect(err).ToNot(HaveOccurred())
		launched(nodeClaimOf(readyNodeClass(example.Spec), "g6-standard-2"))
		body := sentBody(instanceCreateRoute)
		Expect(lo.Keys(body)).To(ConsistOf("region", "type", "label", "image", "tags", "authorized_keys", "metadata"))
		Expect(body).To(HaveKeyWithValue("image", "linode/ubuntu24.04"))
		Expect(body["authorized_keys"]).To(HaveLen(1), "a key nobody holds instead of a root password: keys suffice")
		expectNoNulls()
	})

	It("gives the vpc-nat class of docs/instance-mode.md Linode interfaces whose VPC IPv6 Linode accepts, and changes only the boot profile's devices", func() {
		readme, err := examples.DocsNodeClass("docs/instance-mode.md", "vpc-nat")
		Expect(err).ToNot(HaveOccurred())
		_, subnetID := prodNodes()
		firewall := emu.AddFirewall("nodes")
		for i := range readme.Spec.Interfaces {
			readme.Spec.Interfaces[i].FirewallID = &firewall
		}
		launched(nodeClaimOf(readyNodeClass(readme.Spec), "g6-standard-4"))

		body := sentBody(instanceCreateRoute)
		Expect(body).To(HaveKeyWithValue("interface_generation", "linode"))
		Expect(body["interfaces"]).To(Equal(asJSON([]map[string]any{
			{
				"firewall_id": firewall, "default_route": map[string]any{"ipv4": true},
				"vpc": map[string]any{
					"subnet_id": subnetID,
					"ipv4": map[string]any{
						"addresses": []map[string]any{{"address": "auto", "primary": true, "nat_1_1_address": "auto"}},
						"ranges":    []map[string]any{{"range": "/28"}},
					},
					// A VPC interface's IPv6 ranges are "auto" or a /64 CIDR of the subnet's range; the
					// prefix length is the public interface's form.
					"ipv6": map[string]any{"slaac": []map[string]any{{"range": "auto"}}, "is_public": true},
				},
			},
			{
				"firewall_id": firewall, "default_route": map[string]any{"ipv6": true},
				"public": map[string]any{"ipv6": map[string]any{"ranges": []map[string]any{{"range": "/64"}}}},
			},
		})))

		update := sentBody(configUpdateRoute)
		Expect(lo.Keys(update)).To(ConsistOf("devices"), "a profile update that sends interfaces: null, init_rd: null, comments or memory_limit 0 would reset them")
		Expect(update["devices"]).To(HaveKey("sdc"), "the containerd disk after the boot disk and swap")
		expectNoNulls()
	})

	It("gives a legacy_config VPC interface its VPC, IPv4 and IPv6 as Linode's rules want them", func() {
		vpcID, subnetID := prodNodes()
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLegacyConfig),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{
					VPCConfiguration: v1.VPCConfiguration{VPCLabel: lo.ToPtr("prod"), SubnetLabel: lo.ToPtr("nodes"), NAT1To1: lo.ToPtr(true)},
					IPv4Ranges:       []string{"10.0.0.16/28"},
					IPv6:             &v1.VPCIPv6{SLAAC: lo.ToPtr(true), Range: lo.ToPtr(true), Public: lo.ToPtr(true)},
				}},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64"}}},
			},
		})
		launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		body := sentBody(instanceCreateRoute)
		Expect(body).To(HaveKeyWithValue("interface_generation", "legacy_config"))
		Expect(body["interfaces"]).To(Equal(asJSON([]map[string]any{
			{
				"purpose": "vpc", "primary": true, "subnet_id": subnetID, "vpc_id": vpcID,
				"ipv4":      map[string]any{"nat_1_1": "any"},
				"ip_ranges": []string{"10.0.0.16/28"},
				"ipv6":      map[string]any{"slaac": []map[string]any{{"range": "auto"}}, "ranges": []map[string]any{{"range": "auto"}}, "is_public": true},
			},
			{"purpose": "public"},
		})))
		Expect(sentBody("POST /networking/ipv6/ranges")).To(HaveKeyWithValue("prefix_length", BeNumerically("==", 64)),
			"the public interface's /64 is routed once the Linode exists")
		expectNoNulls()
	})

	It("gives a VPC interface with neither NAT nor IPv6 an ipv4 object, which Linode wants on every VPC interface", func() {
		vpcID, subnetID := prodNodes()
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{VPC: &v1.VPCConfiguration{VPCLabel: lo.ToPtr("prod"), SubnetLabel: lo.ToPtr("nodes")}})
		launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		Expect(sentBody(instanceCreateRoute)["interfaces"]).To(Equal(asJSON([]map[string]any{
			{"purpose": "public", "primary": true},
			{"purpose": "vpc", "subnet_id": subnetID, "vpc_id": vpcID, "ipv4": map[string]any{}},
		})))
		expectNoNulls()
	})

	It("refuses a legacy_config VPC interface's range by prefix length, which only Linode interfaces take, naming the field", func() {
		prodNodes()
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"),
			Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCLabel: lo.ToPtr("prod"), SubnetLabel: lo.ToPtr("nodes")}, IPv4Ranges: []string{"10.0.0.32/28", "/28"}}},
			},
		}}))
		condition := nodeClass.StatusConditions().Get(v1.ConditionTypeValidationSucceeded)
		Expect(condition.Status).To(Equal(metav1.ConditionFalse), "the class is %v", nodeClass.Status.Conditions)
		Expect(condition.Message).To(And(ContainSubstring("interfaces[1].vpc.ipv4Ranges[1]"), ContainSubstring(`"/28"`), ContainSubstring("interfaceGeneration: linode")))
		Expect(slices.ContainsFunc(emu.Sent(), func(r test.SentRequest) bool { return r.Matches(instanceCreateRoute) })).To(BeFalse())
	})
})
