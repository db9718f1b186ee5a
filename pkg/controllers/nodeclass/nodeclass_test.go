package nodeclass_test

import (
	"net/http"
	"time"

	"github.com/awslabs/operatorpkg/status"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

func newNodeClass(spec v1.LinodeNodeClassSpec) *v1.LinodeNodeClass {
	return test.LinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: spec})
}

// reconciled runs the controller on the class and returns it as stored.
func reconciled(controller *nodeclass.Controller, nodeClass *v1.LinodeNodeClass) *v1.LinodeNodeClass {
	GinkgoHelper()
	ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
	return ExpectExists(ctx, env.Client, nodeClass)
}

func expectCondition(nodeClass *v1.LinodeNodeClass, conditionType string, want metav1.ConditionStatus, reason string) *status.Condition {
	GinkgoHelper()
	condition := nodeClass.StatusConditions().Get(conditionType)
	Expect(condition).ToNot(BeNil())
	Expect(condition.Status).To(Equal(want), "%s: %s", conditionType, condition.Message)
	Expect(condition.Reason).To(Equal(reason))
	return condition
}

var _ = Describe("LKE mode", func() {
	var controller *nodeclass.Controller
	BeforeEach(func() { controller = lkeController(lke.TierStandard, "us-ord") })

	It("makes a class without options Ready, with the instance-mode fields not applicable", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Finalizers).To(ContainElement(v1.TerminationFinalizer))
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
		for _, condition := range []string{v1.ConditionTypeImageReady, v1.ConditionTypeSubnetReady, v1.ConditionTypePlacementGroupReady} {
			expectCondition(nodeClass, condition, metav1.ConditionTrue, nodeclass.ReasonNotApplicable)
		}
		Expect(recordedContaining("Normal Ready")).To(BeTrue())
		Expect(nodeClass.Status.KubernetesVersion).To(MatchRegexp(`^1\.[0-9]+$`), "the cluster's version, which its nodes should run")
	})

	It("forgets the image an instance-mode controller resolved, and says LKE mode ignores it", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{Image: new("linode/almalinux9")})
		nodeClass.Status.Image = &v1.ResolvedImage{ID: "linode/almalinux9"}
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Status.Image).To(BeNil())
		Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionTrue, nodeclass.ReasonNotApplicable).Message).
			To(Equal("image and imageSelector apply in instance mode only, and the controller runs in lke mode"))
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("leaves Linode Interfaces, data disks and the kernel to instance mode, firewalls of interfaces included", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{
			InterfaceGeneration: new(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCID: new(4242)}}, FirewallID: new(4242)},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64"}}},
			},
			RootDiskSizeMB: new(int32(20480)),
			DataDisks:      []v1.DataDisk{{Label: "data", SizeMB: 10240, MountPath: new("/data")}},
			Kernel:         new("linode/grub2"),
		})
		nodeClass.Status.Subnet = &v1.ResolvedSubnet{ID: 1, VPCID: 4242}
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Status.Subnet).To(BeNil())
		Expect(expectCondition(nodeClass, v1.ConditionTypeSubnetReady, metav1.ConditionTrue, nodeclass.ReasonNotApplicable).Message).
			To(Equal("vpc and interfaces apply in instance mode only, and the controller runs in lke mode"))
		expectCondition(nodeClass, v1.ConditionTypeFirewallReady, metav1.ConditionTrue, v1.ConditionTypeFirewallReady)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue(), "%v", nodeClass.Status.Conditions)
	})

	It("resolves the firewall", func() {
		id := emu.AddFirewall("nodes")
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{FirewallID: &id})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Status.Firewall).To(Equal(&v1.ResolvedFirewall{ID: id, Label: "nodes"}))
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("is not Ready, saying which firewall is missing, when the firewall does not exist", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{FirewallID: new(4242)})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Status.Firewall).To(BeNil())
		Expect(expectCondition(nodeClass, v1.ConditionTypeFirewallReady, metav1.ConditionFalse, nodeclass.ReasonFirewallNotFound).Message).To(ContainSubstring("4242"))
		ready := expectCondition(nodeClass, status.ConditionReady, metav1.ConditionFalse, nodeclass.ReasonFirewallNotFound)
		Expect(ready.Message).To(ContainSubstring("firewall 4242 does not exist"))
		Expect(recordedContaining("Warning FirewallNotFound")).To(BeTrue())
	})

	It("keeps what it knew when the API fails, and retries", func() {
		id := emu.AddFirewall("nodes")
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{FirewallID: &id})
		ExpectApplied(ctx, env.Client, nodeClass)
		reconciled(controller, nodeClass)
		emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/networking/firewalls/{firewallId}", Sequence: []int{http.StatusServiceUnavailable}})
		Expect(ExpectObjectReconcileFailed(ctx, env.Client, controller, nodeClass)).To(HaveOccurred())
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
		Expect(nodeClass.Status.Firewall).ToNot(BeNil())
	})

	It("refuses Enterprise-only fields on a standard cluster", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{LKEK8sVersion: new("1.34"), UpdateStrategy: new(v1.UpdateStrategyOnRecycle)})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		condition := expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, lke.ReasonEnterpriseTierRequired)
		Expect(condition.Message).To(And(ContainSubstring("lkeK8sVersion and updateStrategy"), ContainSubstring("standard tier")))
		Expect(nodeClass.StatusConditions().Root().IsFalse()).To(BeTrue())
	})

	It("keeps a launch rejection until the class changes", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		stored := nodeClass.DeepCopy()
		nodeClass.RejectLaunch("disk_encryption is not available in us-ord")
		Expect(env.Client.Status().Patch(ctx, nodeClass, client.MergeFrom(stored))).To(Succeed())

		nodeClass = reconciled(controller, nodeClass)
		condition := expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, v1.ReasonLaunchRejected)
		Expect(condition.Message).To(ContainSubstring("disk_encryption is not available in us-ord"))
		Expect(expectCondition(nodeClass, status.ConditionReady, metav1.ConditionFalse, v1.ReasonLaunchRejected).Message).To(ContainSubstring("disk_encryption"))
		Expect(recordedContaining("Warning LaunchRejected")).To(BeTrue())

		nodeClass.Spec.Tags = []v1.Tag{"team-a"}
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("lifts a launch rejection on its own once the retry interval has passed", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		stored := nodeClass.DeepCopy()
		nodeClass.RejectLaunch("firewall_id: the firewall is being updated")
		Expect(env.Client.Status().Patch(ctx, nodeClass, client.MergeFrom(stored))).To(Succeed())

		result := ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		Expect(result.RequeueAfter).To(BeNumerically("<=", nodeclass.LaunchRejectionRetry), "the class is looked at again when the rejection expires")
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, v1.ReasonLaunchRejected)

		// The rejection was recorded a retry interval ago.
		stored = nodeClass.DeepCopy()
		for i := range nodeClass.Status.Conditions {
			if nodeClass.Status.Conditions[i].Type == v1.ConditionTypeValidationSucceeded {
				nodeClass.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Now().Add(-nodeclass.LaunchRejectionRetry))
			}
		}
		Expect(env.Client.Status().Patch(ctx, nodeClass, client.MergeFrom(stored))).To(Succeed())
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("refuses a maintenance policy, which LKE node pools cannot choose", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{MaintenancePolicy: new(v1.MaintenancePolicyPowerOffOn)})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		condition := expectCondition(nodeClass, v1.ConditionTypeMaintenancePolicyReady, metav1.ConditionFalse, lke.ReasonMaintenancePolicyNotInLKE)
		Expect(condition.Message).To(And(ContainSubstring("LKE node pools cannot choose a maintenance policy"), ContainSubstring("remove maintenancePolicy")))
		Expect(expectCondition(nodeClass, status.ConditionReady, metav1.ConditionFalse, lke.ReasonMaintenancePolicyNotInLKE).Message).To(ContainSubstring("maintenance policy"))

		nodeClass.Spec.MaintenancePolicy = nil
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeMaintenancePolicyReady, metav1.ConditionTrue, v1.ConditionTypeMaintenancePolicyReady)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("holds a deleted class until no NodeClaim uses it", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef(nodeClass.Name)}})
		ExpectApplied(ctx, env.Client, nodeClaim)

		Expect(env.Client.Delete(ctx, nodeClass)).To(Succeed())
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(recordedContaining("waiting on NodeClaims " + nodeClaim.Name)).To(BeTrue())

		ExpectFinalizersRemoved(ctx, env.Client, nodeClaim)
		ExpectDeleted(ctx, env.Client, nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		ExpectNotFound(ctx, env.Client, nodeClass)
	})
})

