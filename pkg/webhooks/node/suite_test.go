package node_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/state/nodepoolhealth"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	linodecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	configurationName = "karpenter-linode-test"
	systemNamespace   = "kube-system"
)

var (
	ctx context.Context
	env *environment.Environment

	emu           *test.Emulator
	lkeCluster    *lke.Cluster
	cloud         *test.LKE
	cloudProvider *linodecloudprovider.CloudProvider
	certificates  *certificate.Manager
	webhookPort   int
	stopWebhook   func()

	nodeClass *v1.LinodeNodeClass
	nodePool  *karpv1.NodePool
)

func TestNodeWebhook(t *testing.T) { RunSuite(t, "Node webhook", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment(environment.WithCoreOptions(coretest.WithFieldIndexers(
		coretest.NodeProviderIDFieldIndexer(ctx),
		coretest.NodeClaimProviderIDFieldIndexer(ctx),
	)))

	emu = ExpectEmulator()
	cloud = ExpectLKE(ctx, emu, env.Client)
	lkeCluster, cloudProvider = cloud.Cluster, cloud.CloudProvider

	webhookPort = freePort()
	ExpectApplied(ctx, env.Client, node.Configuration(configurationName, admissionregistrationv1.WebhookClientConfig{
		URL: new(fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, node.Path)),
	}))
	apiReader, err := client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	Expect(err).ToNot(HaveOccurred())
	certificates = certificate.NewManager(env.Client, apiReader, certificate.Target{
		Namespace:                systemNamespace,
		SecretName:               "karpenter-linode-test-cert",
		ServiceName:              "karpenter-linode-test-webhook",
		WebhookConfigurationName: configurationName,
	}, certificate.WithExtraHosts("127.0.0.1"))
	ExpectSingletonReconciled(ctx, certificates)

	stopWebhook = startWebhook()
	expectWebhookCalled()
	stopWebhook()
})

var _ = BeforeEach(func() {
	stopWebhook = startWebhook()
	nodeClass = test.ReadyLinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	nodePool = test.NodePool(nodeClass, karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	ExpectApplied(ctx, env.Client, nodeClass, nodePool)
})

var _ = AfterEach(func() {
	stopWebhook()
	ExpectAllCleanedUp(ctx, env.Client)
})

// startWebhook serves LKE mode's webhooks on the port the MutatingWebhookConfiguration names,
// with the managed certificate, and returns a function that stops it.
func startWebhook() func() {
	server := webhooks.NewServer("127.0.0.1", webhookPort, certificates.ConfigureTLS)
	node.NewWebhook(env.Client).Register(server)
	serverCtx, cancel := context.WithCancel(ctx)
	go func() {
		defer GinkgoRecover()
		Expect(server.Start(serverCtx)).To(Succeed())
	}()
	Eventually(dialWebhook).Should(Succeed())
	// The server drains the apiserver's open connections for up to a minute after it stops
	// listening; a closed listener is what makes the webhook unreachable.
	return func() {
		cancel()
		Eventually(dialWebhook).ShouldNot(Succeed())
	}
}

func dialWebhook() error {
	// Whether the server listens is the question, not whom it claims to be.
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(webhookPort)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
	if err == nil {
		conn.Close()
	}
	return err
}

// expectWebhookCalled waits until the apiserver has loaded the webhook configuration and its
// caBundle: a dry-run creation of one of our nodes comes back tainted.
func expectWebhookCalled() {
	GinkgoHelper()
	probe := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: "probe"}},
		Status:     karpv1.NodeClaimStatus{ProviderID: "linode://999999999"},
	})
	ExpectApplied(ctx, env.Client, probe)
	Eventually(func(g Gomega) {
		candidate := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lke%d-1-0", lkeCluster.ID), Labels: map[string]string{karpv1.NodePoolLabelKey: "probe"}},
			Spec:       corev1.NodeSpec{ProviderID: probe.Status.ProviderID},
		}
		g.Expect(env.Client.Create(ctx, candidate, client.DryRunAll)).To(Succeed())
		g.Expect(candidate.Spec.Taints).To(ContainElement(karpv1.UnregisteredNoExecuteTaint))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	ExpectDeleted(ctx, env.Client, probe)
}

