package chaos

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestTheLedgerCountsWritesToOthersByTheirOwner: writes a controller sends through its tenant's
// proxy count as its own or as touching another's by who owned the Linode or LKE cluster they
// name, a Linode gone since included; creates and reads count as neither.
func TestTheLedgerCountsWritesToOthersByTheirOwner(t *testing.T) {
	ctx := context.Background()
	emu := emulator.New(emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	book := newLedger(emu, func(in emulator.InstanceInfo) string {
		for _, tag := range in.Tags {
			if owner, ok := strings.CutPrefix(tag, "owner="); ok {
				return owner
			}
		}
		return noTenant
	})
	lkeCluster, err := emu.AddLKECluster("shared", sharedRegion, "standard")
	if err != nil {
		t.Fatal(err)
	}
	book.lkeOwners[lkeCluster] = "lke"
	controllerOf := func(tenant string) *linodego.Client {
		t.Helper()
		proxy, err := book.proxy(tenant)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		opts := linode.DefaultClientOptions()
		opts.URL, opts.Credentials, opts.RetryCount = proxy.URL, linode.StaticCredentials(emu.Token()), 0
		client, err := linode.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		return client.Client
	}
	a, b := controllerOf("a"), controllerOf("b")
	create := func(client *linodego.Client, tags ...string) int {
		t.Helper()
		in, err := client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: sharedRegion, Type: "g6-standard-2", Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	ownOfA, ofB, ofNone := create(a, "owner=a"), create(b, "owner=b"), create(b)
	pool, err := emu.NewClient().CreateLKENodePool(ctx, lkeCluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []error{
		a.DeleteInstance(ctx, ownOfA),
		a.DeleteInstance(ctx, ofB),
		a.RebootInstance(ctx, ofNone, 0),
		a.DeleteLKENodePool(ctx, lkeCluster, pool.ID),
	} {
		if write != nil {
			t.Fatal(write)
		}
	}
	if _, err := b.GetInstance(ctx, ofNone); err != nil {
		t.Fatal(err)
	}
	tallies, err := book.tally([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := tallies["a"]; got.writes != 5 || got.own != 1 || got.launched != 1 || got.deleted != 3 || len(got.othersTouched) != 3 || got.unresolved != 0 {
		t.Fatalf("a's tally: %+v, want 5 writes: a create, one to its own Linode, three to others' (b's Linode, no cluster's, the LKE cluster's pool)", got)
	}
	for _, want := range []string{"(b's", "(" + noTenant + "'s", "(lke's"} {
		if !slices.ContainsFunc(tallies["a"].othersTouched, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("a's writes to others %v name none %s", tallies["a"].othersTouched, want)
		}
	}
	if got := tallies["b"]; got.requests != 3 || got.writes != 2 || got.own != 0 || len(got.othersTouched) != 0 {
		t.Fatalf("b's tally: %+v, want two creates and a read", got)
	}
}
