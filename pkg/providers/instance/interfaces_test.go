package instance_test

import (
	"errors"
	"net/http"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	corecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const ipv6RangesRoute = "/networking/ipv6/ranges"

// subnetNodes is a subnet "nodes" of a VPC "cluster" in the test region.
func subnetNodes() (vpcID, subnetID int) {
	GinkgoHelper()
	vpcID, err := emu.AddVPC("cluster", test.Region)
	Expect(err).ToNot(HaveOccurred())
	subnetID, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
	Expect(err).ToNot(HaveOccurred())
	return vpcID, subnetID
}

// inSubnet is the class, which the NodeClass controller resolved to the subnet its VPC interface
// names.
func inSubnet(nodeClass *v1.LinodeNodeClass, vpcID, subnetID int) *v1.LinodeNodeClass {
	GinkgoHelper()
	Expect(nodeClass.Status.Subnet).To(Equal(&v1.ResolvedSubnet{ID: subnetID, VPCID: vpcID, Label: "nodes"}))
	return nodeClass
}

// relabelSubnet gives the VPC's subnet another label, as its owner may.
func relabelSubnet(vpcID, subnetID int, label string) {
	GinkgoHelper()
	_, err := emu.Client.UpdateVPCSubnet(ctx, vpcID, subnetID, linodego.VPCSubnetUpdateOptions{Label: label})
	Expect(err).ToNot(HaveOccurred())
}

// vpcNodes names the subnet "nodes" of the VPC "cluster".
var vpcNodes = v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("nodes")}

// linodeIDOf is the id of the Linode behind a provider ID.
func linodeIDOf(providerID string) int {
	GinkgoHelper()
	id, err := nodeprovider.ParseProviderID(providerID)
	Expect(err).ToNot(HaveOccurred())
	return id
}

