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

	It("offers every plan without sizing again for a minute after a decision overran, while the pending pods keep half as many shapes", func() {
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
		shapes := [][2]string{{"1", "1Gi"}, {"2", "2Gi"}, {"500m", "512Mi"}, {"3", "4Gi"}, {"1500m", "3Gi"}}
		var pods [][]*corev1.Pod
		for i, shape := range shapes[:4] {
			pods = append(pods, pendingPods(fmt.Sprintf("shape-%d", i), 3, shape[0], shape[1]))
			apply(pods[i])
		}
		exceeded, heldOff := budgetExceeded(), heldOffAnswers()
		ask()
		Expect(budgetExceeded()-exceeded).To(Equal(1.0), "four shapes overran the budget")

		By("one more shape: held off, not sized")
		apply(pendingPods("shape-4", 1, shapes[4][0], shapes[4][1]))
		ask()
		Expect(budgetExceeded() - exceeded).To(Equal(1.0))
		Expect(heldOffAnswers() - heldOff).To(Equal(1.0))

		By("down to two of the five shapes, half the four that overran: still held off")
		for _, group := range pods[2:] {
			ExpectDeleted(ctx, env.Client, lo.Map(group, func(p *corev1.Pod, _ int) client.Object { return p })...)
		}
		ExpectDeleted(ctx, env.Client, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "shape-4-000", Namespace: "default"}})
		ask()
		Expect(budgetExceeded() - exceeded).To(Equal(1.0))
		Expect(heldOffAnswers() - heldOff).To(Equal(2.0))

		By("down to one shape: sized again (and over the budget again)")
		ExpectDeleted(ctx, env.Client, lo.Map(pods[1], func(p *corev1.Pod, _ int) client.Object { return p })...)
		ask()
		Expect(budgetExceeded() - exceeded).To(Equal(2.0))

		By("a minute after that overrun, a change is sized again")
		apply(pendingPods("shape-1-again", 1, shapes[1][0], shapes[1][1]))
		ask()
		Expect(budgetExceeded()-exceeded).To(Equal(2.0), "within the minute: held off")
		Expect(heldOffAnswers() - heldOff).To(Equal(3.0))
		emu.Clock.Step(time.Minute)
		apply(pendingPods("shape-2-again", 1, shapes[2][0], shapes[2][1]))
		ask()
		Expect(budgetExceeded() - exceeded).To(Equal(3.0))
		Expect(heldOffAnswers() - heldOff).To(Equal(3.0))
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
