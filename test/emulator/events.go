package emulator

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Account events (GET /account/events, GET /account/events/{eventId}) say what happened to the
// account's Linodes: the power operations made through the API, and what the platform did on its
// own (a host restarting its Linodes, maintenance). An event starts "started" (or "scheduled",
// for maintenance announced ahead) and turns "finished" when the Linode reaches the state the
// action leads to; events of deleted Linodes stay listed, as the API keeps 90 days of them.
//
// The wire format follows the recordings (TestAccountEvents_List, TestEventPoller_InstancePower);
// maintenance events carry the fields the API's August 2025 update added (maintenance_policy_set,
// description, source, not_before, start_time, complete_time), as linodego v1.69 reads them.
// The list is newest first.

// eventsUsername is the user behind the emulator's token, named by the events its requests cause.
// Events the platform causes itself name no user (null).
const eventsUsername = "emulator"

// Event actions the emulator records.
const (
	actionLinodeCreate   = "linode_create"
	actionLinodeBoot     = "linode_boot"
	actionLinodeReboot   = "linode_reboot"
	actionLinodeShutdown = "linode_shutdown"
	actionLinodeDelete   = "linode_delete"
	actionHostReboot     = "host_reboot"
	actionPowerOffOn     = "linode_poweroff_on"
	actionLinodeMigrate  = "linode_migrate"
)

// Event statuses.
const (
	eventScheduled    = "scheduled"
	eventStarted      = "started"
	eventFinished     = "finished"
	eventNotification = "notification"
)

// eventFilterFields are the fields the API documents as filterable on events.
var eventFilterFields = []string{"id", "action", "created", "entity.id", "entity.type", "read"}

type accountEvent struct {
	ID       int
	Action   string
	Created  time.Time
	Status   string
	Finished time.Time
	// Username is empty for the platform's own events.
	Username    string
	LinodeID    int
	LinodeLabel string
	// finishesWhen is the Linode status that finishes the event; empty when something else does.
	finishesWhen string
	// maintenance is set on maintenance events.
	maintenance *maintenanceEntry
	// Secondary is the other object the event is about, such as a clone.
	Secondary *eventEntityWire
}

type eventEntityWire struct {
	Label string `json:"label"`
	ID    int    `json:"id"`
	Type  string `json:"type"`
	URL   string `json:"url"`
}

// eventMaintenanceWire are the fields of maintenance events; other events do not carry them.
type eventMaintenanceWire struct {
	MaintenancePolicySet string   `json:"maintenance_policy_set"`
	Description          string   `json:"description"`
	Source               string   `json:"source"`
	NotBefore            *apiTime `json:"not_before"`
	StartTime            *apiTime `json:"start_time"`
	CompleteTime         *apiTime `json:"complete_time"`
}

type eventWire struct {
	ID              int     `json:"id"`
	Created         apiTime `json:"created"`
	Seen            bool    `json:"seen"`
	Read            bool    `json:"read"`
	PercentComplete *int    `json:"percent_complete"`
	// TimeRemaining is an "H:M:S" estimate the API gives for some long operations and null for
	// nearly all; the emulator estimates none.
	TimeRemaining   *string          `json:"time_remaining"`
	Rate            *string          `json:"rate"`
	Duration        *float64         `json:"duration"`
	Action          string           `json:"action"`
	Username        *string          `json:"username"`
	Entity          eventEntityWire  `json:"entity"`
	Status          string           `json:"status"`
	SecondaryEntity *eventEntityWire `json:"secondary_entity"`
	Message         string           `json:"message"`
	Details         emptyObject      `json:"details"`
	*eventMaintenanceWire
}

func linodeEntity(id int, label string) eventEntityWire {
	return eventEntityWire{Label: label, ID: id, Type: "linode", URL: "/v4/linode/instances/" + strconv.Itoa(id)}
}

