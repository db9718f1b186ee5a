package adoption_test

import (
	"context"
	"maps"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	nodeclaimgc "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/garbagecollection"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/state/nodepoolhealth"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	linodecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/adoption"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var (
	ctx           context.Context
	env           *environment.Environment
	emu           *test.Emulator
	lkeCluster    *lke.Cluster
	nodes         *lke.Provider
	cloudProvider *linodecloudprovider.CloudProvider
	recorder      *coretest.EventRecorder
	controller    *adoption.Controller
	lifecycleCtl  *lifecycle.Controller
	nodeClaimGC   *nodeclaimgc.Controller
	nodeClass     *v1.LinodeNodeClass
	nodePool      *karpv1.NodePool
)

func TestAdoption(t *testing.T) { RunSuite(t, "Adoption", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment(environment.WithCoreOptions(coretest.WithFieldIndexers(
		coretest.NodeProviderIDFieldIndexer(ctx),
		coretest.NodeClaimProviderIDFieldIndexer(ctx),
	)))
})

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	cloud := ExpectLKE(ctx, emu, env.Client, test.WithNodeProviderOptions(lke.WithListingTTL(0)))
	lkeCluster, nodes, cloudProvider = cloud.Cluster, cloud.Pools(), cloud.CloudProvider

	apiReader, err := client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	Expect(err).ToNot(HaveOccurred())
	recorder = coretest.NewEventRecorder()
	controller = adoption.NewController(env.Client, apiReader, recorder, nodes)
	cluster := state.NewCluster(env.Clock, env.Client, cloudProvider)
	lifecycleCtl = lifecycle.NewController(env.Clock, env.Client, cloudProvider, events.NewRecorder(record.NewFakeRecorder(100)), cluster, nodepoolhealth.NewState(), nil)
	nodeClaimGC = nodeclaimgc.NewController(env.Clock, env.Client, cloudProvider)

	nodeClass = test.ReadyLinodeNodeClass()
	nodePool = test.NodePool(nodeClass, karpv1.NodePool{Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
		Taints:        []corev1.Taint{dedicated},
		StartupTaints: []corev1.Taint{agentNotReady},
	}}}})
	ExpectApplied(ctx, env.Client, nodeClass, nodePool)
})

var _ = AfterEach(func() {
	ExpectAllCleanedUp(ctx, env.Client)
})

var (
	dedicated     = corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	agentNotReady = corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
)

// runningNodeClaim launches a NodeClaim of the NodePool through core's lifecycle, registers its
// Node as LKE's kubelet would, and lets core register and initialize it.
func runningNodeClaim() (*karpv1.NodeClaim, *corev1.Node) {
	GinkgoHelper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: nodePool.Name + "-",
			Labels:       map[string]string{karpv1.NodePoolLabelKey: nodePool.Name, karpv1.NodeClassLabelKey(nodePool.Spec.Template.Spec.NodeClassRef.GroupKind()): nodeClass.Name},
		},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef:  nodePool.Spec.Template.Spec.NodeClassRef,
			Taints:        []corev1.Taint{dedicated},
			StartupTaints: []corev1.Taint{agentNotReady},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-standard-2"}},
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
			},
		},
	})
	nodeClaim.Name = ""
	Expect(env.Client.Create(ctx, nodeClaim)).To(Succeed())
	ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, nodeClaim)
	nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
	Expect(nodeClaim.Status.ProviderID).ToNot(BeEmpty(), "the NodeClaim did not launch")
	node := kubeletRegisters(instanceWith(nodeClaim.Status.ProviderID))
	initialize(nodeClaim, node)
	return ExpectExists(ctx, env.Client, nodeClaim), ExpectExists(ctx, env.Client, node)
}

// initialize plays the kubelet turning Ready and the agent lifting its start-up taint, and runs
// core's lifecycle until the NodeClaim is initialized.
func initialize(nodeClaim *karpv1.NodeClaim, node *corev1.Node) {
	GinkgoHelper()
	ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, nodeClaim)
	ExpectMakeNodesReady(ctx, env.Client, env.Clock, node)
	node = ExpectExists(ctx, env.Client, node)
	node.Spec.Taints = lo.Reject(node.Spec.Taints, func(taint corev1.Taint, _ int) bool { return taint.MatchTaint(&agentNotReady) })
	ExpectApplied(ctx, env.Client, node)
	ExpectObjectReconciled(ctx, env.Client, lifecycleCtl, nodeClaim)
	Expect(ExpectExists(ctx, env.Client, nodeClaim).StatusConditions().Get(karpv1.ConditionTypeInitialized).IsTrue()).To(BeTrue())
}

// instanceWith is the emulator's Linode behind the provider ID.
func instanceWith(providerID string) emulator.InstanceInfo {
	GinkgoHelper()
	id, err := nodeprovider.ParseProviderID(providerID)
	Expect(err).ToNot(HaveOccurred())
	instance, found := lo.Find(emu.Instances(), func(in emulator.InstanceInfo) bool { return in.ID == id })
	Expect(found).To(BeTrue(), "Linode %d is not in the emulator", id)
	return instance
}

// kubeletRegisters creates the Node of a pool's Linode as an LKE kubelet does: named after the
// Linode, with the pool's labels and taints and its provider ID.
func kubeletRegisters(instance emulator.InstanceInfo) *corev1.Node {
	GinkgoHelper()
	pool, err := emu.Client.GetLKENodePool(ctx, instance.LKEClusterID, instance.LKEPoolID)
	Expect(err).ToNot(HaveOccurred())
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: instance.Label, Labels: map[string]string{corev1.LabelHostname: instance.Label}},
		Spec:       corev1.NodeSpec{ProviderID: nodeprovider.ProviderID(instance.ID)},
	}
	maps.Copy(node.Labels, pool.Labels)
	for _, taint := range pool.Taints {
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: taint.Key, Value: taint.Value, Effect: corev1.TaintEffect(taint.Effect)})
	}
	Expect(env.Client.Create(ctx, node)).To(Succeed())
	return ExpectExists(ctx, env.Client, node)
}

// recycle recycles the node's pool as LKE does, its drain done, and returns the replacement's Linode.
func recycle(node *corev1.Node) emulator.InstanceInfo {
	GinkgoHelper()
	old := instanceWith(node.Spec.ProviderID)
	Expect(emu.Client.RecycleLKENodePool(ctx, old.LKEClusterID, old.LKEPoolID)).To(Succeed())
	emu.FinishDrain(old.ID)
	emu.Tick()
	replacement, found := lo.Find(emu.Instances(), func(in emulator.InstanceInfo) bool { return in.LKEPoolID == old.LKEPoolID })
	Expect(found).To(BeTrue(), "the recycled pool has no Linode")
	Expect(replacement.ID).ToNot(Equal(old.ID))
	Expect(replacement.Label).ToNot(Equal(old.Label))
	return replacement
}

func nodeClaims() []karpv1.NodeClaim {
	GinkgoHelper()
	list := &karpv1.NodeClaimList{}
	Expect(env.Client.List(ctx, list)).To(Succeed())
	return list.Items
}
