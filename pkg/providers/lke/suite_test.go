package lke_test

import (
	"context"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

const (
	clusterName = "karpenter-test"
	region      = "us-ord"
)

// fixture is an LKE provider aimed at a fresh emulator.
type fixture struct {
	emulator    *emulator.Emulator
	client      *linodego.Client
	clock       *clocktesting.FakeClock
	cluster     *lke.Cluster
	unavailable *cache.UnavailableOfferings
	provider    *lke.Provider
}

type fixtureOptions struct {
	tier     lke.Tier
	emulator []emulator.Option
	provider []option.Function[lke.Options]
	retries  int
}

// newFixture starts an emulator whose state machines finish on the next request, creates the
// cluster and discovers it as the operator does.
func newFixture(t testing.TB, opts fixtureOptions) *fixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e := emulator.New(append([]emulator.Option{emulator.WithClock(clk), emulator.WithoutRateLimits(), emulator.WithDelayScale(0)}, opts.emulator...)...)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	tier := opts.tier
	if tier == "" {
		tier = lke.TierStandard
	}
	if _, err := e.AddLKECluster(clusterName, region, string(tier)); err != nil {
		t.Fatal(err)
	}
	client := e.NewClient()
	client.SetRetryCount(opts.retries)
	cluster, err := lke.Discover(context.Background(), client, clusterName, "")
	if err != nil {
		t.Fatal(err)
	}
	unavailable := cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	providerOpts := append([]option.Function[lke.Options]{lke.WithPollInterval(time.Millisecond), lke.WithLaunchTimeout(5 * time.Second)}, opts.provider...)
	return &fixture{
		emulator:    e,
		client:      client,
		clock:       clk,
		cluster:     cluster,
		unavailable: unavailable,
		provider:    lke.NewProvider(client, cluster, clusterName, unavailable, providerOpts...),
	}
}

// calls is how many API requests the emulator answered since the last reset.
func (f *fixture) calls() int {
	total := 0
	for _, n := range f.emulator.Counters() {
		total += n
	}
	return total
}

// plan is an instance type with one on-demand offering in the test region.
func plan(name string, price float64) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{
		Name:         name,
		Requirements: scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, name)),
		Offerings: cloudprovider.Offerings{{
			Requirements: scheduling.NewRequirements(
				scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand),
				scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, region),
			),
			Price:     price,
			Available: true,
		}},
	}
}

// plans are three standard plans at their list prices.
func plans() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{plan("g6-standard-4", 0.072), plan("g6-standard-2", 0.036), plan("g6-dedicated-2", 0.054)}
}

func nodeClaim(name string) *karpv1.NodeClaim {
	return &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{karpv1.NodePoolLabelKey: "default", "team": "payments"},
		},
		Spec: karpv1.NodeClaimSpec{
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{region}},
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-standard-2", "g6-standard-4", "g6-dedicated-2"}},
			},
			Taints:        []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []corev1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute}},
		},
	}
}

func nodeClass() *v1.LinodeNodeClass {
	return &v1.LinodeNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       v1.LinodeNodeClassSpec{Tags: []v1.Tag{"team-payments"}},
	}
}