var _ = Describe("Linode interfaces", func() {
	It("gives each interface its own firewall, the VPC interface a 1:1 NAT and the IPv4 default route, the public one an IPv6 range", func() {
		vpcID, subnetID := subnetNodes()
		vpcFirewall, publicFirewall := emu.AddFirewall("vpc"), emu.AddFirewall("public")
		nodeClass := inSubnet(readyNodeClass(v1.LinodeNodeClassSpec{
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCLabel: vpcNodes.VPCLabel, SubnetLabel: vpcNodes.SubnetLabel, NAT1To1: lo.ToPtr(true)}, IPv4Ranges: []string{"/28"}}, FirewallID: &vpcFirewall},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64"}}, FirewallID: &publicFirewall},
				{VLAN: &v1.VLANInterface{Label: "backplane", IPAMAddress: lo.ToPtr("10.10.0.1/24")}},
			},
			Kernel: lo.ToPtr("linode/latest-64bit"),
		}), vpcID, subnetID)
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id := linodeIDOf(created.Status.ProviderID)
		linode, err := emu.Client.GetInstance(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		Expect(linode.InterfaceGeneration).To(Equal(linodego.GenerationLinode))
		Expect(linodeOf(created.Status.ProviderID).FirewallID).To(BeZero(), "no Linode-wide firewall: each interface has its own")
		interfaces, err := emu.Client.ListInterfaces(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(interfaces).To(HaveLen(3))
		vpc, public, vlan := interfaces[0], interfaces[1], interfaces[2]

		Expect(vpc.VPC).ToNot(BeNil())
		Expect(vpc.VPC.SubnetID).To(Equal(subnetID))
		Expect(vpc.VPC.IPv4.Addresses).To(ConsistOf(And(
			HaveField("Address", HavePrefix("10.0.0.")),
			HaveField("NAT1To1Address", HaveValue(Equal(linode.IPv4[0].String()))),
		)), "the Linode's public address is the NAT of its VPC address")
		Expect(vpc.VPC.IPv4.Ranges).To(ConsistOf(HaveField("Range", HaveSuffix("/28"))))
		Expect(vpc.DefaultRoute.IPv4).To(HaveValue(BeTrue()))
		Expect(public.Public).ToNot(BeNil())
		Expect(public.Public.IPv6.Ranges).To(ConsistOf(HaveField("Range", HaveSuffix("/64"))))
		Expect(public.DefaultRoute.IPv4).To(HaveValue(BeFalse()))
		Expect(public.DefaultRoute.IPv6).To(HaveValue(BeTrue()))
		Expect(vlan.VLAN).To(Equal(&linodego.VLANInterface{VLANLabel: "backplane", IPAMAddress: lo.ToPtr("10.10.0.1/24")}))
		for iface, firewall := range map[int]int{vpc.ID: vpcFirewall, public.ID: publicFirewall} {
			firewalls, err := emu.Client.ListInterfaceFirewalls(ctx, id, iface, nil)
			Expect(err).ToNot(HaveOccurred())
			Expect(firewalls).To(ConsistOf(HaveField("ID", firewall)))
		}
		configs, err := emu.Client.ListInstanceConfigs(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(configs).To(ConsistOf(HaveField("Kernel", "linode/latest-64bit")))
	})

	It("puts the class's firewall on the public interface a Linode has by default", func() {
		firewall := emu.AddFirewall("nodes")
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode), FirewallID: &firewall})
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id := linodeIDOf(created.Status.ProviderID)
		Expect(linodeOf(created.Status.ProviderID).FirewallID).To(BeZero())
		interfaces, err := emu.Client.ListInterfaces(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(interfaces).To(ConsistOf(HaveField("Public", Not(BeNil()))))
		firewalls, err := emu.Client.ListInterfaceFirewalls(ctx, id, interfaces[0].ID, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(firewalls).To(ConsistOf(HaveField("ID", firewall)))
	})

	It("replaces nodes whose interface firewall changes, or whose VPC interface is not on the subnet the class resolves to", func() {
		vpcID, subnetID := subnetNodes()
		firewall, stricter := emu.AddFirewall("nodes"), emu.AddFirewall("stricter")
		nodeClass := inSubnet(readyNodeClass(v1.LinodeNodeClassSpec{
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces:          []v1.NetworkInterface{{VPC: &v1.VPCInterface{VPCConfiguration: vpcNodes}, FirewallID: &firewall}, {Public: &v1.PublicInterface{}, FirewallID: &firewall}},
		}), vpcID, subnetID)
		nodeClaim := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		nodeClaim.Spec.NodeClassRef = test.NodeClassRef(nodeClass.Name)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		By("resolving the class's subnet to another one: a new subnet took the label")
		relabelSubnet(vpcID, subnetID, "retired")
		newSubnet, err := emu.AddVPCSubnet(vpcID, "nodes", "10.0.1.0/24")
		Expect(err).ToNot(HaveOccurred())
		nodeClass = resolved(nodeClass)
		Expect(nodeClass.Status.Subnet.ID).To(Equal(newSubnet))
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(instance.DriftReasonSubnet))
		Expect(emu.Counters()).To(HaveKey("GET /linode/instances/{linodeId}/interfaces"), "the subnet is the Linode's own interface's")
		relabelSubnet(vpcID, newSubnet, "spare")
		relabelSubnet(vpcID, subnetID, "nodes")
		nodeClass = inSubnet(resolved(nodeClass), vpcID, subnetID)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		By("changing the VPC interface's firewall")
		nodeClass.Spec.Interfaces[0].FirewallID = &stricter
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(corecloudprovider.DriftReasonNodeClass))
	})
})

