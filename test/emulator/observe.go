package emulator

import (
	"maps"
	"net/http"
	"slices"
	"time"
)

// RequestRecord is one entry of the request log.
type RequestRecord struct {
	Time     time.Time     `json:"time"`
	Method   string        `json:"method"`
	Path     string        `json:"path"`
	Route    string        `json:"route"` // "METHOD /template", empty for unknown paths
	Status   int           `json:"status"`
	Duration time.Duration `json:"duration"`
	// UserAgent tells which client sent the request, e.g. linodego's.
	UserAgent string `json:"userAgent"`
}

// observer keeps per-route counters and a bounded request log.
type observer struct {
	guard
	counters map[string]int
	log      []RequestRecord
	size     int
	next     int // ring position once the log is full
}

func newObserver(size int) *observer {
	return &observer{counters: map[string]int{}, size: size}
}

func (o *observer) record(r *http.Request, routeName string, status int, start time.Time) {
	rec := RequestRecord{
		Time: start, Method: r.Method, Path: r.URL.Path, Route: routeName,
		Status: status, Duration: time.Since(start), UserAgent: r.UserAgent(),
	}
	o.do(func() {
		if routeName != "" {
			o.counters[routeName]++
		}
		switch {
		case o.size <= 0:
		case len(o.log) < o.size:
			o.log = append(o.log, rec)
		default:
			o.log[o.next] = rec
			o.next = (o.next + 1) % o.size
		}
	})
}

// Counters returns how many requests each route received, keyed
// "METHOD /template" (e.g. "GET /lke/clusters/{clusterId}/pools"), whatever
// their outcome (401s, 429s and injected faults included).
func (e *Emulator) Counters() (counters map[string]int) {
	e.obs.do(func() { counters = maps.Clone(e.obs.counters) })
	return counters
}

// ResetCounters zeroes the counters and empties the request log.
func (e *Emulator) ResetCounters() {
	e.obs.do(func() {
		e.obs.counters = map[string]int{}
		e.obs.log, e.obs.next = nil, 0
	})
}

// Requests returns the request log, oldest first.
func (e *Emulator) Requests() (log []RequestRecord) {
	e.obs.do(func() { log = append(slices.Clone(e.obs.log[e.obs.next:]), e.obs.log[:e.obs.next]...) })
	return log
}

// InstanceEventType says what happened to a Linode.
type InstanceEventType string

const (
	// InstanceRunning: the Linode reached "running" for the first time.
	InstanceRunning InstanceEventType = "running"
	// InstanceDeleted: the Linode is gone (deleted directly, or with its LKE
	// node, pool or cluster).
	InstanceDeleted InstanceEventType = "deleted"
	// InstanceDraining: LKE is about to replace the LKE node's Linode in a
	// recycle and drains its Kubernetes node first. It deletes the Linode once
	// FinishDrain says the node is drained, or when Delays.RecycleDrainTimeout
	// runs out.
	InstanceDraining InstanceEventType = "draining"
)

// InstanceEvent tells a simulated cluster to start or stop a kubelet.
type InstanceEvent struct {
	Type       InstanceEventType
	Time       time.Time // emulator clock time of the transition
	InstanceID int
	Label      string
	PlanType   string
	Region     string
	Tags       []string
	// LKEClusterID, LKEPoolID and NodeID are set for LKE pool nodes.
	LKEClusterID int
	LKEPoolID    int
	NodeID       string
	// K8sVersion is the Kubernetes version an LKE node runs, e.g. "1.34"
	// (standard tier) or "v1.31.8+lke1" (enterprise tier).
	K8sVersion string
}

// OnInstanceEvent registers fn for instance events. Events are delivered in
// order and outside the emulator's lock, by the goroutine whose request or
// Tick caused them, or by one already delivering. fn may call the emulator,
// over HTTP too.
func (e *Emulator) OnInstanceEvent(fn func(InstanceEvent)) {
	e.events.do(func() { e.hooks = append(e.hooks, fn) })
}

// emit queues an event; callers hold e.mu.
func (e *Emulator) emit(typ InstanceEventType, in *instance, at time.Time) {
	ev := InstanceEvent{
		Type: typ, Time: at, InstanceID: in.ID, Label: in.Label, PlanType: in.Type, Region: in.Region,
		Tags: slices.Clone(in.Tags), LKEClusterID: in.LKEClusterID, LKEPoolID: in.LKEPoolID, NodeID: in.NodeID,
		K8sVersion: in.K8sVersion,
	}
	e.events.do(func() { e.outbox = append(e.outbox, ev) })
}

// deliver hands queued events to the hooks. Only one goroutine delivers at
// a time, which keeps events in order; others leave their events to it
// rather than wait, so a hook that calls the emulator cannot deadlock.
func (e *Emulator) deliver() {
	for e.pendingEvents() {
		if !e.delivering.CompareAndSwap(false, true) {
			return
		}
		for {
			var events []InstanceEvent
			var hooks []func(InstanceEvent)
			e.events.do(func() {
				events, hooks = e.outbox, slices.Clone(e.hooks)
				e.outbox = nil
			})
			if len(events) == 0 {
				break
			}
			for _, ev := range events {
				for _, h := range hooks {
					h(ev)
				}
			}
		}
		e.delivering.Store(false)
	}
}

func (e *Emulator) pendingEvents() (pending bool) {
	e.events.do(func() { pending = len(e.outbox) > 0 })
	return pending
}
