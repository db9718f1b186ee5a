package lke_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// poolLinode creates a single-node pool of the cluster with the tags and returns its Linode.
func poolLinode(t *testing.T, f *fixture, tags ...string) *linodego.Instance {
	t.Helper()
	ctx := context.Background()
	pool, err := f.client.CreateLKENodePool(ctx, f.cluster.ID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	f.emulator.Tick()
	for _, in := range f.emulator.Instances() {
		if in.LKEPoolID == pool.ID {
			linode, err := f.client.GetInstance(ctx, in.ID)
			if err != nil {
				t.Fatal(err)
			}
			return linode
		}
	}
	t.Fatalf("node pool %d has no Linode", pool.ID)
	return nil
}

// TestOnlyPoolsOfOursAreNodes: in a shared account, Get and List show only nodes of the cluster's
// pools that carry a tag of ours, and refuse the rest with a ForeignNodeError naming the Linode
// and why: neither gone (their NodeClaim would be finalized while they run) nor to delete. The
// cluster's own pools that Karpenter did not launch, a pool another cluster's Karpenter tagged,
// another LKE cluster's Karpenter node and a plain Linode labelled like one of our pool's nodes.
func TestOnlyPoolsOfOursAreNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linode func(t *testing.T, f *fixture, ours *nodeprovider.Node) *linodego.Instance
		why    string
	}{
		{name: "the cluster's pool Karpenter did not launch", linode: func(t *testing.T, f *fixture, _ *nodeprovider.Node) *linodego.Instance {
			return poolLinode(t, f)
		}, why: "carries no tag of ours"},
		{name: "a pool of the cluster another cluster's Karpenter tagged", linode: func(t *testing.T, f *fixture, _ *nodeprovider.Node) *linodego.Instance {
			return poolLinode(t, f, nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("default-theirs"))
		}, why: "another cluster's ownership tag"},
		{name: "another LKE cluster's Karpenter node", linode: func(t *testing.T, f *fixture, _ *nodeprovider.Node) *linodego.Instance {
			linode, err := f.emulator.LKEModeNode(context.Background(), "lke-neighbour", "default-theirs")
			if err != nil {
				t.Fatal(err)
			}
			return linode
		}, why: "not of LKE cluster"},
		{name: "a plain Linode labelled as a node of one of our pools", linode: func(t *testing.T, f *fixture, ours *nodeprovider.Node) *linodego.Instance {
			label := fmt.Sprintf("lke%d-%d-0000deadbeef", f.cluster.ID, ours.LKE.PoolID)
			linode, err := f.client.CreateInstance(context.Background(), linodego.InstanceCreateOptions{Region: region, Type: "g6-standard-2", Label: label,
				Tags: []string{nodeprovider.LKEClusterTag(f.cluster.ID), nodeprovider.NodeClaimTag("default-ours")}})
			if err != nil {
				t.Fatal(err)
			}
			return linode
		}, why: "a plain Linode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
			ctx := context.Background()
			ours, err := f.provider.Create(ctx, nodeClass(), nodeClaim("default-ours"), plans())
			if err != nil {
				t.Fatal(err)
			}
			linode := tc.linode(t, f, ours)
			_, err = f.provider.Get(ctx, nodeprovider.ProviderID(linode.ID))
			foreign, ok := nodeprovider.AsForeignNode(err)
			if !ok || foreign.InstanceID != linode.ID || foreign.Label != linode.Label || !strings.Contains(foreign.Reason, tc.why) {
				t.Fatalf("Get(%s) = %v, want a ForeignNodeError naming Linode %d (%s) because %s", linode.Label, err, linode.ID, linode.Label, tc.why)
			}
			nodes, err := f.provider.List(ctx)
			if err != nil || len(nodes) != 1 || nodes[0].InstanceID != ours.InstanceID {
				t.Fatalf("List = %+v (%v), want our node alone", nodes, err)
			}
		})
	}
}

// TestAPoolStrippedOfOurTagsIsNotDeletedNorAdopted: a pool the provider showed as its own whose
// tags someone then replaced (none of ours left), or who gave it another cluster's, is not the
// provider's any more: Get refuses it, and neither Delete nor Adopt changes it, whatever node they
// are handed.
func TestAPoolStrippedOfOurTagsIsNotDeletedNorAdopted(t *testing.T) {
	for _, tags := range [][]string{{"team-payments"}, {nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("default-shown")}} {
		t.Run(strings.Join(tags, ","), func(t *testing.T) {
			f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
			ctx := context.Background()
			node, err := f.provider.Create(ctx, nodeClass(), nodeClaim("default-shown"), plans())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.client.UpdateLKENodePool(ctx, f.cluster.ID, node.LKE.PoolID, linodego.LKENodePoolUpdateOptions{Tags: &tags}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.provider.Get(ctx, node.ProviderID()); !nodeprovider.IsForeignNode(err) {
				t.Fatalf("Get of the stripped pool's node = %v, want a ForeignNodeError", err)
			}
			if nodes, err := f.provider.List(ctx); err != nil || len(nodes) != 0 {
				t.Fatalf("List = %+v (%v), want nothing", nodes, err)
			}
			stale := *node
			stale.Tags = tags
			f.emulator.ResetCounters()
			if err := f.provider.Delete(ctx, &stale); !nodeprovider.IsForeignNode(err) {
				t.Fatalf("Delete = %v, want a ForeignNodeError", err)
			}
			if err := f.provider.Adopt(ctx, node, "default-adopter"); !nodeprovider.IsForeignNode(err) {
				t.Fatalf("Adopt = %v, want a ForeignNodeError", err)
			}
			for _, request := range f.emulator.Requests() {
				if request.Method != http.MethodGet {
					t.Errorf("%s %s changed a pool that is not the provider's", request.Method, request.Path)
				}
			}
			if migrated, err := f.provider.MigrateOwnership(ctx); err != nil || migrated != 0 {
				t.Fatalf("MigrateOwnership = %d, %v; want nothing taken back", migrated, err)
			}
			if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 || !slices.Equal(pools[0].Tags, tags) {
				t.Fatalf("the pool is now %+v, want it as its owner left it", pools)
			}
		})
	}
}
