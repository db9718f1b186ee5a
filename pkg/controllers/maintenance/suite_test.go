package maintenance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/maintenance"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var (
	ctx          context.Context
	env          *environment.Environment
	emu          *emulator.Emulator
	linodeClient *linodego.Client
	clk          *clocktesting.FakeClock
	recorder     *record.FakeRecorder
	controller   *maintenance.Controller
)

func TestMaintenance(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Maintenance")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
	ctx = coreoptions.ToContext(ctx, coretest.Options())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

var _ = BeforeEach(func() {
	// One clock for Linode and the controller: maintenance windows are compared across them.
	clk = clocktesting.NewFakeClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	emu = emulator.New(emulator.WithClock(clk), emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	Expect(emu.Start()).To(Succeed())
	linodeClient = emu.NewClient()
	recorder = record.NewFakeRecorder(100)
	controller = newController()
	maintenance.Decisions.Reset()
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
	Expect(emu.Close()).To(Succeed())
})

func newController() *maintenance.Controller {
	return maintenance.NewController(env.Client, linodeClient, events.NewRecorder(recorder), maintenance.WithClock(clk))
}

// runningLinode is a Linode that runs.
func runningLinode() int {
	GinkgoHelper()
	created, err := linodeClient.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"})
	Expect(err).ToNot(HaveOccurred())
	emu.Tick()
	return created.ID
}

// ourNode is a registered NodeClaim of the NodePool "default" for a new running Linode, with its
// Node, Ready.
func ourNode() (*karpv1.NodeClaim, int) {
	GinkgoHelper()
	id := runningLinode()
	node := coretest.Node(coretest.NodeOptions{ProviderID: nodeprovider.ProviderID(id), ReadyStatus: corev1.ConditionTrue})
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Labels:     map[string]string{karpv1.NodePoolLabelKey: "default"},
			Finalizers: []string{karpv1.TerminationFinalizer},
		},
		Spec:   karpv1.NodeClaimSpec{NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: "default"}},
		Status: karpv1.NodeClaimStatus{ProviderID: nodeprovider.ProviderID(id), NodeName: node.Name},
	})
	ExpectApplied(ctx, env.Client, node, nodeClaim)
	return nodeClaim, id
}

// recorded are the events published since the last call, as "<type> <reason> <message>".
func recorded() []string {
	var out []string
	for {
		select {
		case event := <-recorder.Events:
			out = append(out, event)
		default:
			return out
		}
	}
}

func recordedContaining(substrings ...string) []string {
	var out []string
	for _, event := range recorded() {
		matches := true
		for _, s := range substrings {
			matches = matches && strings.Contains(event, s)
		}
		if matches {
			out = append(out, event)
		}
	}
	return out
}

func decisions(cause string, decision maintenance.Decision) float64 {
	metric, ok := FindMetricWithLabelValues("karpenter_linode_maintenance_decisions_total", map[string]string{
		"cause": cause, "decision": string(decision), "nodepool": "default",
	})
	if !ok {
		return 0
	}
	return metric.Counter.GetValue()
}