var _ = Describe("Configuration profile interfaces", func() {
	It("lays out the class's interfaces in the profile, the first public or VPC one primary, with the Linode-wide firewall", func() {
		vpcID, subnetID := subnetNodes()
		firewall := emu.AddFirewall("nodes")
		nodeClass := inSubnet(readyNodeClass(v1.LinodeNodeClassSpec{
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLegacyConfig),
			FirewallID:          &firewall,
			Interfaces: []v1.NetworkInterface{
				{VLAN: &v1.VLANInterface{Label: "backplane", IPAMAddress: lo.ToPtr("10.10.0.1/24")}},
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCLabel: vpcNodes.VPCLabel, SubnetLabel: vpcNodes.SubnetLabel, NAT1To1: lo.ToPtr(true)}}},
			},
		}), vpcID, subnetID)
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id := linodeIDOf(created.Status.ProviderID)
		linode, err := emu.Client.GetInstance(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		Expect(linode.InterfaceGeneration).To(Equal(linodego.GenerationLegacyConfig))
		Expect(linodeOf(created.Status.ProviderID).FirewallID).To(Equal(firewall))
		configs, err := emu.Client.ListInstanceConfigs(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(configs).To(HaveLen(1))
		Expect(configs[0].Interfaces).To(HaveExactElements(
			And(HaveField("Purpose", linodego.InterfacePurposeVLAN), HaveField("Label", "backplane"), HaveField("IPAMAddress", "10.10.0.1/24"), HaveField("Primary", false)),
			And(HaveField("Purpose", linodego.InterfacePurposeVPC), HaveField("SubnetID", HaveValue(Equal(subnetID))), HaveField("Primary", true),
				HaveField("IPv4.NAT1To1", HaveValue(Equal(linode.IPv4[0].String())))),
		))
	})

	Context("with IPv6 ranges on the public interface", func() {
		var nodeClass *v1.LinodeNodeClass
		BeforeEach(func() {
			nodeClass = readyNodeClass(v1.LinodeNodeClassSpec{
				Interfaces: []v1.NetworkInterface{{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64", "/56"}}}},
			})
		})
		routedRanges := func(id int) []int {
			GinkgoHelper()
			addresses, err := emu.Client.GetInstanceIPAddresses(ctx, id)
			Expect(err).ToNot(HaveOccurred())
			return lo.Map(addresses.IPv6.Global, func(r linodego.IPv6Range, _ int) int { return r.Prefix })
		}

		It("routes them to the Linode once it exists", func() {
			created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
			Expect(routedRanges(linodeIDOf(created.Status.ProviderID))).To(ConsistOf(64, 56))
		})

		It("routes each once when a launch is retried after Linode's answer to a range was lost", func() {
			nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
			emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: ipv6RangesRoute, LoseResponse: emulator.LoseWith502, Count: 1})
			_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
			Expect(err).To(HaveOccurred(), "the answer was lost")
			Expect(emu.Instances()).To(HaveLen(1))

			emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: ipv6RangesRoute, Sequence: []int{http.StatusInternalServerError}, Count: 1})
			_, err = cloud.CloudProvider.Create(ctx, nodeClaim)
			Expect(err).To(MatchError(ContainSubstring("routing a /56 IPv6 range")))

			created := launched(nodeClaim)
			again := launched(nodeClaim)
			Expect(again.Status.ProviderID).To(Equal(created.Status.ProviderID))
			Expect(emu.Instances()).To(HaveLen(1))
			Expect(routedRanges(linodeIDOf(created.Status.ProviderID))).To(ConsistOf(64, 56))
			Expect(emu.Counters()["POST "+ipv6RangesRoute]).To(Equal(3), "the lost /64, the refused /56, the /56")
		})
	})
})

var _ = Describe("Placement group compliance", func() {
	It("holds launches while the class's placement group is not compliant, naming the group", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{
			PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread"), Policy: lo.ToPtr("flexible"), RequireCompliance: lo.ToPtr(true)},
		})
		launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		group := nodeClass.Status.PlacementGroup.ID
		Expect(emu.SetPlacementGroupCompliance(group, false)).To(Succeed())

		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeTrue(), "got %v", err)
		Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeFalse(), "the plan is not at fault: the NodeClaim waits")
		Expect(createErr.ConditionReason).To(Equal(instance.ReasonPlacementGroupNonCompliant))
		Expect(createErr.ConditionMessage).To(ContainSubstring(`placement group "spread"`))
		Expect(emu.Instances()).To(HaveLen(1))
		Expect(ExpectExists(ctx, env.Client, nodeClass).LaunchRejected()).To(BeFalse(), "the class is not at fault either")

		Expect(emu.SetPlacementGroupCompliance(group, true)).To(Succeed())
		launched(nodeClaim)
		Expect(emu.Instances()).To(HaveLen(2))
	})

	It("launches into a group that is not compliant when the class does not require compliance", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread"), Policy: lo.ToPtr("flexible")}})
		Expect(emu.SetPlacementGroupCompliance(nodeClass.Status.PlacementGroup.ID, false)).To(Succeed())
		launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		Expect(emu.Counters()).ToNot(HaveKey("GET /placement/groups/{groupId}"))
	})
})
