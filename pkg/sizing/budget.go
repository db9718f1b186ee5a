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

// overrun is a decision that took longer than the time budget: when it ended, for how many
// shapes of pending pods, and how many decisions in a row overran, with no decision within the
// budget between them.
type overrun struct {
	at     time.Time
	shapes int
	streak int
}

// holdOffFor is how long after a decision ran past the time budget the NodePool is offered every
// plan without sizing, while its pending pods keep at least half as many shapes; it doubles with
// each overrun in a row, up to holdOffMax. A pod of a new shape changes the inputs, and sizing
// them again would spend the budget again for the same answer: thousands of pods of distinct
// shapes, which anyone who may create pods can make, would cost every provisioning round the
// budget; held off, they cost it after 1, 3, 7 and 15 minutes, then every 16. A minute is a few
// of core's provisioning rounds, so a decision that overran only because the machine was busy
// keeps the NodePool from being sized for that long, once.
const (
	holdOffFor = time.Minute
	holdOffMax = 16 * time.Minute
)

// hold is how long the overrun holds its NodePool off sizing.
func (o overrun) hold() time.Duration {
	hold := holdOffFor
	for i := 1; i < o.streak && hold < holdOffMax; i++ {
		hold *= 2
	}
	return min(hold, holdOffMax)
}

// overBudgetAgain records a decision for the NodePool's shapes that took longer than the time
// budget, one more in a row after last, the NodePool's overrun before it (zero for none).
func (p *Policy) overBudgetAgain(nodePool string, last overrun, shapes int) overrun {
	o := overrun{at: p.clock.Now(), shapes: shapes, streak: last.streak + 1}
	p.overran[nodePool] = o
	return o
}

// heldOff says why the NodePool is offered every plan without sizing, when its last decision
// overran the time budget less than its hold ago for at most twice as many shapes as it has now;
// nil when it is sized.
func (p *Policy) heldOff(nodePool string, shapes int) *explanation {
	o, ok := p.overran[nodePool]
	if !ok {
		return nil
	}
	if since := p.clock.Since(o.at); since < o.hold() && 2*shapes >= o.shapes {
		return &explanation{every: true, why: fmt.Sprintf("sizing for %d shapes of its pending pods took longer than the time budget of %v %v ago, and they are in %d shapes now",
			o.shapes, p.timeBudget, since.Round(time.Second), shapes)}
	}
	return nil
}
