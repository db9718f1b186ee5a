package emulator

import (
	"net/http"
	"net/url"
	"strings"
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
	handle func(*http.Request) (any, *apiError)
	// paginated marks collection GETs, which have their own rate limit.
	paginated bool
}

func (rt route) name() string { return rt.method + " " + rt.path }

func (e *Emulator) routes() []route {
	get := func(path string, h func(*http.Request) (any, *apiError)) route {
		return route{method: http.MethodGet, path: path, handle: h}
	}
	list := func(path string, h func(*http.Request) (any, *apiError)) route {
		return route{method: http.MethodGet, path: path, handle: h, paginated: true}
	}
	post := func(path string, h func(*http.Request) (any, *apiError)) route {
		return route{method: http.MethodPost, path: path, handle: h}
	}
	put := func(path string, h func(*http.Request) (any, *apiError)) route {
		return route{method: http.MethodPut, path: path, handle: h}
	}
	del := func(path string, h func(*http.Request) (any, *apiError)) route {
		return route{method: http.MethodDelete, path: path, handle: h}
	}
	return []route{
		list("/regions", e.listRegions),
		get("/regions/{regionId}", e.getRegion),
		list("/regions/availability", e.listAvailability),
		get("/regions/{regionId}/availability", e.getRegionAvailability),
		list("/regions/vpc-availability", e.listVPCAvailability),
		get("/regions/{regionId}/vpc-availability", e.getRegionVPCAvailability),
		list("/linode/types", e.listTypes),
		get("/linode/types/{typeId}", e.getType),
		list("/images", e.listImages),
		post("/images", e.captureImage),
		post("/images/upload", e.createImageUpload),
		get("/images/{imageId}", e.getImage),
		put("/images/{imageId}", e.updateImage),
		del("/images/{imageId}", e.deleteImage),
		post("/images/{imageId}/regions", e.replicateImage),

		list("/lke/versions", e.listLKEVersions),
		get("/lke/versions/{version}", e.getLKEVersion),
		list("/lke/tiers/{tier}/versions", e.listTierVersions),
		list("/lke/types", e.listLKETypes),
		list("/lke/clusters", e.listClusters),
		post("/lke/clusters", e.createCluster),
		get("/lke/clusters/{clusterId}", e.getCluster),
		put("/lke/clusters/{clusterId}", e.updateCluster),
		post("/lke/clusters/{clusterId}/recycle", e.recycleCluster),
		del("/lke/clusters/{clusterId}", e.deleteCluster),
		list("/lke/clusters/{clusterId}/pools", e.listPools),
		post("/lke/clusters/{clusterId}/pools", e.createPool),
		get("/lke/clusters/{clusterId}/pools/{poolId}", e.getPool),
		put("/lke/clusters/{clusterId}/pools/{poolId}", e.updatePool),
		del("/lke/clusters/{clusterId}/pools/{poolId}", e.deletePool),
		post("/lke/clusters/{clusterId}/pools/{poolId}/recycle", e.recyclePool),
		list("/lke/clusters/{clusterId}/api-endpoints", e.listAPIEndpoints),
		get("/lke/clusters/{clusterId}/kubeconfig", e.getKubeconfig),
		del("/lke/clusters/{clusterId}/kubeconfig", e.deleteKubeconfig),
		get("/lke/clusters/{clusterId}/control_plane_acl", e.getControlPlaneACL),
		put("/lke/clusters/{clusterId}/control_plane_acl", e.updateControlPlaneACL),
		del("/lke/clusters/{clusterId}/control_plane_acl", e.deleteControlPlaneACL),
		get("/lke/clusters/{clusterId}/nodes/{nodeId}", e.getNode),
		del("/lke/clusters/{clusterId}/nodes/{nodeId}", e.deleteNode),
		post("/lke/clusters/{clusterId}/nodes/{nodeId}/recycle", e.recycleNodeHandler),

		list("/linode/instances", e.listInstances),
		post("/linode/instances", e.createInstance),
		get("/linode/instances/{linodeId}", e.getInstance),
		put("/linode/instances/{linodeId}", e.updateInstance),
		del("/linode/instances/{linodeId}", e.deleteInstance),
		post("/linode/instances/{linodeId}/reboot", e.rebootInstance),
		post("/linode/instances/{linodeId}/boot", e.bootInstance),
		post("/linode/instances/{linodeId}/shutdown", e.shutdownInstance),
		post("/linode/instances/{linodeId}/clone", e.cloneInstance),
		list("/linode/instances/{linodeId}/configs", e.listConfigs),
		post("/linode/instances/{linodeId}/configs", e.createConfig),
		get("/linode/instances/{linodeId}/configs/{configId}", e.getConfig),
		put("/linode/instances/{linodeId}/configs/{configId}", e.updateConfig),
		get("/linode/instances/{linodeId}/configs/{configId}/interfaces", e.listConfigInterfaces),
		post("/linode/instances/{linodeId}/configs/{configId}/interfaces", e.appendConfigInterface),
		get("/linode/instances/{linodeId}/configs/{configId}/interfaces/{interfaceId}", e.getConfigInterface),
		del("/linode/instances/{linodeId}/configs/{configId}/interfaces/{interfaceId}", e.deleteConfigInterface),
		get("/linode/instances/{linodeId}/ips", e.getInstanceIPs),
		post("/linode/instances/{linodeId}/ips", e.addInstanceIP),
		del("/linode/instances/{linodeId}/ips/{address}", e.removeInstanceIP),
		list("/linode/instances/{linodeId}/interfaces", e.listLinodeInterfaces),
		post("/linode/instances/{linodeId}/interfaces", e.createLinodeInterface),
		get("/linode/instances/{linodeId}/interfaces/settings", e.getInterfaceSettings),
		put("/linode/instances/{linodeId}/interfaces/settings", e.updateInterfaceSettings),
		get("/linode/instances/{linodeId}/interfaces/{interfaceId}", e.getLinodeInterface),
		put("/linode/instances/{linodeId}/interfaces/{interfaceId}", e.updateLinodeInterface),
		del("/linode/instances/{linodeId}/interfaces/{interfaceId}", e.deleteLinodeInterface),
		list("/linode/instances/{linodeId}/interfaces/{interfaceId}/firewalls", e.listLinodeInterfaceFirewalls),
		list("/linode/instances/{linodeId}/disks", e.listDisks),
		post("/linode/instances/{linodeId}/disks", e.createDisk),
		get("/linode/instances/{linodeId}/disks/{diskId}", e.getDisk),
		put("/linode/instances/{linodeId}/disks/{diskId}", e.updateDisk),

		get("/account/settings", e.getAccountSettings),
		list("/account/events", e.listEvents),
		get("/account/events/{eventId}", e.getEvent),
		list("/account/maintenance", e.listMaintenances),
		list("/maintenance/policies", e.listMaintenancePolicies),

		list("/networking/firewalls", e.listFirewalls),
		get("/networking/firewalls/settings", e.getFirewallSettings),
		put("/networking/firewalls/settings", e.updateFirewallSettings),
		list("/networking/firewalls/templates", e.listFirewallTemplates),
		get("/networking/firewalls/templates/{slug}", e.getFirewallTemplate),
		list("/networking/firewalls/rulesets", e.listFirewallRuleSets),
		post("/networking/firewalls/rulesets", e.createFirewallRuleSet),
		get("/networking/firewalls/rulesets/{rulesetId}", e.getFirewallRuleSet),
		put("/networking/firewalls/rulesets/{rulesetId}", e.updateFirewallRuleSet),
		del("/networking/firewalls/rulesets/{rulesetId}", e.deleteFirewallRuleSet),
		post("/networking/firewalls", e.createFirewall),
		get("/networking/firewalls/{firewallId}", e.getFirewall),
		list("/networking/firewalls/{firewallId}/devices", e.listFirewallDevices),
		post("/networking/firewalls/{firewallId}/devices", e.createFirewallDevice),
		get("/networking/firewalls/{firewallId}/devices/{deviceId}", e.getFirewallDevice),
		del("/networking/firewalls/{firewallId}/devices/{deviceId}", e.deleteFirewallDevice),
		del("/networking/firewalls/{firewallId}", e.deleteFirewall),

		list("/networking/ips", e.listIPAddresses),
		post("/networking/ips", e.allocateIPAddress),
		post("/networking/ips/assign", e.assignIPAddresses),
		get("/networking/ips/{address}", e.getIPAddress),
		put("/networking/ips/{address}", e.updateIPAddress),
		list("/networking/ipv6/ranges", e.listIPv6Ranges),
		post("/networking/ipv6/ranges", e.createIPv6Range),
		get("/networking/ipv6/ranges/{range}", e.getIPv6Range),
		del("/networking/ipv6/ranges/{range}", e.deleteIPv6Range),
		list("/networking/reserved/ips", e.listReservedIPs),
		post("/networking/reserved/ips", e.reserveIP),
		list("/networking/reserved/ips/types", e.listReservedIPTypes),
		get("/networking/reserved/ips/{address}", e.getReservedIP),
		put("/networking/reserved/ips/{address}", e.updateReservedIP),
		del("/networking/reserved/ips/{address}", e.releaseReservedIP),

		list("/vpcs", e.listVPCs),
		get("/vpcs/default-ranges", e.getVPCDefaultRanges),
		list("/vpcs/ips", e.listVPCIPs),
		list("/vpcs/{vpcId}/ips", e.listVPCIPsOfVPC),
		post("/vpcs", e.createVPC),
		get("/vpcs/{vpcId}", e.getVPC),
		put("/vpcs/{vpcId}", e.updateVPC),
		del("/vpcs/{vpcId}", e.deleteVPC),
		list("/vpcs/{vpcId}/subnets", e.listSubnets),
		post("/vpcs/{vpcId}/subnets", e.createSubnet),
		get("/vpcs/{vpcId}/subnets/{vpcSubnetId}", e.getSubnet),
		put("/vpcs/{vpcId}/subnets/{vpcSubnetId}", e.updateSubnet),

		list("/placement/groups", e.listPlacementGroups),
		post("/placement/groups", e.createPlacementGroup),
		get("/placement/groups/{groupId}", e.getPlacementGroup),
		put("/placement/groups/{groupId}", e.updatePlacementGroup),
		del("/placement/groups/{groupId}", e.deletePlacementGroup),
	}
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

	e.sync()
	result, apiErr := rt.handle(r)
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
