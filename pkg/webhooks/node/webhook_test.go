package node_test

import (
	"crypto/tls"
	"maps"
	"net"
	"net/http"
	"strconv"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coreevents "sigs.k8s.io/karpenter/pkg/events"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var (
	ciliumNotReady = corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	dedicated      = corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
)

// launchedNodeClaim is a NodeClaim of the default NodePool that core's lifecycle has launched
// as a pool of the emulated LKE cluster, with the changes made before it is stored.
func launchedNodeClaim(run *coreRun, changes ...func(*karpv1.NodeClaim)) *karpv1.NodeClaim {
	GinkgoHelper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef:  &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: nodeClass.Name},
			Taints:        []corev1.Taint{dedicated},
			StartupTaints: []corev1.Taint{ciliumNotReady},
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-standard-2"}},
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
			},
		},
	})
	for _, change := range changes {
		change(nodeClaim)
	}
	ExpectApplied(ctx, env.Client, nodeClaim)
	run.reconcile(nodeClaim)
	nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
	Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeLaunched).IsTrue()).To(BeTrue(), "the NodeClaim did not launch")
	return nodeClaim
}

var _ = Describe("Node admission", func() {
	var run *coreRun
	BeforeEach(func() { run = newCoreRun(env.Clock) })

	It("taints a node joining from a pool Karpenter launched from its first stored version", func() {
		nodeClaim := launchedNodeClaim(run)
		stored := kubeletRegisters(instanceOf(nodeClaim), true)
		Expect(taintsOf(stored)).To(ConsistOf(dedicated, karpv1.UnregisteredNoExecuteTaint, ciliumNotReady))
	})

	It("finds the NodeClaim by the label its pool put on the node when the kubelet registers before the provider ID is set", func() {
		nodeClaim := launchedNodeClaim(run)
		n := kubeletNode(instanceOf(nodeClaim), false)
		Expect(n.Labels).To(HaveKeyWithValue(v1.LabelNodeClaim, nodeClaim.Name))
		Expect(env.Client.Create(ctx, n)).To(Succeed())
		Expect(taintsOf(ExpectExists(ctx, env.Client, n))).To(ConsistOf(dedicated, karpv1.UnregisteredNoExecuteTaint, ciliumNotReady))
	})

	It("decides without the Linode API, and still taints while the API is down", func() {
		nodeClaim := launchedNodeClaim(run)
		for _, withProviderID := range []bool{false, true} {
			instance := instanceOf(nodeClaim)
			n := kubeletNode(instance, withProviderID)
			emu.ResetCounters()
			outage := emu.InjectFault(emulator.Fault{ErrorRate: 1, ErrorStatus: http.StatusServiceUnavailable})
			Expect(env.Client.Create(ctx, n)).To(Succeed())
			emu.RemoveFault(outage)
			Expect(emu.Counters()).To(BeEmpty(), "admission called the Linode API")
			Expect(taintsOf(ExpectExists(ctx, env.Client, n))).To(ConsistOf(dedicated, karpv1.UnregisteredNoExecuteTaint, ciliumNotReady))
			ExpectDeleted(ctx, env.Client, n)
		}
	})

	It("leaves alone a node of a pool no NodeClaim launched", func() {
		pool, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{
			Count: 1, Type: "g6-standard-2", Labels: linodego.LKENodePoolLabels{karpv1.NodePoolLabelKey: "hand-made"},
		})
		Expect(err).ToNot(HaveOccurred())
		stored := kubeletRegisters(instanceOfPool(pool.ID), true)
		Expect(taintsOf(stored)).To(BeEmpty())
	})

	It("leaves alone a node whose NodeClaim is gone", func() {
		nodeClaim := launchedNodeClaim(run)
		instance := instanceOf(nodeClaim)
		ExpectFinalizersRemoved(ctx, env.Client, nodeClaim)
		ExpectDeleted(ctx, env.Client, nodeClaim)
		stored := kubeletRegisters(instance, true)
		Expect(taintsOf(stored)).To(ConsistOf(dedicated))
	})

	It("leaves alone a node that is not an LKE node", func() {
		foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   "ip-10-0-12-34",
			Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name},
		}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0123456789"}}
		ExpectApplied(ctx, env.Client, foreign)
		Expect(taintsOf(ExpectExists(ctx, env.Client, foreign))).To(BeEmpty())
	})

	It("serves TLS 1.2 or newer, over HTTP/1.1 only", func() {
		address := net.JoinHostPort("127.0.0.1", strconv.Itoa(webhookPort))
		_, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}) //nolint:gosec
		Expect(err).To(HaveOccurred(), "a TLS 1.1 handshake succeeded")
		conn, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec
		Expect(err).ToNot(HaveOccurred())
		defer conn.Close()
		Expect(conn.ConnectionState().NegotiatedProtocol).To(Equal("http/1.1"), "the server offered HTTP/2")
	})

	It("lets nodes join untouched while the webhook is down", func() {
		nodeClaim := launchedNodeClaim(run)
		stopWebhook()
		stored := kubeletRegisters(instanceOf(nodeClaim), true)
		Expect(taintsOf(stored)).To(ConsistOf(dedicated))
		stopWebhook = startWebhook()
	})
})

