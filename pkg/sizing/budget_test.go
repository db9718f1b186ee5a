package sizing_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/sizing"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	linodeexpectations "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var _ = Describe("The time budget", func() {
	It("offers every plan, with an event on the NodePool and a metric, when sizing takes longer than SIZING_TIME_BUDGET", func() {
		recorder := record.NewFakeRecorder(100)
		hurried := linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("sizing-budget", lke.TierStandard, test.Region),
			test.WithRecorder(events.NewRecorder(recorder)), test.WithSettings(func(o *options.Options) { o.SizingTimeBudget = time.Nanosecond }))
		hurried.Sizing.Track(cluster)
		// With the default budget, these pods get plans up to g6-standard-4 (Turning the policy off).
		apply(pendingPods("web", 30, "1", "1Gi"))
		Expect(available(offered()["g6-dedicated-64"])).To(BeFalse(), "within the default budget")
		before := budgetExceeded()

		for range 2 {
			instanceTypes, err := hurried.CloudProvider.GetInstanceTypes(ctx, nodePool)
			Expect(err).ToNot(HaveOccurred())
			Expect(instanceTypes).ToNot(BeEmpty())
			for _, it := range instanceTypes {
				if isStandardOrDedicated(it) {
					Expect(available(it)).To(BeTrue(), it.Name)
				}
			}
		}
		Expect(budgetExceeded()-before).To(Equal(1.0), "once: the answer is kept for the same pending pods")
		var said []string
		for len(recorder.Events) > 0 {
			if event := <-recorder.Events; strings.Contains(event, " "+sizing.ReasonSizingTimeBudgetExceeded+" ") {
				said = append(said, event)
			}
		}
		Expect(said).To(ConsistOf(And(ContainSubstring("Warning"), ContainSubstring("Offered every plan: sizing for 30 pending pods in 1 shapes took longer than its time budget of 1ns"))))
	})
})

// budgetExceeded is the sizing policy's count of decisions past the time budget for the NodePool.
func budgetExceeded() float64 {
	GinkgoHelper()
	exceeded, _, err := test.NodePoolMetric("karpenter_linode_sizing_time_budget_exceeded_total", nodePool.Name)
	Expect(err).ToNot(HaveOccurred())
	return exceeded
}
