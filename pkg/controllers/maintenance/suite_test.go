package maintenance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/maintenance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var (
	ctx        context.Context
	env        *environment.Environment
	emu        *test.Emulator
	recorder   *record.FakeRecorder
	controller *maintenance.Controller
	// nodes is an instance-mode cluster's node provider over the emulator: the controller acts
	// only on the Linodes it shows as a NodeClaim's.
	nodes *instance.Provider
)

// cluster is the instance-mode cluster whose nodes the specs' Linodes are.
var cluster = &instance.Cluster{UID: "6a1f0c2e-5b7d-4e8a-9c3f-0d2b4e6f8a1c"}

func TestMaintenance(t *testing.T) { RunSuite(t, "Maintenance", &ctx) }

var _ = BeforeSuite(func() { env = ExpectEnvironment() })

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	recorder = record.NewFakeRecorder(100)
	nodes = instance.NewProvider(emu.API, test.Region, cluster, nil, nil, nil, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL))
	controller = newController()
	maintenance.Decisions.Reset()
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
})

// newController is the controller on the emulator's clock: maintenance windows are compared
// across Linode and the controller.
func newController() *maintenance.Controller {
	return maintenance.NewController(env.Client, emu.Client, nodes, events.NewRecorder(recorder), maintenance.WithClock(emu.Clock))
}

// runningLinode is a Linode with the tags that runs.
func runningLinode(tags ...string) int {
	GinkgoHelper()
	created, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Tags: tags})
	Expect(err).ToNot(HaveOccurred())
	emu.Tick()
	return created.ID
}

// ourNode is a registered NodeClaim of the NodePool "default" for a new running Linode launched
// for it, with its Node, Ready.
func ourNode() (*karpv1.NodeClaim, int) {
	GinkgoHelper()
	nodeClaim := newNodeClaim()
	return nodeClaim, nodeClaimOf(nodeClaim, runningLinode(cluster.OwnerTag(), nodeprovider.NodeClaimTag(nodeClaim.Name)))
}

// newNodeClaim is a NodeClaim of the NodePool "default", not yet stored.
func newNodeClaim() *karpv1.NodeClaim {
	return coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Labels:     map[string]string{karpv1.NodePoolLabelKey: "default"},
			Finalizers: []string{karpv1.TerminationFinalizer},
		},
		Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef("default")},
	})
}

// nodeClaimOf stores the NodeClaim as registered on the Linode with the id, with a Ready Node,
// whether or not the Linode is its own; it returns the id.
func nodeClaimOf(nodeClaim *karpv1.NodeClaim, id int) int {
	GinkgoHelper()
	node := coretest.Node(coretest.NodeOptions{ProviderID: nodeprovider.ProviderID(id), ReadyStatus: corev1.ConditionTrue})
	nodeClaim.Status = karpv1.NodeClaimStatus{ProviderID: nodeprovider.ProviderID(id), NodeName: node.Name}
	ExpectApplied(ctx, env.Client, node, nodeClaim)
	return id
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
