package instance_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// expectCondition returns the class's condition of the type, checking its status and reason.
func expectCondition(nodeClass *v1.LinodeNodeClass, conditionType string, status metav1.ConditionStatus, reason string) string {
	GinkgoHelper()
	condition := nodeClass.StatusConditions().Get(conditionType)
	Expect(condition).ToNot(BeNil(), "no %s condition", conditionType)
	Expect(condition.Status).To(Equal(status), "%s: %s", conditionType, condition.Message)
	Expect(condition.Reason).To(Equal(reason))
	Expect(nodeClass.StatusConditions().Root().IsTrue()).To(Equal(status == metav1.ConditionTrue && nodeClass.StatusConditions().IsTrue(
		v1.ConditionTypeImageReady, v1.ConditionTypeSubnetReady, v1.ConditionTypePlacementGroupReady, v1.ConditionTypeValidationSucceeded)))
	return condition.Message
}

var _ = Describe("Image", func() {
	DescribeTable("resolves image into status.image, refusing images without cloud-init",
		func(image string, status metav1.ConditionStatus, reason, message string) {
			nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{Image: &image}}))
			Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, status, reason)).To(ContainSubstring(message))
			if status == metav1.ConditionTrue {
				Expect(nodeClass.Status.Image).To(Equal(&v1.ResolvedImage{ID: image, Label: "Ubuntu 24.04 LTS"}))
			} else {
				Expect(nodeClass.Status.Image).To(BeNil())
			}
		},
		Entry("an image with cloud-init", "linode/ubuntu24.04", metav1.ConditionTrue, v1.ConditionTypeImageReady, ""),
		Entry("no such image", "linode/no-such-image", metav1.ConditionFalse, instance.ReasonImageNotFound, `image "linode/no-such-image" does not exist`),
		Entry("an image without cloud-init", "linode/slackware15.0", metav1.ConditionFalse, instance.ReasonImageWithoutCloudInit, "linode/slackware15.0 (Slackware 15.0) lacks the cloud-init capability"),
	)

	It("needs an image in instance mode", func() {
		nodeClass := resolved(test.LinodeNodeClass())
		Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionFalse, instance.ReasonImageRequired)).To(ContainSubstring("set image"))
	})

	It("resolves imageSelector to the newest match with cloud-init that is not deprecated", func() {
		now := emu.Clock.Now()
		emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.35", Created: now.Add(-72 * time.Hour), CloudInit: true})
		want := emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.36", Created: now.Add(-48 * time.Hour), CloudInit: true})
		emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.36-nocloudinit", Created: now.Add(-24 * time.Hour)})
		emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.37-rc", Created: now, CloudInit: true, Deprecated: true})
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{ImageSelector: &v1.ImageSelector{Label: lo.ToPtr("k8s-node")}}}))
		expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionTrue, v1.ConditionTypeImageReady)
		Expect(nodeClass.Status.Image.ID).To(Equal(want))

		By("saying why when nothing matches")
		nodeClass.Spec.ImageSelector = &v1.ImageSelector{Label: lo.ToPtr("Ubuntu 30")}
		nodeClass = resolved(nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionFalse, instance.ReasonImageNotFound)).To(ContainSubstring(`label starting with "Ubuntu 30"`))

		By("selecting by vendor among the public images")
		nodeClass.Spec.ImageSelector = &v1.ImageSelector{Vendor: lo.ToPtr("Slackware")}
		nodeClass = resolved(nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionFalse, instance.ReasonImageWithoutCloudInit)).To(ContainSubstring("linode/slackware15.0"))
	})
})