var _ = Describe("The Linode API's verdict on the token", func() {
	It("is not Ready while the API refuses the token, and Ready again once it accepts one", func() {
		credentials := linode.StaticCredentials(emu.Token())
		cloud := ExpectLKE(ctx, emu, env.Client, test.WithCredentials(credentials), test.WithRecorder(events.NewRecorder(recorder)))
		controller := test.ControllerOf[*nodeclass.Controller](cloud.Linode)
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{})
		ExpectApplied(ctx, env.Client, nodeClass)
		expectCondition(reconciled(controller, nodeClass), v1.ConditionTypeAPIAuthorized, metav1.ConditionTrue, v1.ConditionTypeAPIAuthorized)

		token := emu.Token()
		emu.RevokeToken()
		_, err := cloud.Nodes.List(ctx)
		Expect(linode.IsUnauthorized(err)).To(BeTrue(), "a call with the revoked token: %v", err)
		nodeClass = reconciled(controller, nodeClass)
		condition := expectCondition(nodeClass, v1.ConditionTypeAPIAuthorized, metav1.ConditionFalse, nodeclass.ReasonTokenRefused)
		Expect(condition.Message).To(ContainSubstring("401"))
		Expect(nodeClass.StatusConditions().Root().IsFalse()).To(BeTrue())
		Expect(recordedContaining("Warning TokenRefused")).To(BeTrue())

		emu.SetToken(token)
		_, err = cloud.Nodes.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeAPIAuthorized, metav1.ConditionTrue, v1.ConditionTypeAPIAuthorized)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})
})