func (ev *accountEvent) wire(now time.Time) eventWire {
	w := eventWire{
		ID: ev.ID, Created: apiTime(ev.Created), Action: ev.Action, Status: ev.Status,
		Entity: linodeEntity(ev.LinodeID, ev.LinodeLabel), SecondaryEntity: ev.Secondary,
	}
	if ev.Username != "" {
		user := ev.Username
		w.Username = &user
	}
	switch ev.Status {
	case eventNotification:
	case eventFinished:
		percent, took := 100, ev.Finished.Sub(ev.Created).Seconds()
		w.PercentComplete, w.Duration = &percent, &took
	default:
		percent, took := 0, max(0, now.Sub(ev.Created).Seconds())
		w.PercentComplete, w.Duration = &percent, &took
	}
	if m := ev.maintenance; m != nil {
		w.eventMaintenanceWire = &eventMaintenanceWire{
			MaintenancePolicySet: m.Policy, Description: m.Description, Source: m.Source,
			NotBefore: timeOrNil(m.When), StartTime: timeOrNil(m.Started), CompleteTime: timeOrNil(m.Completed),
		}
	}
	return w
}

func timeOrNil(t time.Time) *apiTime {
	if t.IsZero() {
		return nil
	}
	at := apiTime(t)
	return &at
}

// recordEvent adds an event about a Linode. finishesWhen is the Linode status that finishes it
// ("" for one that finishes otherwise, or is a notification). Callers hold e.mu.
func (e *Emulator) recordEvent(action, status, username string, in *instance, finishesWhen string, at time.Time) *accountEvent {
	ev := &accountEvent{
		ID: e.st.nextID("event"), Action: action, Created: at, Status: status, Username: username,
		LinodeID: in.ID, LinodeLabel: in.Label, finishesWhen: finishesWhen,
	}
	e.st.events = append(e.st.events, ev)
	if finishesWhen != "" {
		e.st.openEvents[in.ID] = append(e.st.openEvents[in.ID], ev)
	}
	return ev
}

func (ev *accountEvent) finish(at time.Time) {
	ev.Status, ev.Finished = eventFinished, at
}

// instanceStatusChanged finishes the Linode's events that wait for its new status, and tells a
// simulated cluster when a Linode that ran stops or runs again (its kubelet goes down or comes
// back). The first boot is announced by InstanceRunning instead. Callers hold e.mu.
func (e *Emulator) instanceStatusChanged(in *instance, from string, at time.Time) {
	open := e.st.openEvents[in.ID]
	kept := open[:0]
	for _, ev := range open {
		if ev.finishesWhen == in.Status {
			ev.finish(at)
			continue
		}
		kept = append(kept, ev)
	}
	if len(kept) == 0 {
		delete(e.st.openEvents, in.ID)
	} else {
		e.st.openEvents[in.ID] = kept
	}
	if !in.announced || from == in.Status {
		return
	}
	switch {
	case from == statusRunning:
		e.emit(InstanceStopped, in, at)
	case in.Status == statusRunning:
		e.emit(InstanceResumed, in, at)
	}
}

// listEvents answers GET /account/events, newest first.
func (e *Emulator) listEvents(*http.Request) (any, *apiError) {
	now := e.clock.Now()
	items := make([]eventWire, 0, len(e.st.events))
	for _, ev := range slices.Backward(e.st.events) {
		items = append(items, ev.wire(now))
	}
	return mustList(filterableList(items, eventFilterFields))
}

func (e *Emulator) getEvent(r *http.Request) (any, *apiError) {
	id, err := strconv.Atoi(r.PathValue("eventId"))
	if err != nil {
		return nil, errNotFound()
	}
	i := slices.IndexFunc(e.st.events, func(ev *accountEvent) bool { return ev.ID == id })
	if i < 0 {
		return nil, errNotFound()
	}
	return e.st.events[i].wire(e.clock.Now()), nil
}

// filterableList is a page whose X-Filter accepts only the named fields, as the API allows
// filtering on documented fields only.
func filterableList[T any](items []T, fields []string) (listResult, error) {
	var zero T
	l, err := newList(items, zero)
	l.fields = map[string]bool{}
	for _, f := range fields {
		l.fields[f] = true
	}
	return l, err
}
