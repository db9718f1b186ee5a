package lke_test

import (
	"context"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	clusterName = test.ClusterName
	region      = test.Region
)

// fixture is an LKE provider aimed at a fresh emulator, built as the controller builds it.
type fixture struct {
	emulator *test.Emulator
	client   *linodego.Client
	// api is the controller's client over client.
	api         *linode.Client
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
// cluster and builds the provider for it as the operator does.
func newFixture(t testing.TB, opts fixtureOptions) *fixture {
	t.Helper()
	e := test.StartEmulatorForTest(t, opts.emulator...)
	e.Client.SetRetryCount(opts.retries)
	tier := opts.tier
	if tier == "" {
		tier = lke.TierStandard
	}
	cloud, err := test.NewLKE(context.Background(), e, nil, test.WithCluster(clusterName, tier, region), test.WithNodeProviderOptions(opts.provider...))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{emulator: e, client: e.Client, api: e.API, cluster: cloud.Cluster, unavailable: cloud.Unavailable, provider: cloud.Pools()}
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
	return test.LinodeNodeClass(v1.LinodeNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       v1.LinodeNodeClassSpec{Tags: []v1.Tag{"team-payments"}},
	})
}
