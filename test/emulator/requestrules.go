package emulator

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/emulator/requestrules"
)

// RefusedRequest is a request whose body Linode's request rules refuse, which the emulator
// answered 400 without serving it.
type RefusedRequest struct {
	Time      time.Time
	Method    string
	Path      string
	UserAgent string
	Body      string
	// Field and Reason are the answer's; Source names the rule (package requestrules).
	Field  string
	Reason string
	Source string
}

// refusals holds what the request rules refused, in order.
type refusals struct {
	mu   sync.Mutex
	list []RefusedRequest
}

// RefusedRequests returns every request the request rules refused since the emulator started,
// oldest first.
func (e *Emulator) RefusedRequests() []RefusedRequest {
	e.refused.mu.Lock()
	defer e.refused.mu.Unlock()
	return slices.Clone(e.refused.list)
}

// enforceRequestRules answers, before next routes it, a request whose body Linode's request rules
// refuse (package requestrules): 400 in Linode's error shape, naming the field, as the real API
// would, so that no test passes with a body the real API refuses. A request with a wrong token is
// left to the route, which answers 401 first, as the API does.
func (e *Emulator) enforceRequestRules(next http.Handler) http.Handler {
	requestrules.Preload()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !carriesBody(r) || !isAPIPath(r.URL.Path) || r.Header.Get("Authorization") != "Bearer "+e.Token() {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
		if err != nil {
			writeError(w, errInvalid("", "Unable to read request body"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		refusal, err := requestrules.Check(r.Method, r.URL.EscapedPath(), body)
		if err != nil {
			apiErr := errStatus(http.StatusInternalServerError, "emulator: "+err.Error())
			writeError(w, apiErr)
			e.obs.record(r, "", apiErr.Status, start)
			return
		}
		if refusal == nil {
			next.ServeHTTP(w, r)
			return
		}
		e.refused.mu.Lock()
		e.refused.list = append(e.refused.list, RefusedRequest{
			Time: start, Method: r.Method, Path: r.URL.Path, UserAgent: r.UserAgent(), Body: string(body),
			Field: refusal.Field, Reason: refusal.Reason, Source: refusal.Source,
		})
		e.refused.mu.Unlock()
		apiErr := errInvalid(refusal.Field, refusal.Reason)
		writeError(w, apiErr)
		e.obs.record(r, "", apiErr.Status, start)
	})
}

func carriesBody(r *http.Request) bool {
	return r.Method == http.MethodPost || r.Method == http.MethodPut
}

func isAPIPath(path string) bool {
	for _, prefix := range apiPrefixes {
		if strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}
