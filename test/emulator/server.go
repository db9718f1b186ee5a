package emulator

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// apiPrefixes are the API versions served; both see the same state.
var apiPrefixes = []string{"/v4", "/v4beta"}

// route is one API operation. path is the template below the version
// prefix, with the parameter names of Linode's OpenAPI description; with
// the method it names the route in counters, the request log and faults.
type route struct {
	method string
	path   string
	handle handler
	// writes marks routes that change state: the router runs their handler under the
	// emulator's exclusive lock, and every other handler under the shared one.
	writes bool
	// paginated marks collection GETs, which have their own rate limit.
	paginated bool
}

func (rt route) name() string { return rt.method + " " + rt.path }

// read declares a route that only reads state, by its "METHOD /path" pattern.
func read(pattern string, h handler) route {
	method, path, _ := strings.Cut(pattern, " ")
	return route{method: method, path: path, handle: h}
}

// readList declares a read that answers a paginated list.
func readList(pattern string, h handler) route {
	rt := read(pattern, h)
	rt.paginated = true
	return rt
}

// write declares a route that changes state.
func write(pattern string, h handler) route {
	rt := read(pattern, h)
	rt.writes = true
	return rt
}

// routes are every operation served (routes.go).
func (e *Emulator) routes() []route {
	return append(e.controllerRoutes(), e.replayRoutes()...)
}

// buildHandler serves the API routes under each prefix through apiRouter, and the admin and
// metadata endpoints through the mux; anything else is a 404.
func (e *Emulator) buildHandler() http.Handler {
	mux := http.NewServeMux()
	notFound := func(w http.ResponseWriter, r *http.Request) {
		e.obs.record(r, "", http.StatusNotFound, time.Now())
		writeError(w, errNotFound())
	}
	router := newAPIRouter(e.routes(), e.serveRoute)
	for _, prefix := range apiPrefixes {
		mux.Handle(prefix+"/", http.StripPrefix(prefix, router.handler(notFound)))
	}
	e.registerAdmin(mux)
	e.registerMetadata(mux)
	mux.HandleFunc("/", notFound)
	return mux
}

// apiRouter picks the route of a request. net/http's ServeMux refuses patterns where neither is
// more specific, and the API has them: /networking/firewalls/templates/{slug} and
// /networking/firewalls/{firewallId}/devices both match .../templates/devices. The router
// prefers, at the first segment where two matching routes differ, the one with a literal there.
type apiRouter struct {
	routes   []route
	handlers []http.Handler
}

func newAPIRouter(routes []route, serve func(route) http.Handler) *apiRouter {
	r := &apiRouter{routes: routes}
	for _, rt := range routes {
		r.handlers = append(r.handlers, serve(rt))
	}
	return r
}

func (a *apiRouter) handler(notFound http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segments := strings.Split(r.URL.EscapedPath(), "/")
		best, bestParams := -1, map[string]string(nil)
		for i, rt := range a.routes {
			if rt.method != r.Method {
				continue
			}
			params, ok := matchSegments(strings.Split(rt.path, "/"), segments)
			if ok && (best < 0 || moreSpecific(rt.path, a.routes[best].path)) {
				best, bestParams = i, params
			}
		}
		if best < 0 {
			notFound(w, r)
			return
		}
		for name, value := range bestParams {
			r.SetPathValue(name, value)
		}
		a.handlers[best].ServeHTTP(w, r)
	})
}

// matchSegments matches a path's escaped segments against a template's and returns the
// template's parameters, unescaped.
func matchSegments(template, segments []string) (map[string]string, bool) {
	if len(template) != len(segments) {
		return nil, false
	}
	params := map[string]string{}
	for i, t := range template {
		if strings.HasPrefix(t, "{") {
			value, err := url.PathUnescape(segments[i])
			if err != nil || value == "" {
				return nil, false
			}
			params[strings.Trim(t, "{}")] = value
			continue
		}
		if t != segments[i] {
			return nil, false
		}
	}
	return params, true
}

// moreSpecific reports whether template a has a literal segment where b has a parameter before
// the reverse happens.
func moreSpecific(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := range as {
		aParam, bParam := strings.HasPrefix(as[i], "{"), strings.HasPrefix(bs[i], "{")
		if aParam != bParam {
			return bParam
		}
	}
	return false
}

// serveRoute runs a request through authentication, rate limiting and fault
// injection before the route's handler, and records it.
func (e *Emulator) serveRoute(rt route) http.Handler {
	name := rt.name()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := e.serve(w, r, rt)
		e.obs.record(r, name, status, start)
	})
}

func (e *Emulator) serve(w http.ResponseWriter, r *http.Request, rt route) int {
	token := e.Token()
	if token == "" || r.Header.Get("Authorization") != "Bearer "+token {
		err := errStatus(http.StatusUnauthorized, "Invalid Token")
		writeError(w, err)
		return err.Status
	}
	if err := e.limiter.admit(w.Header(), token, rt, e.clock.Now()); err != nil {
		writeError(w, err)
		return err.Status
	}
	fault := e.faults.decide(rt.method, rt.path)
	if fault.unreachable {
		dropConnection(w)
		return statusConnectionDropped
	}
	if fault.latency > 0 || fault.hang {
		if !waitFor(r, fault.latency, fault.hang) {
			return statusClientClosed
		}
	}
	if fault.status != 0 {
		err := injectedError(w.Header(), fault)
		writeError(w, err)
		return err.Status
	}

	// Read before the lock is taken, so that a slow client holds up no other request.
	if err := bufferBody(r); err != nil {
		writeError(w, err)
		return err.Status
	}
	e.sync()
	var result any
	var apiErr *apiError
	e.locked(rt.writes, func() { result, apiErr = rt.handle(r) })
	e.deliver()

	status, body := http.StatusOK, []byte(nil)
	if apiErr == nil {
		body, apiErr = encodeResult(r, result)
	}
	if apiErr != nil {
		status, body = apiErr.Status, errorBody(apiErr)
	}
	switch fault.lose {
	case LoseWith502:
		err := errStatus(http.StatusBadGateway, "Bad Gateway")
		writeError(w, err)
		return err.Status
	case LoseByDroppingConnection:
		dropConnection(w)
		return statusConnectionDropped
	case LoseByHanging:
		<-r.Context().Done()
		return statusClientClosed
	}
	writeBody(w, status, body)
	return status
}

// Pseudo statuses recorded in the request log for requests that got no
// HTTP answer.
const (
	statusClientClosed      = 499
	statusConnectionDropped = 0
)

// waitFor sleeps for d, or until the client goes away when hang is set. It
// reports whether the request should still be answered.
func waitFor(r *http.Request, d time.Duration, hang bool) bool {
	if hang {
		<-r.Context().Done()
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Without a hijackable connection (HTTP/2), abort the handler: net/http
	// then resets the stream.
	panic(http.ErrAbortHandler)
}

// guard is the lock of what the router keeps beside the emulator's state: faults, rate limit
// windows, the request log, the instance events waiting for delivery. It is held only while one
// of them is read or changed, never around a handler.
type guard struct{ mu sync.Mutex }

func (g *guard) do(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn()
}

// locked, reading and writing run fn under the emulator's lock, exclusive or shared. They are
// the only places that take it: the router runs each handler through locked, so handlers and the
// helpers they call never lock, and the exported methods and the admin and metadata endpoints
// go through reading and writing.
func (e *Emulator) locked(writes bool, fn func()) {
	if writes {
		e.writing(fn)
		return
	}
	e.reading(fn)
}

func (e *Emulator) reading(fn func()) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	fn()
}

func (e *Emulator) writing(fn func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn()
}
