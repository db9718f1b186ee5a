package emulator

import (
	"math/rand"
	"net/http"
	"slices"
	"time"
)

// LossMode says how a response is lost after the request took effect.
type LossMode string

const (
	// LoseWith502 answers 502 Bad Gateway, as a failing load balancer would.
	LoseWith502 LossMode = "502"
	// LoseByDroppingConnection closes the connection without an answer.
	LoseByDroppingConnection LossMode = "drop"
	// LoseByHanging holds the answer until the client gives up, as when the caller dies or times
	// out while the API works on its request.
	LoseByHanging LossMode = "hang"
)

// Fault is a misbehaviour injected into matching requests. Matching requests
// are those whose method and route template (as in Counters, e.g.
// "/lke/clusters/{clusterId}/pools") equal Method and Route; empty fields
// match anything.
type Fault struct {
	Method string `json:"method,omitempty"`
	Route  string `json:"route,omitempty"`

	// Sequence answers the next len(Sequence) matching requests with these
	// statuses in order (0 lets a request through); the fault is then spent.
	Sequence []int `json:"sequence,omitempty"`
	// ErrorRate is the probability that a matching request is answered
	// ErrorStatus (500 when unset).
	ErrorRate   float64 `json:"error_rate,omitempty"`
	ErrorStatus int     `json:"error_status,omitempty"`

	// Latency delays matching requests (real time, not the emulator clock).
	Latency time.Duration `json:"latency,omitempty"`
	// Hang holds matching requests until the client gives up.
	Hang bool `json:"hang,omitempty"`
	// LoseResponse applies the request, then loses its answer.
	LoseResponse LossMode `json:"lose_response,omitempty"`
	// LossRate is the share of matching requests whose answer LoseResponse
	// loses (0: every one). A request it does not lose is left to the faults
	// after this one, so two faults of one route can lose answers two ways.
	LossRate float64 `json:"loss_rate,omitempty"`
	// Unreachable closes the connection before the request takes effect, as
	// an API that is down does: nothing is applied and nothing answers.
	Unreachable bool `json:"unreachable,omitempty"`

	// Reason and Field replace the answer's error (by default the status's
	// text and no field), so that a fault can answer with Linode's own
	// words, e.g. a 400 "Linode busy." or a 403 about a plan's availability.
	Reason string `json:"reason,omitempty"`
	Field  string `json:"field,omitempty"`

	// Count limits how many matching requests the fault affects (0: no
	// limit other than the length of Sequence).
	Count int `json:"count,omitempty"`
}

type activeFault struct {
	Fault
	id   int
	used int
}

func (f *activeFault) matches(method, path string) bool {
	return (f.Method == "" || f.Method == method) && (f.Route == "" || f.Route == path)
}

func (f *activeFault) spent() bool {
	return (f.Count > 0 && f.used >= f.Count) || (len(f.Sequence) > 0 && f.used >= len(f.Sequence))
}

// faultDecision is what happens to one request.
type faultDecision struct {
	status        int
	reason, field string
	latency       time.Duration
	hang          bool
	lose          LossMode
	// unreachable is Fault.Unreachable.
	unreachable bool
}

type faultSet struct {
	guard
	faults []*activeFault
	nextID int
	rng    *rand.Rand
}

func newFaultSet(seed int64) *faultSet {
	return &faultSet{rng: rand.New(rand.NewSource(seed))}
}

func (s *faultSet) add(f Fault) (id int) {
	s.do(func() {
		s.nextID++
		s.faults = append(s.faults, &activeFault{Fault: f, id: s.nextID})
		id = s.nextID
	})
	return id
}

func (s *faultSet) remove(id int) (removed bool) {
	s.do(func() {
		before := len(s.faults)
		s.faults = slices.DeleteFunc(s.faults, func(f *activeFault) bool { return f.id == id })
		removed = len(s.faults) < before
	})
	return removed
}

func (s *faultSet) clear() { s.do(func() { s.faults = nil }) }

// list returns the active faults by id.
func (s *faultSet) list() map[int]Fault {
	out := map[int]Fault{}
	s.do(func() {
		for _, f := range s.faults {
			out[f.id] = f.Fault
		}
	})
	return out
}

// decide applies the first unspent fault matching the route; spent faults
// are dropped.
func (s *faultSet) decide(method, path string) (d faultDecision) {
	s.do(func() { d = s.decideLocked(method, path) })
	return d
}

func (s *faultSet) decideLocked(method, path string) faultDecision {
	for i, f := range s.faults {
		if !f.matches(method, path) {
			continue
		}
		if f.LossRate > 0 && s.rng.Float64() >= f.LossRate {
			continue
		}
		d := faultDecision{reason: f.Reason, field: f.Field, latency: f.Latency, hang: f.Hang, lose: f.LoseResponse, unreachable: f.Unreachable}
		if len(f.Sequence) > 0 {
			d.status = f.Sequence[f.used]
		} else if f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate {
			d.status = f.ErrorStatus
			if d.status == 0 {
				d.status = http.StatusInternalServerError
			}
		}
		f.used++
		if f.spent() {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return d
	}
	return faultDecision{}
}

// injectedError is the answer to a request failed by a fault, shaped like
// the API's own errors; 429s carry Retry-After.
func injectedError(h http.Header, d faultDecision) *apiError {
	if d.status == http.StatusTooManyRequests {
		h.Set("Retry-After", "1")
	}
	reason := d.reason
	if reason == "" {
		reason = http.StatusText(d.status)
	}
	if reason == "" {
		reason = "Injected fault"
	}
	err := errStatus(d.status, reason)
	err.Errors[0].Field = d.field
	return err
}

// InjectFault adds a fault and returns its id.
func (e *Emulator) InjectFault(f Fault) int { return e.faults.add(f) }

// RemoveFault removes one fault; it reports whether the fault was active.
func (e *Emulator) RemoveFault(id int) bool { return e.faults.remove(id) }

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults() { e.faults.clear() }

// Faults returns the active faults by id.
func (e *Emulator) Faults() map[int]Fault { return e.faults.list() }
