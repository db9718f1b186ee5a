package sizing_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	linodeexpectations "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var _ = Describe("Why this plan", func() {
	var (
		recorder  *record.FakeRecorder
		explained *test.LKE
		launch    func(pods ...*corev1.Pod) []*karpv1.NodeClaim
	)

	BeforeEach(func() {
		recorder = record.NewFakeRecorder(1000)
		explained = linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("sizing-events", lke.TierStandard, test.Region),
			test.WithRecorder(events.NewRecorder(recorder)))
		state := state.NewCluster(env.Clock, env.Client, explained.CloudProvider)
		explained.Sizing.Track(state)
		provisioner := provisioning.NewProvisioner(env.Client, events.NewRecorder(&record.FakeRecorder{}), explained.CloudProvider, state, env.Clock,
			deviceallocation.NewController(env.Client), virtualpods.NewVirtualPodCache(env.Client))
		// A round as the controller runs it: core's provisioner asks for plans under its name,
		// then its NodeClaims launch.
		launch = func(pods ...*corev1.Pod) []*karpv1.NodeClaim {
			GinkgoHelper()
			apply(pods)
			results, err := provisioner.Schedule(injection.WithControllerName(ctx, "provisioner"))
			Expect(err).ToNot(HaveOccurred())
			var launched []*karpv1.NodeClaim
			for _, m := range results.NewNodeClaims {
				name, err := provisioner.Create(ctx, m, provisioning.WithReason(metrics.ProvisionedReason))
				Expect(err).ToNot(HaveOccurred())
				nodeClaim := &karpv1.NodeClaim{}
				Expect(env.Client.Get(ctx, types.NamespacedName{Name: name}, nodeClaim)).To(Succeed())
				nodeClaim, err = ExpectNodeClaimDeployedNoNode(ctx, env.Client, explained.CloudProvider, nodeClaim)
				Expect(err).ToNot(HaveOccurred())
				launched = append(launched, nodeClaim)
			}
			return launched
		}
	})

	// recorded are the events recorded so far with the reason, as "Type Reason Message".
	recorded := func(reason string) []string {
		var found []string
		for {
			select {
			case event := <-recorder.Events:
				if strings.Contains(event, " "+reason+" ") {
					found = append(found, event)
				}
			default:
				return found
			}
		}
	}
	// catalogue is the hourly price of each plan, as Linode lists it.
	catalogue := func() map[string]float64 {
		GinkgoHelper()
		instanceTypes, err := explained.CloudProvider.GetInstanceTypes(ctx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		prices := map[string]float64{}
		for _, it := range instanceTypes {
			prices[it.Name] = it.Offerings[0].Price
		}
		return prices
	}

	It("tells each NodeClaim the ceiling, the fleet it expects and the alternatives, at the catalogue's prices", func() {
		// Thirty one-CPU pods: three to a g6-standard-4 node, ten nodes, the cheapest fleet.
		Expect(launch(pendingPods("web", 30, "1", "1Gi")...)).To(HaveLen(10))
		decisions := recorded("SizingDecision")
		Expect(decisions).To(HaveLen(10), "one event a NodeClaim")
		prices := catalogue()
		// Ten g6-standard-4 nodes; the next cheaper ceiling, g6-dedicated-2, holds one pod a node,
		// each launched on g6-standard-2; the next dearer, g6-dedicated-4, launches the same fleet.
		fleet := fmt.Sprintf("$%.4f/h on 10 nodes", 10*prices["g6-standard-4"])
		Expect(decisions).To(HaveEach(Equal(fmt.Sprintf("Normal SizingDecision The sizing policy offered NodePool default plans up to g6-standard-4 ($%.4f/h) for 30 pending pods: "+
			"expected fleet %s, cheapest fleet %s; next cheaper ceiling g6-dedicated-2 ($%.4f/h): $%.4f/h on 30 nodes; next dearer ceiling g6-dedicated-4 ($%.4f/h): %s",
			prices["g6-standard-4"], fleet, fleet, prices["g6-dedicated-2"], 30*prices["g6-standard-2"], prices["g6-dedicated-4"], fleet))))
	})

	It("says every plan was offered to a NodePool annotated sizing-policy=disabled", func() {
		nodePool.Annotations = map[string]string{v1.AnnotationSizingPolicy: v1.SizingPolicyDisabled}
		ExpectApplied(ctx, env.Client, nodePool)
		Expect(launch(pendingPods("web", 3, "1", "1Gi")...)).ToNot(BeEmpty())
		Expect(recorded("SizingDecision")).To(HaveEach(Equal(
			"Normal SizingDecision The sizing policy offered NodePool default every plan: its karpenter.k8s.linode/sizing-policy annotation is disabled")))
	})

	It("tells a pod too big for the round's ceiling, once however often the round asks, that it waits for a later round", func() {
		apply(pendingPods("small", 60, "500m", "1Gi"))
		apply(pendingPods("big", 1, "40", "64Gi"))
		asking := injection.WithControllerName(ctx, "provisioner")
		for range 3 {
			_, err := explained.CloudProvider.GetInstanceTypes(asking, nodePool)
			Expect(err).ToNot(HaveOccurred())
		}
		prices := catalogue()
		Expect(recorded("SizingDeferred")).To(ConsistOf(fmt.Sprintf("Normal SizingDeferred Left for a later provisioning round: NodePool default is offered plans up to "+
			"g6-standard-6 ($%.4f/h) this round, and the cheapest plan that holds the pod is g6-dedicated-48 ($%.4f/h)", prices["g6-standard-6"], prices["g6-dedicated-48"])))
	})

	It("says every plan was offered with SIZING_POLICY=disabled", func() {
		off := linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("sizing-events-off", lke.TierStandard, test.Region),
			test.WithRecorder(events.NewRecorder(recorder)), test.WithSettings(func(o *options.Options) { o.SizingPolicy = v1.SizingPolicyDisabled }))
		nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name}},
			Spec:       karpv1.NodeClaimSpec{NodeClassRef: nodePool.Spec.Template.Spec.NodeClassRef},
		})
		ExpectApplied(ctx, env.Client, nodeClaim)
		_, err := ExpectNodeClaimDeployedNoNode(ctx, env.Client, off.CloudProvider, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(recorded("SizingDecision")).To(ConsistOf("Normal SizingDecision The sizing policy offered NodePool default every plan: SIZING_POLICY is disabled"))
	})
})
