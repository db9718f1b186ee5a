package instance_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var (
	ctx      context.Context
	env      *environment.Environment
	emu      *test.Emulator
	cloud    *test.Instance
	recorder *record.FakeRecorder
)

func TestInstance(t *testing.T) { RunSuite(t, "Instance mode", &ctx) }

var _ = BeforeSuite(func() { env = ExpectEnvironment() })

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	recorder = record.NewFakeRecorder(100)
	cloud = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder)))
})

var _ = AfterEach(func() {
	Expect(env.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(bootstraptoken.Namespace), client.MatchingLabels{bootstraptoken.LabelNodeClaimToken: "true"})).To(Succeed())
	ExpectAllCleanedUp(ctx, env.Client)
})

// resolved applies the class and resolves it with the NodeClass controller instance mode runs.
func resolved(nodeClass *v1.LinodeNodeClass) *v1.LinodeNodeClass {
	GinkgoHelper()
	ExpectApplied(ctx, env.Client, nodeClass)
	ExpectObjectReconciled(ctx, env.Client, test.ControllerOf[*nodeclass.Controller](cloud.Linode), nodeClass)
	return ExpectExists(ctx, env.Client, nodeClass)
}

// another builds another instance of the provider, as a restarted controller or another replica
// would be, and resolves every class with its NodeClass controller, as its controller does when it
// starts: a provider launches only with what it resolved itself.
func another(opts ...option.Function[test.InstanceOptions]) *test.Instance {
	GinkgoHelper()
	provider := ExpectInstance(ctx, emu, env.Client, env.Config, opts...)
	nodeClasses := &v1.LinodeNodeClassList{}
	Expect(env.Client.List(ctx, nodeClasses)).To(Succeed())
	for i := range nodeClasses.Items {
		ExpectObjectReconciled(ctx, env.Client, test.ControllerOf[*nodeclass.Controller](provider.Linode), &nodeClasses.Items[i])
	}
	return provider
}

// readyNodeClass is a class of the image linode/ubuntu24.04 with spec's settings, resolved and
// Ready.
func readyNodeClass(spec v1.LinodeNodeClassSpec) *v1.LinodeNodeClass {
	GinkgoHelper()
	if spec.Image == nil && spec.ImageSelector == nil {
		spec.Image = new("linode/ubuntu24.04")
	}
	nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: spec}))
	Expect(nodeClass.StatusConditions().Root().IsTrue()).To(BeTrue(), "LinodeNodeClass is not Ready: %v", nodeClass.Status.Conditions)
	return nodeClass
}

// largeCABundle makes the cluster's CA bundle about size bytes, as one holding several CAs during
// a rotation can be, for the rest of the test.
func largeCABundle(size int) {
	original := cloud.Target.Cluster.CA
	cloud.Target.Cluster.CA = bytes.Repeat(original, size/len(original))
	DeferCleanup(func() { cloud.Target.Cluster.CA = original })
}

// nodeClaimOf is a NodeClaim of the class's NodePool "default", stored, asking for the plans.
func nodeClaimOf(nodeClass *v1.LinodeNodeClass, plans ...string) *karpv1.NodeClaim {
	GinkgoHelper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: "default", "team": "payments"}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: test.NodeClassRef(nodeClass.Name),
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: plans},
			},
			Taints:        []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []corev1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute}},
		},
	})
	ExpectApplied(ctx, env.Client, nodeClaim)
	return nodeClaim
}

// launched creates the NodeClaim's node through the cloud provider, as core's launch does.
func launched(nodeClaim *karpv1.NodeClaim) *karpv1.NodeClaim {
	GinkgoHelper()
	created, err := cloud.CloudProvider.Create(ctx, nodeClaim)
	Expect(err).ToNot(HaveOccurred())
	return created
}

// linodeOf returns the emulator's Linode behind a provider ID.
func linodeOf(providerID string) emulator.InstanceInfo {
	GinkgoHelper()
	for _, in := range emu.Instances() {
		if "linode://"+itoa(in.ID) == providerID {
			return in
		}
	}
	Fail("no Linode has provider ID " + providerID)
	return emulator.InstanceInfo{}
}