func freePort() int {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).ToNot(HaveOccurred())
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}

// coreRun is Karpenter core's NodeClaim lifecycle controller with what it logs and records.
type coreRun struct {
	controller *lifecycle.Controller
	events     *record.FakeRecorder
	mu         sync.Mutex
	logs       []string
}

func newCoreRun(clk clock.Clock) *coreRun {
	run := &coreRun{events: record.NewFakeRecorder(100)}
	cluster := state.NewCluster(clk, env.Client, cloudProvider)
	run.controller = lifecycle.NewController(clk, env.Client, cloudProvider, events.NewRecorder(run.events), cluster, nodepoolhealth.NewState(), nil)
	return run
}

// reconcile runs the lifecycle once on the NodeClaim, recording the controller's log lines.
func (r *coreRun) reconcile(nodeClaim *karpv1.NodeClaim) {
	GinkgoHelper()
	sink := funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.logs = append(r.logs, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
	ExpectObjectReconciled(log.IntoContext(ctx, logr.New(sink.GetSink())), env.Client, r.controller, nodeClaim)
}

func (r *coreRun) logged(substring string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range r.logs {
		if strings.Contains(line, substring) {
			return true
		}
	}
	return false
}

func (r *coreRun) recordedEvent(reason string) bool {
	for {
		select {
		case event := <-r.events.Events:
			if strings.Contains(event, " "+reason+" ") {
				return true
			}
		default:
			return false
		}
	}
}

// kubeletRegisters creates the Node of a pool's Linode the way an LKE kubelet does: named after
// the Linode, with the pool's labels and taints, and no taints of its own. It returns the Node
// as stored.
func kubeletRegisters(instance emulator.InstanceInfo, withProviderID bool) *corev1.Node {
	GinkgoHelper()
	n := kubeletNode(instance, withProviderID)
	Expect(env.Client.Create(ctx, n)).To(Succeed())
	return ExpectExists(ctx, env.Client, n)
}

// kubeletNode is the Node an LKE kubelet registers for the pool's Linode.
func kubeletNode(instance emulator.InstanceInfo, withProviderID bool) *corev1.Node {
	GinkgoHelper()
	pool, err := emu.Client.GetLKENodePool(ctx, instance.LKEClusterID, instance.LKEPoolID)
	Expect(err).ToNot(HaveOccurred())
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: instance.Label, Labels: map[string]string{corev1.LabelHostname: instance.Label}},
		Spec:       corev1.NodeSpec{},
	}
	maps.Copy(n.Labels, pool.Labels)
	for _, taint := range pool.Taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: taint.Key, Value: taint.Value, Effect: corev1.TaintEffect(taint.Effect)})
	}
	if withProviderID {
		n.Spec.ProviderID = nodeprovider.ProviderID(instance.ID)
	}
	return n
}

// taintsOf are the Node's taints but the not-ready taint the apiserver's TaintNodesByCondition
// plugin puts on every new Node.
func taintsOf(n *corev1.Node) []corev1.Taint {
	return lo.Reject(n.Spec.Taints, func(taint corev1.Taint, _ int) bool { return taint.Key == corev1.TaintNodeNotReady })
}

// instanceOf is the Linode the NodeClaim launched.
func instanceOf(nodeClaim *karpv1.NodeClaim) emulator.InstanceInfo {
	GinkgoHelper()
	nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
	id, err := nodeprovider.ParseProviderID(nodeClaim.Status.ProviderID)
	Expect(err).ToNot(HaveOccurred())
	instance, found := lo.Find(emu.Instances(), func(instance emulator.InstanceInfo) bool { return instance.ID == id })
	Expect(found).To(BeTrue(), "Linode %d of NodeClaim %s is not in the emulator", id, nodeClaim.Name)
	return instance
}

// instanceOfPool is the Linode of a single-node pool.
func instanceOfPool(poolID int) emulator.InstanceInfo {
	GinkgoHelper()
	instance, found := lo.Find(emu.Instances(), func(instance emulator.InstanceInfo) bool { return instance.LKEPoolID == poolID })
	Expect(found).To(BeTrue(), "pool %d has no Linode in the emulator", poolID)
	return instance
}