var _ = Describe("VPC subnet", func() {
	var vpcID, subnetID int
	BeforeEach(func() {
		var err error
		vpcID, err = emu.AddVPC("cluster", test.Region)
		Expect(err).ToNot(HaveOccurred())
		subnetID, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
		Expect(err).ToNot(HaveOccurred())
		elsewhere, err := emu.AddVPC("cluster", "us-sea")
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.AddVPCSubnet(elsewhere, "pods", "10.1.0.0/24")
		Expect(err).ToNot(HaveOccurred())
	})

	DescribeTable("resolves vpc into status.subnet, in the region nodes launch in",
		func(vpc func() *v1.VPCConfiguration, found bool, message string) {
			nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{Image: lo.ToPtr("linode/ubuntu24.04"), VPC: vpc()}}))
			if found {
				expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionTrue, v1.ConditionTypeSubnetReady)
				Expect(nodeClass.Status.Subnet).To(Equal(&v1.ResolvedSubnet{ID: subnetID, VPCID: vpcID, Label: "nodes"}))
				return
			}
			Expect(expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionFalse, instance.ReasonSubnetNotFound)).To(ContainSubstring(message))
			Expect(nodeClass.Status.Subnet).To(BeNil())
		},
		Entry("by id", func() *v1.VPCConfiguration { return &v1.VPCConfiguration{SubnetID: &subnetID} }, true, ""),
		Entry("by labels", func() *v1.VPCConfiguration {
			return &v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("nodes")}
		}, true, ""),
		Entry("an unknown subnet id", func() *v1.VPCConfiguration { return &v1.VPCConfiguration{SubnetID: lo.ToPtr(subnetID + 100)} }, false, "is not in any VPC of region us-ord"),
		Entry("a subnet of a VPC in another region", func() *v1.VPCConfiguration {
			return &v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("pods")}
		}, false, `vpc: subnet "pods" of VPC "cluster" is not in any VPC of region us-ord`),
		Entry("by VPC id, its only subnet", func() *v1.VPCConfiguration { return &v1.VPCConfiguration{VPCID: &vpcID} }, true, ""),
		Entry("by VPC id and subnet label", func() *v1.VPCConfiguration {
			return &v1.VPCConfiguration{VPCID: &vpcID, SubnetLabel: lo.ToPtr("nodes")}
		}, true, ""),
		// The VPCs' ids are known once BeforeEach ran; the messages name them after "VPC ".
		Entry("by the id of a VPC in another region", func() *v1.VPCConfiguration { return &v1.VPCConfiguration{VPCID: lo.ToPtr(vpcID + 1)} }, false,
			" is not a VPC of region us-ord visible to the API token"),
		Entry("a subnet label the VPC chosen by id lacks", func() *v1.VPCConfiguration {
			return &v1.VPCConfiguration{VPCID: &vpcID, SubnetLabel: lo.ToPtr("pods")}
		}, false, ` is not in any VPC of region us-ord visible to the API token`),
	)

	It("needs a subnet label when the VPC chosen by id has several subnets", func() {
		_, err := emu.AddVPCSubnet(vpcID, "pods", "10.0.1.0/24")
		Expect(err).ToNot(HaveOccurred())
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{Image: lo.ToPtr("linode/ubuntu24.04"), VPC: &v1.VPCConfiguration{VPCID: &vpcID}}}))
		Expect(expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionFalse, instance.ReasonSubnetNotFound)).To(Equal(
			fmt.Sprintf(`vpc: VPC %d has 2 subnets ("nodes", "pods"), and vpc.vpcID alone needs exactly one: set vpc.subnetLabel to choose`, vpcID)))
		Expect(nodeClass.Status.Subnet).To(BeNil())
	})

	It("resolves the subnet of the vpc interface, and names the interface when it is missing", func() {
		spec := v1.LinodeNodeClassSpec{
			Image:               lo.ToPtr("linode/ubuntu24.04"),
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{
					VPCConfiguration: v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("nodes"), NAT1To1: lo.ToPtr(true)},
					IPv6:             &v1.VPCIPv6{SLAAC: lo.ToPtr(true)},
				}},
			},
		}
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: spec}))
		expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionTrue, v1.ConditionTypeSubnetReady)
		Expect(nodeClass.Status.Subnet).To(Equal(&v1.ResolvedSubnet{ID: subnetID, VPCID: vpcID, Label: "nodes"}))
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue(), "%v", nodeClass.Status.Conditions)

		nodeClass.Spec.Interfaces[1].VPC.SubnetLabel = lo.ToPtr("pods")
		nodeClass = resolved(nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionFalse, instance.ReasonSubnetNotFound)).To(
			Equal(`interfaces[1].vpc: subnet "pods" of VPC "cluster" is not in any VPC of region us-ord visible to the API token`))
		Expect(nodeClass.Status.Subnet).To(BeNil())
	})
})

