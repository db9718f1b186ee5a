package emulator

import (
	"net/http"
	"strconv"
)

// registerPlacementAdmin adds the admin endpoint that breaks or restores a placement group's
// compliance, as Linode reports a flexible group that had to place a Linode against its
// anti-affinity, until it migrates the Linode away.
//
//	PUT /_emulator/placement-groups/{groupId}/compliance  {"compliant": false}
func (e *Emulator) registerPlacementAdmin(mux *http.ServeMux) {
	mux.HandleFunc("PUT /_emulator/placement-groups/{groupId}/compliance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Compliant *bool `json:"compliant"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		if req.Compliant == nil {
			writeError(w, errInvalid("compliant", "compliant is required"))
			return
		}
		id, err := strconv.Atoi(r.PathValue("groupId"))
		if err != nil {
			writeError(w, errNotFound())
			return
		}
		if err := e.SetPlacementGroupCompliance(id, *req.Compliant); err != nil {
			writeError(w, errNotFound())
			return
		}
		writeAdmin(w, emptyObject{})
	})
}
