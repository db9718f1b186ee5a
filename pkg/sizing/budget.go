package sizing

import "time"

// timeBudget is the time a decision may take. A decision past its deadline stops simulating:
// its packs return at once, and the policy offers every plan, as core does on its own.
type timeBudget struct {
	deadline time.Time
	spent    bool
}

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
