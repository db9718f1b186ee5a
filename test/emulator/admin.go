package emulator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The admin endpoints live under /_emulator, outside the API: they need no
// token, are not rate limited, counted or subject to faults.
//
//	GET    /_emulator/counters        per-route request counts
//	DELETE /_emulator/counters        reset counts and the request log
//	GET    /_emulator/requests        the request log
//	GET    /_emulator/faults          active faults by id
//	POST   /_emulator/faults          add a fault (Fault JSON; latency as "2s"), answers {"id": n}
//	DELETE /_emulator/faults          remove all faults
//	DELETE /_emulator/faults/{id}     remove one fault
//	PUT    /_emulator/capacity        {"region": "...", "plan": "...", "count": n}
//	PUT    /_emulator/token           {"token": "..."}: accept this token (only), e.g. to restore one
//	DELETE /_emulator/token           revoke the token: every API request answers 401
//	GET    /_emulator/state           clusters, pools and instances
//
// and those of admin_maintenance.go (scheduling maintenance and failing hosts) and
// admin_placement.go (a placement group's compliance).
func (e *Emulator) registerAdmin(mux *http.ServeMux) {
	e.registerMaintenanceAdmin(mux)
	e.registerPlacementAdmin(mux)
	mux.HandleFunc("PUT "+imageUploadPath+"{token}", e.receiveImageUpload)
	mux.HandleFunc("GET /_emulator/counters", func(w http.ResponseWriter, _ *http.Request) {
		writeAdmin(w, e.Counters())
	})
	mux.HandleFunc("DELETE /_emulator/counters", func(w http.ResponseWriter, _ *http.Request) {
		e.ResetCounters()
		writeAdmin(w, emptyObject{})
	})
	mux.HandleFunc("GET /_emulator/requests", func(w http.ResponseWriter, _ *http.Request) {
		writeAdmin(w, e.Requests())
	})
	mux.HandleFunc("GET /_emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		faults := map[string]Fault{}
		for id, f := range e.Faults() {
			faults[strconv.Itoa(id)] = f
		}
		writeAdmin(w, faults)
	})
	mux.HandleFunc("POST /_emulator/faults", e.adminAddFault)
	mux.HandleFunc("DELETE /_emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		e.ClearFaults()
		writeAdmin(w, emptyObject{})
	})
	mux.HandleFunc("DELETE /_emulator/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || !e.RemoveFault(id) {
			writeError(w, errNotFound())
			return
		}
		writeAdmin(w, emptyObject{})
	})
	mux.HandleFunc("PUT /_emulator/capacity", e.adminSetCapacity)
	mux.HandleFunc("PUT /_emulator/token", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Token string `json:"token"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		if req.Token == "" {
			writeError(w, errInvalid("token", "token is required; DELETE /_emulator/token revokes it"))
			return
		}
		e.SetToken(req.Token)
		writeAdmin(w, emptyObject{})
	})
	mux.HandleFunc("DELETE /_emulator/token", func(w http.ResponseWriter, _ *http.Request) {
		e.RevokeToken()
		writeAdmin(w, emptyObject{})
	})
	mux.HandleFunc("GET /_emulator/state", func(w http.ResponseWriter, _ *http.Request) {
		writeAdmin(w, map[string]any{
			"clusters": e.Clusters(), "pools": e.Pools(0), "instances": e.Instances(),
		})
	})
}

// adminFault is Fault with a human-friendly latency ("250ms").
type adminFault struct {
	Fault
	Latency string `json:"latency,omitempty"`
}

func (e *Emulator) adminAddFault(w http.ResponseWriter, r *http.Request) {
	var req adminFault
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	f := req.Fault
	if req.Latency != "" {
		d, err := time.ParseDuration(req.Latency)
		if err != nil {
			writeError(w, errInvalid("latency", "Must be a duration such as 250ms"))
			return
		}
		f.Latency = d
	}
	if f.LoseResponse != "" && f.LoseResponse != LoseWith502 && f.LoseResponse != LoseByDroppingConnection && f.LoseResponse != LoseByHanging {
		writeError(w, errInvalid("lose_response", `Must be "502", "drop" or "hang"`))
		return
	}
	writeAdmin(w, map[string]int{"id": e.InjectFault(f)})
}

func (e *Emulator) adminSetCapacity(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Region string `json:"region"`
		Plan   string `json:"plan"`
		Count  *int   `json:"count"`
	}
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if _, ok := e.cat.regionByID[req.Region]; !ok {
		writeError(w, errInvalid("region", "region is not valid"))
		return
	}
	if _, ok := e.cat.typeByID[req.Plan]; !ok {
		writeError(w, errInvalid("plan", "A valid plan type by that ID was not found"))
		return
	}
	if req.Count == nil {
		writeError(w, errInvalid("count", "count is required"))
		return
	}
	e.SetCapacity(req.Region, req.Plan, *req.Count)
	writeAdmin(w, emptyObject{})
}

func writeAdmin(w http.ResponseWriter, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		writeError(w, errStatus(http.StatusInternalServerError, err.Error()))
		return
	}
	writeBody(w, http.StatusOK, raw)
}
