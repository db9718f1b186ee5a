package sizing

import "time"

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
