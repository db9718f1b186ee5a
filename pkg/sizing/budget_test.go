package sizing_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/events"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

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
		Expect(said).To(ConsistOf(And(ContainSubstring("Warning"), ContainSubstring("Offered every plan: sizing for 30 pending pods in 1 shapes took longer than its time budget of 1ns"),
			ContainSubstring("every plan is offered without sizing for 1m0s, or until the pending pods are in fewer than half as many shapes"))))
	})

	It("offers every plan without sizing after a decision overran, for a minute doubling with each overrun in a row, while the pending pods keep half as many shapes", func() {
		hurried := linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("sizing-hold-off", lke.TierStandard, test.Region),
			test.WithSettings(func(o *options.Options) { o.SizingTimeBudget = time.Nanosecond }))
		hurried.Sizing.Track(cluster)
		ask := func() {
			GinkgoHelper()
			instanceTypes, err := hurried.CloudProvider.GetInstanceTypes(ctx, nodePool)
			Expect(err).ToNot(HaveOccurred())
			for _, it := range instanceTypes {
				if isStandardOrDedicated(it) {
					Expect(available(it)).To(BeTrue(), it.Name)
				}
			}
		}
		added := 0
		addShape := func() {
			GinkgoHelper()
			added++
			apply(pendingPods(fmt.Sprintf("added-%d", added), 1, fmt.Sprintf("%dm", 100+added), "1Gi"))
		}
		deleteAll := func(pods []*corev1.Pod) {
			GinkgoHelper()
			ExpectDeleted(ctx, env.Client, lo.Map(pods, func(p *corev1.Pod, _ int) client.Object { return p })...)
		}
		var pods [][]*corev1.Pod
		for i, shape := range [][2]string{{"1", "1Gi"}, {"2", "2Gi"}, {"500m", "512Mi"}, {"3", "4Gi"}} {
			pods = append(pods, pendingPods(fmt.Sprintf("shape-%d", i), 3, shape[0], shape[1]))
			apply(pods[i])
		}
		exceeded, heldOff := budgetExceeded(), heldOffAnswers()
		overran := func() float64 { GinkgoHelper(); return budgetExceeded() - exceeded }
		held := func() float64 { GinkgoHelper(); return heldOffAnswers() - heldOff }
		ask()
		Expect(overran()).To(Equal(1.0), "four shapes overran the budget")

		By("one more shape: held off, not sized")
		addShape()
		ask()
		Expect(overran()).To(Equal(1.0))
		Expect(held()).To(Equal(1.0))

		By("down to two shapes, half the four that overran: still held off")
		for _, group := range pods[1:] {
			deleteAll(group)
		}
		ask()
		Expect(overran()).To(Equal(1.0))
		Expect(held()).To(Equal(2.0))

		By("down to one shape: sized again, and over the budget a second time in a row")
		deleteAll(pods[0])
		ask()
		Expect(overran()).To(Equal(2.0))

		By("held off for two minutes after the second overrun, not one")
		emu.Clock.Step(time.Minute)
		addShape()
		ask()
		Expect(overran()).To(Equal(2.0))
		Expect(held()).To(Equal(3.0))
		emu.Clock.Step(time.Minute)
		addShape()
		ask()
		Expect(overran()).To(Equal(3.0), "two minutes after the second overrun, a change is sized")

		By("once no pod is pending, the next overrun holds the NodePool off for a minute again")
		deleteAll(lo.Map(lo.Range(added), func(i, _ int) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("added-%d-000", i+1), Namespace: "default"}}
		}))
		ask()
		addShape()
		ask()
		Expect(overran()).To(Equal(4.0))
		emu.Clock.Step(time.Minute)
		addShape()
		ask()
		Expect(overran()).To(Equal(5.0))
		Expect(held()).To(Equal(3.0))
	})
})

// heldOffAnswers is the sizing policy's count of answers that offered the NodePool every plan
// without sizing after an overrun.
func heldOffAnswers() float64 {
	GinkgoHelper()
	heldOff, _, err := test.NodePoolMetric("karpenter_linode_sizing_held_off_total", nodePool.Name)
	Expect(err).ToNot(HaveOccurred())
	return heldOff
}

// budgetExceeded is the sizing policy's count of decisions past the time budget for the NodePool.
func budgetExceeded() float64 {
	GinkgoHelper()
	exceeded, _, err := test.NodePoolMetric("karpenter_linode_sizing_time_budget_exceeded_total", nodePool.Name)
	Expect(err).ToNot(HaveOccurred())
	return exceeded
}
