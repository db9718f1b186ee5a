package emulator

import (
	"net/http"
	"strconv"
	"time"
)

// registerMaintenanceAdmin adds the admin endpoints that make Linode schedule maintenance and
// fail hosts. Durations are strings ("1h", "90s") on the emulator's clock.
//
//	POST   /_emulator/maintenance             {"linode_id": n, "type": "power_off_on", "policy": "linode/power_off_on", "starts_in": "1h", "duration": "30m", "reason": "...", "description": "..."}
//	DELETE /_emulator/maintenance/{linodeId}  cancel the Linode's maintenance that has not started
//	POST   /_emulator/host-failures           {"linode_id": n, "restart_after": "10m"}: answers {"linode_ids": [...]}
func (e *Emulator) registerMaintenanceAdmin(mux *http.ServeMux) {
	mux.HandleFunc("POST /_emulator/maintenance", e.adminScheduleMaintenance)
	mux.HandleFunc("DELETE /_emulator/maintenance/{linodeId}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("linodeId"))
		if err != nil {
			writeError(w, errNotFound())
			return
		}
		writeAdmin(w, map[string]int{"canceled": e.CancelMaintenance(id)})
	})
	mux.HandleFunc("POST /_emulator/host-failures", e.adminFailHost)
}

func (e *Emulator) adminScheduleMaintenance(w http.ResponseWriter, r *http.Request) {
	var req struct {
		LinodeID    int    `json:"linode_id"`
		Type        string `json:"type"`
		Policy      string `json:"policy"`
		StartsIn    string `json:"starts_in"`
		Duration    string `json:"duration"`
		Reason      string `json:"reason"`
		Description string `json:"description"`
	}
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	m := Maintenance{Type: req.Type, Policy: req.Policy, Reason: req.Reason, Description: req.Description}
	var apiErr *apiError
	if m.StartsIn, apiErr = adminDuration("starts_in", req.StartsIn); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if m.Duration, apiErr = adminDuration("duration", req.Duration); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	info, err := e.ScheduleMaintenance(req.LinodeID, m)
	if err != nil {
		writeError(w, errInvalid("", err.Error()))
		return
	}
	writeAdmin(w, info)
}

func (e *Emulator) adminFailHost(w http.ResponseWriter, r *http.Request) {
	var req struct {
		LinodeID     int    `json:"linode_id"`
		RestartAfter string `json:"restart_after"`
	}
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	restartAfter, apiErr := adminDuration("restart_after", req.RestartAfter)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	down, err := e.FailHost(req.LinodeID, HostFailure{RestartAfter: restartAfter})
	if err != nil {
		writeError(w, errInvalid("", err.Error()))
		return
	}
	writeAdmin(w, map[string][]int{"linode_ids": nonNil(down)})
}

// adminDuration parses an optional duration of an admin request; empty is zero.
func adminDuration(field, value string) (time.Duration, *apiError) {
	if value == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return 0, errInvalid(field, "Must be a duration such as 90s or 1h")
	}
	return d, nil
}