var _ = Describe("LKE Enterprise", func() {
	var controller *nodeclass.Controller
	BeforeEach(func() { controller = lkeController(lke.TierEnterprise, "us-mia") })

	It("accepts a Kubernetes version LKE offers", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{LKEK8sVersion: new("1.34"), UpdateStrategy: new(v1.UpdateStrategyRollingUpdate)})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("refuses a Kubernetes version LKE does not offer, naming those it does", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{LKEK8sVersion: new("1.20")})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		condition := expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, lke.ReasonUnsupportedK8sVersion)
		Expect(condition.Message).To(And(ContainSubstring("1.20"), ContainSubstring("1.34")))
	})
})

var _ = Describe("Instance mode", func() {
	var controller *nodeclass.Controller
	BeforeEach(func() {
		controller = test.ControllerOf[*nodeclass.Controller](ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder))).Linode)
	})

	It("resolves the image", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{Image: new("linode/almalinux9")})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(nodeClass.Status.Image).ToNot(BeNil())
		Expect(nodeClass.Status.Image.ID).To(Equal("linode/almalinux9"))
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("accepts a maintenance policy in a region that offers them, and retries when the region cannot be read", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{Image: new("linode/almalinux9"), MaintenancePolicy: new(v1.MaintenancePolicyPowerOffOn)})
		ExpectApplied(ctx, env.Client, nodeClass)
		emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/regions/{regionId}", Sequence: []int{http.StatusServiceUnavailable}})
		Expect(ExpectObjectReconcileFailed(ctx, env.Client, controller, nodeClass)).To(HaveOccurred())
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeMaintenancePolicyReady, metav1.ConditionTrue, v1.ConditionTypeMaintenancePolicyReady)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})

	It("is not Ready when the image does not exist", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{Image: new("linode/no-such-image")})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		Expect(expectCondition(nodeClass, v1.ConditionTypeImageReady, metav1.ConditionFalse, instance.ReasonImageNotFound).Message).To(ContainSubstring("linode/no-such-image"))
		Expect(nodeClass.StatusConditions().Root().IsFalse()).To(BeTrue())
	})

	It("checks no LKE tier rule: LKE fields apply in LKE mode only", func() {
		nodeClass := newNodeClass(v1.LinodeNodeClassSpec{Image: new("linode/almalinux9"), LKEK8sVersion: new("1.20")})
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClass = reconciled(controller, nodeClass)
		expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded)
		Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue())
	})
})
