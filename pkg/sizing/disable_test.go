package sizing_test

import (
	"strings"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	linodeexpectations "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var _ = Describe("Turning the policy off", func() {
	// Thirty one-CPU pods: the policy offers plans up to g6-standard-4, where core on its own
	// would pack them onto its biggest plans.
	const bigPlan = "g6-dedicated-64"

	It("offers every plan with SIZING_POLICY=disabled, where the same cluster's policy narrows them", func() {
		off := linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("sizing-off", lke.TierStandard, test.Region),
			test.WithSettings(func(o *options.Options) { o.SizingPolicy = v1.SizingPolicyDisabled }))
		off.Sizing.Track(cluster)
		apply(pendingPods("web", 30, "1", "1Gi"))

		Expect(available(offered()[bigPlan])).To(BeFalse(), "enabled")
		instanceTypes, err := off.CloudProvider.GetInstanceTypes(ctx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		Expect(instanceTypes).ToNot(BeEmpty())
		for _, it := range instanceTypes {
			if isStandardOrDedicated(it) {
				Expect(available(it)).To(BeTrue(), "disabled: %s", it.Name)
			}
		}
	})

	It("offers every plan to a NodePool annotated sizing-policy=disabled, and narrows them again without it", func() {
		apply(pendingPods("web", 30, "1", "1Gi"))
		Expect(available(offered()[bigPlan])).To(BeFalse())

		nodePool.Annotations = map[string]string{v1.AnnotationSizingPolicy: v1.SizingPolicyDisabled}
		ExpectApplied(ctx, env.Client, nodePool)
		for name, it := range offered() {
			if isStandardOrDedicated(it) {
				Expect(available(it)).To(BeTrue(), name)
			}
		}

		nodePool.Annotations = map[string]string{v1.AnnotationSizingPolicy: v1.SizingPolicyEnabled}
		ExpectApplied(ctx, env.Client, nodePool)
		Expect(available(offered()[bigPlan])).To(BeFalse())
	})

	It("logs an unknown value of the annotation once and keeps sizing", func() {
		apply(pendingPods("web", 30, "1", "1Gi"))
		nodePool.Annotations = map[string]string{v1.AnnotationSizingPolicy: "off"}
		ExpectApplied(ctx, env.Client, nodePool)
		var lines []string
		recording := log.IntoContext(ctx, funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
		for range 2 {
			instanceTypes, err := cloudProvider.GetInstanceTypes(recording, nodePool)
			Expect(err).ToNot(HaveOccurred())
			for _, it := range instanceTypes {
				if it.Name == bigPlan {
					Expect(available(it)).To(BeFalse())
				}
			}
		}
		var ignoring []string
		for _, line := range lines {
			if strings.Contains(line, "ignoring") {
				ignoring = append(ignoring, line)
			}
		}
		Expect(ignoring).To(ConsistOf(And(
			ContainSubstring(`ignoring the NodePool's annotation karpenter.k8s.linode/sizing-policy=\"off\": use enabled or disabled`),
			ContainSubstring(`"NodePool"="default"`),
		)), "once")
	})
})