var _ = Describe("Interface firewalls", func() {
	It("resolves each interface's firewall, and names the interface whose firewall is missing", func() {
		vpcFirewall, publicFirewall := emu.AddFirewall("vpc"), emu.AddFirewall("public")
		vpcID, err := emu.AddVPC("cluster", test.Region)
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
		Expect(err).ToNot(HaveOccurred())
		spec := v1.LinodeNodeClassSpec{
			Image:               lo.ToPtr("linode/ubuntu24.04"),
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCID: &vpcID, NAT1To1: lo.ToPtr(true)}}, FirewallID: &vpcFirewall},
				{Public: &v1.PublicInterface{}, FirewallID: &publicFirewall},
			},
		}
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: spec}))
		expectCondition(nodeClass, v1.ConditionTypeFirewallReady, metav1.ConditionTrue, v1.ConditionTypeFirewallReady)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue(), "%v", nodeClass.Status.Conditions)

		nodeClass.Spec.Interfaces[1].FirewallID = lo.ToPtr(4242)
		nodeClass = resolved(nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypeFirewallReady, metav1.ConditionFalse, nodeclass.ReasonFirewallNotFound)).To(
			Equal("firewall 4242 of interfaces[1] does not exist in this Linode account: create it or change interfaces[1].firewallID"))
		Expect(nodeClass.StatusConditions().Root().IsFalse()).To(BeTrue(), "a class whose interface firewall is missing is Ready")
	})
})

var _ = Describe("Placement group", func() {
	It("creates a group named by label once, and uses it from then on", func() {
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"), PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread"), Policy: lo.ToPtr("flexible")},
		}}))
		expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionTrue, v1.ConditionTypePlacementGroupReady)
		Expect(nodeClass.Status.PlacementGroup.Label).To(Equal("spread"))
		Expect(nodeClass.Status.PlacementGroup.Policy).To(Equal("flexible"))
		group, err := emu.Client.GetPlacementGroup(ctx, nodeClass.Status.PlacementGroup.ID)
		Expect(err).ToNot(HaveOccurred())
		Expect(group.Region).To(Equal(test.Region))
		Expect(string(group.PlacementGroupType)).To(Equal("anti_affinity:local"))

		first := nodeClass.Status.PlacementGroup.ID
		nodeClass = resolved(nodeClass)
		Expect(nodeClass.Status.PlacementGroup.ID).To(Equal(first))
		groups, err := emu.Client.ListPlacementGroups(ctx, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(groups).To(HaveLen(1))
	})

	It("holds launches while a group that must be compliant is not, and only then", func() {
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"), PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread"), Policy: lo.ToPtr("flexible"), RequireCompliance: lo.ToPtr(true)},
		}}))
		expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionTrue, v1.ConditionTypePlacementGroupReady)
		group := nodeClass.Status.PlacementGroup.ID

		Expect(emu.SetPlacementGroupCompliance(group, false)).To(Succeed())
		nodeClass = resolved(nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionFalse, instance.ReasonPlacementGroupNonCompliant)).To(
			Equal(fmt.Sprintf(`placement group "spread" (%d, anti_affinity:local) is not compliant: Linode placed a member against it and has yet to move it; launches wait until it is compliant, as placementGroup.requireCompliance asks`, group)))
		Expect(nodeClass.Status.PlacementGroup.ID).To(Equal(group))

		By("launching into it anyway once the class no longer requires compliance")
		nodeClass.Spec.PlacementGroup.RequireCompliance = lo.ToPtr(false)
		nodeClass = resolved(nodeClass)
		expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionTrue, v1.ConditionTypePlacementGroupReady)

		By("launching again once Linode restores compliance")
		nodeClass.Spec.PlacementGroup.RequireCompliance = lo.ToPtr(true)
		Expect(emu.SetPlacementGroupCompliance(group, true)).To(Succeed())
		nodeClass = resolved(nodeClass)
		expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionTrue, v1.ConditionTypePlacementGroupReady)
	})

	It("refuses a group by id that does not exist", func() {
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"), PlacementGroup: &v1.PlacementGroupSelector{ID: lo.ToPtr(4242)},
		}}))
		Expect(expectCondition(nodeClass, v1.ConditionTypePlacementGroupReady, metav1.ConditionFalse, instance.ReasonPlacementGroupNotFound)).To(ContainSubstring("placement group 4242"))
	})
})

