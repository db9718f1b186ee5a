package emulator

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Power: POST /linode/instances/{linodeId}/boot and /shutdown, and host failures (FailHost, or
// POST /_emulator/host-failures), which power Linodes off without anyone asking.

// Linode statuses of power transitions.
const (
	statusShuttingDown = "shutting_down"
	statusMigrating    = "migrating"
)

const (
	// InstanceStopped: a Linode that ran stopped running (shut down, failed with its host, taken
	// down by maintenance or rebooting); its kubelet stops with it.
	InstanceStopped InstanceEventType = "stopped"
	// InstanceResumed: a stopped Linode runs again; its kubelet comes back.
	InstanceResumed InstanceEventType = "resumed"
)

// bootTarget is the status a new Linode's boot ends in.
func (in *instance) bootTarget() string {
	if in.Booted {
		return statusRunning
	}
	return statusOffline
}

// bootInstance powers on an offline Linode: "booting", then "running" after the booting delay.
func (e *Emulator) bootInstance(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.Status != statusOffline {
		return nil, errBusy()
	}
	now := e.clock.Now()
	in.Booted = true
	e.recordEvent(actionLinodeBoot, eventStarted, eventsUsername, in, statusRunning, now)
	e.setStatus(in, statusBooting, now)
	e.finishBoot(in, now, e.cfg.delays.Booting)
	return emptyObject{}, nil
}

// shutdownInstance powers a Linode off: "shutting_down", then "offline" after the shutdown delay.
func (e *Emulator) shutdownInstance(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.Status != statusRunning && in.Status != statusBooting && in.Status != statusRebooting {
		return nil, errBusy()
	}
	now := e.clock.Now()
	e.recordEvent(actionLinodeShutdown, eventStarted, eventsUsername, in, statusOffline, now)
	e.setStatus(in, statusShuttingDown, now)
	id := in.ID
	e.st.at(now.Add(e.cfg.delays.ShuttingDown), func(at time.Time) {
		if in, ok := e.st.instances[id]; ok && in.Status == statusShuttingDown {
			e.setStatus(in, statusOffline, at)
		}
	})
	return emptyObject{}, nil
}

// HostFailure is a host going down under its Linodes.
type HostFailure struct {
	// RestartAfter is how long, on the emulator's clock, the Linodes stay powered off before
	// Linode boots them again on another host; zero leaves them off.
	RestartAfter time.Duration
}

// FailHost fails the host a Linode runs on: every Linode on it that is booting or running powers
// off at once, with a host_reboot event from the platform (no user) that finishes when Linode has
// restarted it on another host. It returns the ids of the Linodes that went down.
func (e *Emulator) FailHost(linodeID int, f HostFailure) ([]int, error) {
	if f.RestartAfter < 0 {
		return nil, fmt.Errorf("fail host: restart_after must not be negative")
	}
	var down []int
	var err error
	e.writing(func() { down, err = e.failHost(linodeID, f) })
	return down, err
}

func (e *Emulator) failHost(linodeID int, f HostFailure) ([]int, error) {
	target, ok := e.st.instances[linodeID]
	if !ok {
		return nil, fmt.Errorf("fail host: Linode %d not found", linodeID)
	}
	now := e.clock.Now()
	var down []int
	for _, id := range sortedKeys(e.st.instances) {
		in := e.st.instances[id]
		if in.HostUUID != target.HostUUID || !slices.Contains([]string{statusRunning, statusBooting, statusRebooting}, in.Status) {
			continue
		}
		down = append(down, id)
		e.recordEvent(actionHostReboot, eventStarted, "", in, statusRunning, now)
		e.setStatus(in, statusOffline, now)
		if f.RestartAfter > 0 {
			e.st.at(now.Add(f.RestartAfter), func(at time.Time) { e.restartOnNewHost(id, at) })
		}
	}
	return down, nil
}

func (e *Emulator) restartOnNewHost(id int, at time.Time) {
	in, ok := e.st.instances[id]
	if !ok || in.Status != statusOffline {
		return
	}
	in.HostUUID = e.st.hex(40)
	e.setStatus(in, statusBooting, at)
	e.finishBoot(in, at, e.cfg.delays.Booting)
}
