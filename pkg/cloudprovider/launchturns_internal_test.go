package cloudprovider

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// TestHandBacksOnlyAsManyAsTurnsRemain: in instance mode (a NodeClaim's create may take a turn up
// to 4m40s after its creation), with Linode's 20 creates per 15 s and the next free turn 4m30s
// away, a NodeClaim made 10 s from now has 20 s of turns before its bound: 26 of the NodeClaims
// refused are handed back, the rest wait. A minute later their replacements have booked their
// turns (the next free turn says so) and as many again may go.
func TestHandBacksOnlyAsManyAsTurnsRemain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := newHandBacks(clk, mode.Instance)
	refused := &linode.TurnError{Class: linode.ClassLinodeCreate, In: 4*time.Minute + 30*time.Second, Pace: 750 * time.Millisecond}
	count := func() int {
		n := 0
		for range 100 {
			if h.handBack(refused) {
				n++
			}
		}
		return n
	}
	if n := count(); n != 26 {
		t.Fatalf("%d of 100 refused NodeClaims handed back, want the 26 whose replacements find turns", n)
	}
	clk.Step(handBackMemory)
	if n := count(); n != 26 {
		t.Fatalf("a minute later, %d handed back, want 26 again", n)
	}
	if h.handBack(&linode.TurnError{Class: linode.ClassLinodeCreate, In: 5 * time.Minute, Pace: 750 * time.Millisecond}) {
		t.Fatal("handed back a NodeClaim although the next free turn is beyond any new NodeClaim's bound")
	}
}
