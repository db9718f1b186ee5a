package sizing

import (
	"fmt"
	"time"
)

// timeBudget is the time a decision may take. A decision past its deadline stops simulating:
// its packs stop where they are (within clockEvery of work) and return at once, and the policy
// offers every plan, as core does on its own.
type timeBudget struct {
	deadline time.Time
	spent    bool
	// work counts what the decision's packs did: each pod placed and each bin tried for it. A
	// pack reads the clock once per clockEvery of them rather than once per pod, and the count
	// is the work a decision grows by with the pods (TestDecisionWorkGrowsAsNLogN).
	work, checked int
}

// clockEvery is how much work a pack does between two readings of the clock: a few hundred
// microseconds of it.
const clockEvery = 4096

// newTimeBudget starts a budget of d; nil, never spent, when d is not positive.
func newTimeBudget(d time.Duration) *timeBudget {
	if d <= 0 {
		return nil
	}
	return &timeBudget{deadline: time.Now().Add(d)}
}

// over says whether the budget is spent.
func (b *timeBudget) over() bool {
	if b == nil {
		return false
	}
	if !b.spent && time.Now().After(b.deadline) {
		b.spent = true
	}
	return b.spent
}

// spend counts work done and says whether the budget is spent.
func (b *timeBudget) spend(work int) bool {
	if b == nil {
		return false
	}
	b.work += work
	if b.work-b.checked < clockEvery {
		return b.spent
	}
	b.checked = b.work
	return b.over()
}

// overrun is a decision that took longer than the time budget: when it ended, and for how many
// shapes of pending pods.
type overrun struct {
	at     time.Time
	shapes int
}

// holdOffFor is how long after a decision ran past the time budget the NodePool is offered every
// plan without sizing, while its pending pods keep at least half as many shapes. A pod of a new
// shape changes the inputs, and sizing them again would spend the budget again for the same
// answer: thousands of pods of distinct shapes, which anyone who may create pods can make, would
// cost every provisioning round the budget. A minute is a few of core's provisioning rounds; once
// it has passed, or the shapes have halved, the next change is sized again, so a decision that
// overran only because the machine was busy holds the NodePool back from sizing that long at most.
const holdOffFor = time.Minute

// heldOff says why the NodePool is offered every plan without sizing, when its last decision
// overran the time budget less than holdOffFor ago for at most twice as many shapes as it has now;
// nil when it is sized. It forgets an overrun that no longer holds the NodePool off.
func (p *Policy) heldOff(nodePool string, shapes int) *explanation {
	o, ok := p.overran[nodePool]
	if !ok {
		return nil
	}
	if since := p.clock.Since(o.at); since < holdOffFor && 2*shapes >= o.shapes {
		return &explanation{every: true, why: fmt.Sprintf("sizing for %d shapes of its pending pods took longer than the time budget of %v %v ago, and they are in %d shapes now",
			o.shapes, p.timeBudget, since.Round(time.Second), shapes)}
	}
	delete(p.overran, nodePool)
	return nil
}
