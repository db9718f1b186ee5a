package emulator

import (
	"net/http"
	"time"
)

// statusShuttingDown is a Linode on its way to "offline" after a shutdown.
const statusShuttingDown = "shutting_down"

// bootInstance starts an offline Linode: "booting" for the boot delay, then "running".
func (e *Emulator) bootInstance(r *http.Request) (any, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.Status != statusOffline {
		return nil, errBusy()
	}
	now := e.clock.Now()
	in.Booted = true
	e.setStatus(in, statusBooting, now)
	e.finishBoot(in, now, e.cfg.delays.Booting)
	return emptyObject{}, nil
}

// shutdownInstance stops a Linode: "shutting_down" for the shutdown delay, then "offline". The
// stop is announced (InstanceStopped) so that a simulated cluster stops the node's kubelet, and
// a later boot announces the Linode running again.
func (e *Emulator) shutdownInstance(r *http.Request) (any, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.Status != statusRunning && in.Status != statusBooting && in.Status != statusRebooting {
		return nil, errBusy()
	}
	now := e.clock.Now()
	e.setStatus(in, statusShuttingDown, now)
	id := in.ID
	e.st.at(now.Add(e.cfg.delays.ShuttingDown), func(at time.Time) {
		in, ok := e.st.instances[id]
		if !ok || in.Status != statusShuttingDown {
			return
		}
		e.setStatus(in, statusOffline, at)
		if in.announced {
			in.announced = false
			e.emit(InstanceStopped, in, at)
		}
	})
	return emptyObject{}, nil
}
