package alphafields_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/events"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/apis/v1alpha1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/alphafields"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var (
	ctx context.Context
	env *environment.Environment
)

func TestAlphaFields(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Alpha fields")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

// stored is the v1 object the conversion webhook stores for a v1alpha1 class.
func stored(spec v1alpha1.LinodeNodeClassSpec) *v1.LinodeNodeClass {
	GinkgoHelper()
	alpha := &v1alpha1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "from-alpha"}, Spec: spec}
	hub := &v1.LinodeNodeClass{}
	Expect(alpha.ConvertTo(hub)).To(Succeed())
	return hub
}

var _ = Describe("Alpha fields", func() {
	var recorder *record.FakeRecorder
	var controller *alphafields.Controller
	BeforeEach(func() {
		recorder = record.NewFakeRecorder(10)
		controller = alphafields.NewController(env.Client, events.NewRecorder(recorder))
		DeferCleanup(func() { Expect(env.Client.DeleteAllOf(ctx, &v1.LinodeNodeClass{})).To(Succeed()) })
	})

	It("names the v1alpha1 fields that have no effect, without holding the class back", func() {
		// Stored before v1alpha1 refused a disk id; IPv6 options that enable nothing.
		nodeClass := stored(v1alpha1.LinodeNodeClassSpec{
			Image: new("linode/ubuntu22.04"), VPCID: new(7), IPv6Options: &v1alpha1.IPv6Options{EnableRanges: new(false)},
			OSDisk: &v1alpha1.InstanceDisk{Size: resource.MustParse("20Gi"), DiskID: new(3)},
		})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeFirewallReady)
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, "ImageNotFound", "no such image")
		ExpectApplied(ctx, env.Client, nodeClass)
		readyBefore := *nodeClass.StatusConditions().Root()

		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		condition := nodeClass.StatusConditions().Get(alphafields.ConditionType)
		Expect(condition).ToNot(BeNil())
		Expect(condition.IsTrue()).To(BeTrue())
		Expect(condition.Message).To(ContainSubstring("spec.ipv6Options, spec.osDisk.diskID of karpenter.k8s.linode/v1alpha1 have no v1 equivalent"))
		Expect(condition.Message).To(ContainSubstring("spec.ipv6Options: enableSLAAC or enableRanges give the VPC interface IPv6"))
		Expect(*nodeClass.StatusConditions().Root()).To(Equal(readyBefore), "Ready changed")
		Expect(nodeClass.StatusConditions().Get(v1.ConditionTypeImageReady).IsFalse()).To(BeTrue(), "another controller's condition was lost")
		Expect(recorder.Events).To(Receive(ContainSubstring("spec.ipv6Options, spec.osDisk.diskID")))

		// Dropping the alpha fields for good clears the condition.
		delete(nodeClass.Annotations, v1alpha1.AnnotationV1Alpha1Fields)
		ExpectApplied(ctx, env.Client, nodeClass)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		Expect(nodeClass.StatusConditions().Get(alphafields.ConditionType)).To(BeNil())
	})

	It("adds no condition, nor event, for the alpha provider's instance fields that v1 now has", func() {
		nodeClass := stored(v1alpha1.LinodeNodeClassSpec{
			Image:          new("linode/ubuntu22.04"),
			OSDisk:         &v1alpha1.InstanceDisk{Size: resource.MustParse("20Gi"), Filesystem: new("ext4"), Label: new("root")},
			DataDisks:      &v1alpha1.InstanceDisks{SDB: &v1alpha1.InstanceDisk{Size: resource.MustParse("10Gi"), Filesystem: new("ext4")}},
			Configuration:  &v1alpha1.InstanceConfiguration{Kernel: new("linode/grub2")},
			Kubelet:        &v1alpha1.KubeletConfiguration{CPUCFSQuota: new(false)},
			PlacementGroup: &v1alpha1.PlacementGroup{ID: 7, CompliantOnly: new(true)},
			VPCID:          new(3),
			IPv6Options:    &v1alpha1.IPv6Options{EnableSLAAC: new(true), IsPublicIPv6: new(true)},
		})
		ExpectApplied(ctx, env.Client, nodeClass)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		Expect(nodeClass.StatusConditions().Get(alphafields.ConditionType)).To(BeNil())
		Expect(recorder.Events).ToNot(Receive())
	})

	It("adds no condition to a class whose every field has a v1 home", func() {
		nodeClass := stored(v1alpha1.LinodeNodeClassSpec{Tags: []string{"team:a"}, OSDisk: &v1alpha1.InstanceDisk{Size: resource.MustParse("20G")}})
		Expect(nodeClass.Annotations).To(HaveKey(v1alpha1.AnnotationV1Alpha1Fields), "the disk size reads back as written through the annotation")
		ExpectApplied(ctx, env.Client, nodeClass)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		Expect(nodeClass.Status.Conditions).To(BeEmpty())
	})
})
