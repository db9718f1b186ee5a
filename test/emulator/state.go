package emulator

import (
	"container/heap"
	"fmt"
	"math/rand"
	"net/http"
	"sync/atomic"
	"time"
)

// state is every mutable API object. It is guarded by Emulator.mu.
type state struct {
	clusters  collection[*lkeCluster]
	pools     collection[*lkePool]
	instances collection[*instance]
	firewalls collection[*firewall]
	// defaultFirewalls are the account's default firewall ids by kind of entity (firewallDefaultKinds).
	defaultFirewalls map[string]*int
	ruleSets         collection[*ruleSet]
	// reservedIPs are the account's reserved public addresses, by address.
	reservedIPs map[string]*reservedIP
	// rdns are the reverse DNS entries users set, by address; null restores Linode\'s own.
	rdns map[string]*string
	// ipv6Ranges are the IPv6 ranges routed to Linodes, by their first address.
	ipv6Ranges      map[string]*ipv6Range
	vpcs            collection[*vpc]
	subnets         collection[*subnet]
	placementGroups collection[*placementGroup]
	images          map[string]*privateImage
	// metadataTokens are the Metadata service's tokens, by token.
	metadataTokens map[string]metadataToken
	// recycles are LKE's node replacements under way, by cluster.
	recycles map[int]*recycle

	// events are the account's events, oldest first; openEvents are those of each Linode that
	// wait for it to reach a status. maintenances are scheduled host maintenance (events.go,
	// maintenance.go).
	events       []*accountEvent
	openEvents   map[int][]*accountEvent
	maintenances []*maintenanceEntry

	// capacity is how many more Linodes of a plan a region can launch; a
	// missing entry means unlimited.
	capacity map[capacityKey]int

	ids      map[string]int
	schedule transitionQueue
	seq      uint64
	// due mirrors nextDue as Unix nanoseconds (0: nothing pending) so
	// requests can tell without the lock whether anything is due.
	due   atomic.Int64
	rng   *rand.Rand
	ipSeq int
}

type capacityKey struct{ region, plan string }

// First ids per object kind, in the ranges the real API uses, so ids of
// different kinds are never confused in tests.
var firstIDs = map[string]int{
	"cluster":        400000,
	"pool":           800000,
	"instance":       90000000,
	"firewall":       3000000,
	"ruleSet":        70000,
	"vpc":            500000,
	"subnet":         600000,
	"placementGroup": 6000,
	"disk":           120000000,
	"config":         130000000,
	"interface":      4000000,
	"image":          30000000,
	"event":          600000000,
	"ipv6Range":      0x1000,
	"firewallDevice": 11000000,
}

func newState(seed int64, cat *catalogue) *state {
	s := &state{
		clusters:         map[int]*lkeCluster{},
		pools:            map[int]*lkePool{},
		instances:        map[int]*instance{},
		firewalls:        map[int]*firewall{},
		defaultFirewalls: map[string]*int{},
		ruleSets:         map[int]*ruleSet{},
		reservedIPs:      map[string]*reservedIP{},
		rdns:             map[string]*string{},
		ipv6Ranges:       map[string]*ipv6Range{},
		vpcs:             map[int]*vpc{},
		subnets:          map[int]*subnet{},
		placementGroups:  map[int]*placementGroup{},
		images:           map[string]*privateImage{},
		metadataTokens:   map[string]metadataToken{},
		recycles:         map[int]*recycle{},
		openEvents:       map[int][]*accountEvent{},
		capacity:         map[capacityKey]int{},
		ids:              map[string]int{},
		rng:              rand.New(rand.NewSource(seed)),
	}
	// Plans the catalogue lists as unavailable start with no capacity, so
	// creating them fails the way the real API does.
	for _, a := range cat.availability {
		if !a.Available {
			s.capacity[capacityKey{a.Region, a.Plan}] = 0
		}
	}
	return s
}

func (s *state) nextID(kind string) int {
	id, ok := s.ids[kind]
	if !ok {
		id = firstIDs[kind]
	}
	id++
	s.ids[kind] = id
	return id
}

// hex returns n random lowercase hex digits.
func (s *state) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[s.rng.Intn(len(digits))]
	}
	return string(b)
}

// publicIPv4Range is where the emulator's public addresses come from: a range reserved for
// benchmarking that no real Linode has.
const publicIPv4Range = "198.18.0.0/15"

// nextIPv4 hands out addresses from publicIPv4Range.
func (s *state) nextIPv4() string {
	s.ipSeq++
	n := s.ipSeq
	return fmt.Sprintf("198.%d.%d.%d", 18+(n>>16)&1, (n>>8)&0xff, n&0xff)
}

// nextIPv6 hands out addresses from the documentation prefix.
func (s *state) nextIPv6() string {
	return fmt.Sprintf("2001:db8::%x/128", s.ipSeq)
}

// takeCapacity reserves n launches of plan in region, or answers the
// capacity error (see the package documentation for its wording).
func (s *state) takeCapacity(field, regionID, planID string, n int) *apiError {
	key := capacityKey{regionID, planID}
	left, limited := s.capacity[key]
	if !limited {
		return nil
	}
	if left < n {
		return errCapacity()
	}
	s.capacity[key] = left - n
	return nil
}

// CapacityReason is Linode's answer, with status 403, to a create of a plan
// the region cannot launch at the moment.
const CapacityReason = "The Linode plan you chose is not currently available in the selected region. " +
	"Please select another region or plan type, or contact Support for assistance."

func errCapacity() *apiError { return errStatus(http.StatusForbidden, CapacityReason) }

// transition is a state change due at a point in time. apply receives the
// due time, not the time it ran, so timestamps stay deterministic however
// late the emulator notices.
type transition struct {
	at    time.Time
	seq   uint64
	apply func(at time.Time)
}

type transitionQueue []transition

func (q transitionQueue) Len() int { return len(q) }
func (q transitionQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q transitionQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *transitionQueue) Push(x any)   { *q = append(*q, x.(transition)) }
func (q *transitionQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}

// at schedules fn. Transitions due at the same time run in scheduling order.
func (s *state) at(when time.Time, fn func(at time.Time)) {
	s.seq++
	heap.Push(&s.schedule, transition{at: when, seq: s.seq, apply: fn})
	s.due.Store(s.schedule[0].at.UnixNano())
}

// advance runs every transition due by now, including ones scheduled by
// transitions that ran.
func (s *state) advance(now time.Time) {
	for len(s.schedule) > 0 && !s.schedule[0].at.After(now) {
		t := heap.Pop(&s.schedule).(transition)
		t.apply(t.at)
	}
	if len(s.schedule) == 0 {
		s.due.Store(0)
	} else {
		s.due.Store(s.schedule[0].at.UnixNano())
	}
}

// isDue reports, without the lock, whether a transition is due by now.
func (s *state) isDue(now time.Time) bool {
	due := s.due.Load()
	return due != 0 && due <= now.UnixNano()
}

func errBusy() *apiError { return errStatus(http.StatusBadRequest, "Linode busy.") }
