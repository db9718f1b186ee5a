package test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linode/linodego"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// Emulator is the Linode API emulator, started, with a linodego client aimed at it.
type Emulator struct {
	*emulator.Emulator
	// Clock is the emulator's clock; it stands still until the test steps it.
	Clock *clocktesting.FakeClock
	// Client retries nothing; a test that wants linodego's retries sets them.
	Client *linodego.Client
}

// StartEmulator starts the emulator as tests use it: no rate limits, every state machine done by
// the next request (delays scaled to zero), and a clock that stands still. opts come after those
// and override them. The caller closes it.
func StartEmulator(opts ...emulator.Option) (*Emulator, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := emulator.New(append([]emulator.Option{emulator.WithClock(clk), emulator.WithoutRateLimits(), emulator.WithDelayScale(0)}, opts...)...)
	if err := e.Start(); err != nil {
		return nil, err
	}
	return &Emulator{Emulator: e, Clock: clk, Client: e.NewClient()}, nil
}

// Calls is how many API requests the emulator answered since its counters were last reset.
func (e *Emulator) Calls() int {
	total := 0
	for _, n := range e.Counters() {
		total += n
	}
	return total
}

// StartEmulatorForTest starts the emulator as StartEmulator does, fails the test if it cannot,
// and closes it when the test ends.
func StartEmulatorForTest(t testing.TB, opts ...emulator.Option) *Emulator {
	t.Helper()
	e, err := StartEmulator(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// LKEModeNode is a node an LKE-mode Karpenter launched for the NodeClaim, beside the test's own
// nodes in the same account: a single-node pool, tagged as the LKE provider tags the pools it
// launches, in a new LKE cluster of the enterprise tier, labelled clusterLabel, whose pools give
// their Linodes their tags. It returns the pool's Linode, running, which so carries the
// NodeClaim's tag and the LKE cluster's ownership tag.
func (e *Emulator) LKEModeNode(ctx context.Context, clusterLabel, nodeClaimName string) (*linodego.Instance, error) {
	clusterID, err := e.AddLKECluster(clusterLabel, Region, "enterprise")
	if err != nil {
		return nil, err
	}
	pool, err := e.Client.CreateLKENodePool(ctx, clusterID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-standard-2", Label: &nodeClaimName,
		Tags: []string{nodeprovider.LKEClusterTag(clusterID), nodeprovider.NodeClaimTag(nodeClaimName), nodeprovider.NodePoolTag("default")},
	})
	if err != nil {
		return nil, err
	}
	e.Tick()
	for _, in := range e.Instances() {
		if in.LKEPoolID == pool.ID {
			return e.Client.GetInstance(ctx, in.ID)
		}
	}
	return nil, fmt.Errorf("LKE created no Linode for node pool %d", pool.ID)
}
