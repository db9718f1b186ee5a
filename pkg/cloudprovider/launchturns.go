package cloudprovider

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// A burst larger than Linode's create limit lets through in core's launch timeout (20 Linodes per
// 15 s against 5 minutes: about 380 nodes) books turns up to the bound of the NodeClaims it
// launches; the NodeClaims after those cannot have a turn before core deletes them for not
// launching. Left to time out, they would hold their pods for the rest of the 5 minutes while the
// turns after the booked ones go unused. Handed back to core at once (an insufficient-capacity
// error: core deletes the NodeClaim and schedules its pods again in its next round), each is
// replaced by a NodeClaim whose 5 minutes start then, and whose create takes the turns after the
// booked ones. Only as many are handed back as their replacements would find turns in time: the
// others wait for core's retry, so that the NodeClaims are not replaced over and over.

// replacementLead is the soonest core makes the replacement of a NodeClaim handed back: its
// next provisioning round, a batch window (1 s) and a scheduling simulation after the deletion.
// Counting it short hands back fewer, never one whose replacement misses its turn.
const replacementLead = 10 * time.Second

// handBackMemory is how long a hand-back counts as a replacement still to ask for its turn: by
// then its create has booked the turn, and the turns booked count it.
const handBackMemory = time.Minute

// launchTurnMargin is the time a launch needs from its create's turn until Create returns: the
// API's answer, and in LKE mode LKE creating the pool's Linode.
func launchTurnMargin(m mode.Mode) time.Duration {
	if m == mode.Instance {
		return 20 * time.Second
	}
	return time.Minute
}

// launchWindow is how long after a NodeClaim's creation its create may take a turn.
func launchWindow(m mode.Mode) time.Duration {
	return lifecycle.LaunchTimeout - launchTurnMargin(m)
}

// handBacks decides which NodeClaims refused a turn are handed back to core for replacement.
type handBacks struct {
	clock  clock.Clock
	window time.Duration

	mu     sync.Mutex
	recent []time.Time
}

func newHandBacks(clk clock.Clock, m mode.Mode) *handBacks {
	return &handBacks{clock: clk, window: launchWindow(m)}
}

// handBack reports whether the launch refused a turn with err should be handed back to core: a
// NodeClaim made now, and the replacements of those handed back in the last minute, would find
// turns within their own bounds.
func (h *handBacks) handBack(err error) bool {
	var refused *linode.TurnError
	if !errors.As(err, &refused) || refused.Pace <= 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	kept := h.recent[:0]
	for _, at := range h.recent {
		if now.Sub(at) < handBackMemory {
			kept = append(kept, at)
		}
	}
	h.recent = kept
	replacementTurn := refused.In + time.Duration(len(h.recent)+1)*refused.Pace
	if replacementTurn > replacementLead+h.window {
		return false
	}
	h.recent = append(h.recent, now)
	return true
}

// handedBackError is the insufficient-capacity error that hands a NodeClaim back to core.
func handedBackError(err error) error {
	return fmt.Errorf("the create's turn in the Linode API's rate limit comes after Karpenter would time out this NodeClaim; a NodeClaim made now gets a turn in time: %w", err)
}
