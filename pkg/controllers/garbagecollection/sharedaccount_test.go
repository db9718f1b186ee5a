package garbagecollection_test

import (
	"slices"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/garbagecollection"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

// One account, four clusters' Karpenter (this LKE-mode one, an LKE-mode neighbour on the
// enterprise tier, whose pools give their Linodes their tags, and two instance-mode clusters),
// each with a node whose NodeClaim was lost, and Linodes of no cluster: each garbage collection,
// periodic or of a deleted Node, deletes its own cluster's lost node and touches nothing else.
var _ = Describe("Garbage collection in an account shared with other clusters", func() {
	type collector struct {
		name     string
		periodic *garbagecollection.Controller
		deleted  *garbagecollection.DeletedNodeController
	}
	var collectors []collector
	// lost are the provider IDs of each cluster's lost node, by collector name.
	var lost map[string]string
	var strangers []string

	instanceCluster := func(uid string) (*instance.Provider, *instance.Cluster) {
		cluster := &instance.Cluster{UID: types.UID(uid)}
		return instance.NewProvider(emu.API, test.Region, cluster, nil, nil, nil, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL), instance.WithClock(clk)), cluster
	}
	plainLinode := func(label string, tags ...string) string {
		GinkgoHelper()
		created, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Label: label, Tags: tags})
		Expect(err).ToNot(HaveOccurred())
		return nodeprovider.ProviderID(created.ID)
	}

	BeforeEach(func() {
		neighbour := ExpectLKE(ctx, emu, nil, test.WithCluster("lke-neighbour", lke.TierEnterprise, test.Region), test.WithNodeProviderOptions(lke.WithClock(clk)))
		instanceA, clusterA := instanceCluster("0b7c4f3e-1d2a-4c5b-9e8f-7a6b5c4d3e2f")
		instanceB, clusterB := instanceCluster("9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b")
		// The instance-mode clusters collect first, while the others' nodes are still there.
		collectors = nil
		for _, c := range []struct {
			name     string
			provider interface {
				garbagecollection.NodeProvider
				garbagecollection.NodeGetter
			}
			tag string
		}{
			{"instance-a", instanceA, clusterA.OwnerTag()},
			{"instance-b", instanceB, clusterB.OwnerTag()},
			{"lke-neighbour", neighbour.Pools(), neighbour.Pools().OwnershipTag()},
		} {
			collectors = append(collectors, collector{c.name,
				garbagecollection.NewController(gcClient, recorder, c.provider, c.tag, garbagecollection.WithClock(clk)),
				garbagecollection.NewDeletedNodeController(gcClient, gcClient, recorder, c.provider, c.tag)})
		}
		collectors = append(collectors, collector{"lke", gc, garbagecollection.NewDeletedNodeController(gcClient, gcClient, recorder, nodes, nodes.OwnershipTag())})

		// The neighbour's NodeClass copied an instance-mode cluster's tags: its pool, and so its
		// Linode, carries instance-a's ownership tag as well as its own.
		neighbourPool, err := emu.Client.CreateLKENodePool(ctx, neighbour.Cluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: []string{
			neighbour.Pools().OwnershipTag(), nodeprovider.NodeClaimTag("neighbour-lost"), nodeprovider.NodePoolTag("default"), clusterA.OwnerTag(),
		}})
		Expect(err).ToNot(HaveOccurred())
		lost = map[string]string{
			"lke":           instanceOf(launchedPool("lke-lost")),
			"lke-neighbour": instanceOf(neighbourPool.ID),
			"instance-a":    plainLinode("a-lost", clusterA.OwnerTag(), nodeprovider.NodeClaimTag("a-lost"), nodeprovider.NodePoolTag("default")),
			"instance-b":    plainLinode("b-lost", clusterB.OwnerTag(), nodeprovider.NodeClaimTag("b-lost"), nodeprovider.NodePoolTag("default")),
		}
		strangers = []string{
			instanceOf(pool()),
			plainLinode("database", "team-payments"),
			plainLinode("stray", nodeprovider.NodeClaimTag("a-lost")),
		}
	})

	// linodes are the provider IDs of the Linodes of the account.
	linodes := func() []string {
		var ids []string
		for _, in := range emu.Instances() {
			ids = append(ids, nodeprovider.ProviderID(in.ID))
		}
		return ids
	}
	// expectLeft checks that, of the lost nodes, those of the named clusters and every stranger are
	// left, and nothing else.
	expectLeft := func(names ...string) {
		GinkgoHelper()
		want := slices.Clone(strangers)
		for _, name := range names {
			want = append(want, lost[name])
		}
		Expect(linodes()).To(ConsistOf(want))
	}

	It("deletes, past the grace period, each cluster's own lost node alone", func() {
		for _, c := range collectors {
			ExpectSingletonReconciled(ctx, c.periodic)
		}
		clk.Step(garbagecollection.DefaultGracePeriod + time.Second)
		left := []string{"lke", "lke-neighbour", "instance-a", "instance-b"}
		for _, c := range collectors {
			By("collecting " + c.name + "'s garbage")
			ExpectSingletonReconciled(ctx, c.periodic)
			left = slices.DeleteFunc(left, func(name string) bool { return name == c.name })
			expectLeft(left...)
		}
	})

	It("deletes, when their Node is deleted, only the cluster's own Linode", func() {
		left := []string{"lke", "lke-neighbour", "instance-a", "instance-b"}
		for _, c := range collectors {
			By("deleting every Linode's Node in " + c.name)
			for _, providerID := range append(slices.Clone(strangers), lost["lke"], lost["lke-neighbour"], lost["instance-a"], lost["instance-b"]) {
				_, err := c.deleted.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: providerID}})
				Expect(err).ToNot(HaveOccurred())
			}
			left = slices.DeleteFunc(left, func(name string) bool { return name == c.name })
			emu.Tick()
			expectLeft(left...)
		}
	})
})
