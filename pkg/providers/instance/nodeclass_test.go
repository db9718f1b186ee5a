package instance_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/events"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
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
		}, false, `subnet "pods" of VPC "cluster" is not in any VPC of region us-ord`),
	)
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