var _ = Describe("Registration by Karpenter core", func() {
	// makeReady plays the kubelet reporting Ready and the CNI's agent lifting its start-up taint.
	makeReady := func(n *corev1.Node) {
		GinkgoHelper()
		ExpectMakeNodesReady(ctx, env.Client, env.Clock, n)
		n = ExpectExists(ctx, env.Client, n)
		n.Spec.Taints = lo.Reject(n.Spec.Taints, func(taint corev1.Taint, _ int) bool { return taint.MatchTaint(&ciliumNotReady) })
		ExpectApplied(ctx, env.Client, n)
	}

	It("registers and initializes the NodeClaim without the missing-taint race", func() {
		run := newCoreRun(env.Clock)
		nodeClaim := launchedNodeClaim(run)
		n := kubeletRegisters(instanceOf(nodeClaim), true)

		run.reconcile(nodeClaim)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeRegistered).IsTrue()).To(BeTrue())
		n = ExpectExists(ctx, env.Client, n)
		Expect(n.Labels).To(HaveKeyWithValue(karpv1.NodeRegisteredLabelKey, "true"))
		Expect(taintsOf(n)).To(ConsistOf(dedicated, ciliumNotReady), "core lifts only the unregistered taint")

		makeReady(n)
		run.reconcile(nodeClaim)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeInitialized).IsTrue()).To(BeTrue())
		Expect(ExpectExists(ctx, env.Client, n).Labels).To(HaveKeyWithValue(karpv1.NodeInitializedLabelKey, "true"))

		Expect(run.logged("missing taint")).To(BeFalse())
		Expect(run.recordedEvent(coreevents.UnregisteredTaintMissing)).To(BeFalse())
	})

	It("gives the node the labels and taints Linode refuses on its pool: the taints as it joins, the labels as core registers it", func() {
		run := newCoreRun(env.Clock)
		refusedLabels := map[string]string{"node-role.kubernetes.io/worker": "", "topology.linode.com/rack": "r12", "spot-ok": ""}
		refusedTaint := corev1.Taint{Key: "example.com/provider", Value: "linode.com", Effect: corev1.TaintEffectNoSchedule}
		nodeClaim := launchedNodeClaim(run, func(nodeClaim *karpv1.NodeClaim) {
			maps.Copy(nodeClaim.Labels, refusedLabels)
			nodeClaim.Spec.Taints = append(nodeClaim.Spec.Taints, refusedTaint)
		})
		pool, err := emu.Client.GetLKENodePool(ctx, lkeCluster.ID, instanceOf(nodeClaim).LKEPoolID)
		Expect(err).ToNot(HaveOccurred())
		Expect(pool.Labels).ToNot(HaveKey(BeElementOf(lo.Keys(refusedLabels))))
		Expect(pool.Taints).To(HaveLen(1), "only the taint Linode accepts is the pool's")

		n := kubeletRegisters(instanceOf(nodeClaim), true)
		Expect(taintsOf(n)).To(ConsistOf(dedicated, refusedTaint, karpv1.UnregisteredNoExecuteTaint, ciliumNotReady))
		run.reconcile(nodeClaim)
		n = ExpectExists(ctx, env.Client, n)
		for key, value := range refusedLabels {
			Expect(n.Labels).To(HaveKeyWithValue(key, value))
		}
		Expect(taintsOf(n)).To(ConsistOf(dedicated, refusedTaint, ciliumNotReady))
	})

	It("complains about the missing taint when the node joined without the webhook", func() {
		run := newCoreRun(env.Clock)
		nodeClaim := launchedNodeClaim(run)
		stopWebhook()
		kubeletRegisters(instanceOf(nodeClaim), true)
		stopWebhook = startWebhook()

		run.reconcile(nodeClaim)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).StatusConditions().Get(karpv1.ConditionTypeRegistered).IsTrue()).To(BeTrue())
		Expect(run.logged("missing taint")).To(BeTrue())
		Expect(run.recordedEvent(coreevents.UnregisteredTaintMissing)).To(BeTrue())
	})
})