var _ = Describe("Validation", func() {
	DescribeTable("refuses what nodes could not be launched with, naming the field",
		func(spec v1.LinodeNodeClassSpec, reason, message string) {
			spec.Image = lo.ToPtr("linode/ubuntu24.04")
			nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: spec}))
			Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, reason)).To(ContainSubstring(message))
		},
		Entry("user data that is not cloud-config", v1.LinodeNodeClassSpec{UserData: lo.ToPtr("#!/bin/sh\necho hi\n")}, instance.ReasonUserDataInvalid, "userData must be a cloud-config document"),
	)

	It("refuses userData that, with the provider's part, is more than Linode accepts", func() {
		largeCABundle(24000)
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image:    lo.ToPtr("linode/ubuntu24.04"),
			UserData: lo.ToPtr("#cloud-config\nwrite_files: [{path: /etc/motd, content: '" + strings.Repeat("x", 16000) + "'}]\n"),
		}}))
		Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, instance.ReasonUserDataTooLarge)).To(And(
			ContainSubstring("more than the 65535 Linode accepts"), ContainSubstring("spec.userData is 16060 bytes of it"), ContainSubstring("shorten spec.userData")))
	})

	DescribeTable("refuses an interface generation the account does not allow",
		func(accountSetting string, generation v1.InterfaceGeneration, message string) {
			emu = ExpectEmulator(emulator.WithInterfacesForNewLinodes(accountSetting))
			recorder = record.NewFakeRecorder(100)
			cloud = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder)))
			nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
				Image: lo.ToPtr("linode/ubuntu24.04"), InterfaceGeneration: &generation,
			}}))
			if message == "" {
				expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded)
				return
			}
			Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, instance.ReasonInterfaceGenerationNotAllowed)).To(Equal(message))
		},
		Entry("Linode Interfaces on an account of legacy ones only", "legacy_config_only", v1.InterfaceGenerationLinode,
			"interfaceGeneration is linode, but the account's interfaces_for_new_linodes is legacy_config_only: Linode refuses new Linodes with linode interfaces; set interfaceGeneration to legacy_config, or change the account setting"),
		Entry("legacy interfaces on an account of Linode Interfaces only", "linode_only", v1.InterfaceGenerationLegacyConfig,
			"interfaceGeneration is legacy_config, but the account's interfaces_for_new_linodes is linode_only: Linode refuses new Linodes with legacy_config interfaces; set interfaceGeneration to linode, or change the account setting"),
		Entry("Linode Interfaces where the account allows them", "legacy_config_default_but_linode_allowed", v1.InterfaceGenerationLinode, ""),
		Entry("legacy interfaces where the account allows them", "linode_default_but_legacy_config_allowed", v1.InterfaceGenerationLegacyConfig, ""),
	)

	It("refuses a VPC interface in a region without VPCs", func() {
		emu = ExpectEmulator(emulator.WithoutRegionCapability(test.Region, instance.CapabilityVPCs))
		recorder = record.NewFakeRecorder(100)
		cloud = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder)))
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"),
			Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{SubnetID: lo.ToPtr(1)}}},
			},
		}}))
		Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, instance.ReasonRegionLacksCapability)).To(
			Equal(`interfaces[1].vpc needs the region's "VPCs" capability, which us-ord lacks`))
	})

	It("refuses a VPC in a region without VPCs", func() {
		emu = ExpectEmulator(emulator.WithoutRegionCapability(test.Region, instance.CapabilityVPCs))
		recorder = record.NewFakeRecorder(100)
		cloud = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder)))
		nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Image: lo.ToPtr("linode/ubuntu24.04"), VPC: &v1.VPCConfiguration{SubnetID: lo.ToPtr(1)},
		}}))
		Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, instance.ReasonRegionLacksCapability)).To(
			Equal(`vpc needs the region's "VPCs" capability, which us-ord lacks`))
	})
})
