package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The conformance test replays real API traffic (go-vcr cassettes recorded
// by linodego's integration tests) against the emulator. For every recorded
// interaction on a route the emulator serves it sends the equivalent
// request, with recorded object ids replaced by the ids of the objects the
// replay created, and checks that the emulator answers the same status and
// that its body has every field the real one has, with the same JSON type.
// A field may be null in the emulator's answer only where the real API is
// seen sending null for it in some recording.

type cassette struct {
	Interactions []interaction `json:"interactions"`
}

type interaction struct {
	Request struct {
		Method  string              `json:"method"`
		URL     string              `json:"url"`
		Body    string              `json:"body"`
		Headers map[string][]string `json:"headers"`
	} `json:"request"`
	Response struct {
		Code int    `json:"code"`
		Body string `json:"body"`
	} `json:"response"`
}

func recordingsDir(t *testing.T) string {
	if dir := os.Getenv("LINODE_API_RECORDINGS"); dir != "" {
		return dir
	}
	return sharedFile(t, "recordings")
}

func loadCassettes(t *testing.T) map[string]cassette {
	dir := recordingsDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (set LINODE_API_RECORDINGS to the cassette directory)", dir)
	}
	out := map[string]cassette{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c cassette
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = c
	}
	return out
}

func TestConformanceWithRecordings(t *testing.T) {
	cassettes := loadCassettes(t)
	nullable := nullablePaths(cassettes)
	names := make([]string, 0, len(cassettes))
	for name := range cassettes {
		names = append(names, name)
	}
	sort.Strings(names)

	compared := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			compared += replay(t, cassettes[name], nullable)
		})
	}
	if compared < 50 {
		t.Fatalf("only %d recorded interactions were compared", compared)
	}
}

// replay runs one cassette against a fresh emulator with instant state
// transitions and returns how many interactions it compared. Every recorded
// route must be served.
func replay(t *testing.T, c cassette, nullable map[string]bool) int {
	e, _, _ := startEmulator(t, WithDelayScale(0))
	e.mu.Lock()
	err := e.cat.add(recordedCatalogue(t, c))
	e.mu.Unlock()
	if err != nil {
		t.Fatalf("adding the recorded catalogue: %v", err)
	}
	ids := map[string]string{} // recorded id -> emulator id
	addresses := newAddressBook(e)
	compared := 0
	for i, in := range c.Interactions {
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(strings.TrimPrefix(u.EscapedPath(), "/v4beta"), "/v4")
		rt, ok := matchRoute(e.routes(), in.Request.Method, path)
		if !ok {
			// A recording is real traffic the project's users can meet: a route it shows that the
			// emulator does not serve would let the replay pass without comparing anything.
			t.Errorf("interaction %d: %s %s is not served", i, in.Request.Method, path)
			continue
		}
		if in.Response.Code == http.StatusServiceUnavailable {
			// A 503 is the API asking to come back later, which linodego does on its own: its
			// timing, not its format, and a replay on instant delays cannot meet it.
			continue
		}
		name := fmt.Sprintf("%02d %s", i, rt.name())
		t.Run(name, func(t *testing.T) {
			addresses.prepare(rt, in.Response.Code)
			body := rewriteBody(t, e, in.Request.Body, ids, addresses)
			req, err := http.NewRequest(in.Request.Method, e.URL()+"/v4beta"+mapSegments(path, ids, addresses)+queryOf(u), strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			token := e.Token()
			if in.Response.Code == http.StatusUnauthorized {
				// Recorded with a token the API refused; the cassette does not keep it.
				token = "not-" + token
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			if f := in.Request.Headers["X-Filter"]; len(f) > 0 {
				req.Header.Set("X-Filter", rewriteBody(t, e, f[0], ids, addresses))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != in.Response.Code {
				t.Fatalf("status %d, recorded %d: %s", resp.StatusCode, in.Response.Code, raw)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			var real, got any
			if err := json.Unmarshal([]byte(in.Response.Body), &real); err != nil {
				t.Fatalf("recorded body: %v", err)
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("emulator body: %v", err)
			}
			for _, problem := range compareShape("", real, got, nullable, ids) {
				t.Error(problem)
			}
			learnIDs(real, got, ids)
			switch rt.name() {
			case "GET /linode/instances/{linodeId}/disks":
				learnInOrder(real, got, ids)
			case "POST /images/upload":
				uploadImage(t, got)
			}
			addresses.follow(rt, real, got)
		})
		compared++
	}
	return compared
}

// recordedCatalogue is what the cassette's API listed or read of the catalogue: regions, plans and
// LKE versions. linodego's tests pick their region from the regions the API listed that day, lab
// regions among them, and read versions LKE has since retired; the replay adds to the emulator's
// catalogue what it lacks of the cassette's, so that each cassette replays in the world it was
// recorded in.
func recordedCatalogue(t *testing.T, c cassette) catalogueFile {
	f := catalogueFile{LKEVersions: map[string][]string{}}
	for _, in := range c.Interactions {
		if in.Request.Method != http.MethodGet || in.Response.Code != http.StatusOK {
			continue
		}
		u, err := url.Parse(in.Request.URL)
		if err != nil {
			t.Fatal(err)
		}
		path := strings.Split(strings.Trim(strings.TrimPrefix(strings.TrimPrefix(u.EscapedPath(), "/v4beta"), "/v4"), "/"), "/")
		object := json.RawMessage(in.Response.Body)
		switch {
		case pathIs(path, "regions"):
			f.Regions = append(f.Regions, listed(t, object)...)
		case pathIs(path, "regions", "*") && !strings.HasSuffix(path[1], "availability"):
			f.Regions = append(f.Regions, object)
		case pathIs(path, "linode", "types"):
			f.Types = append(f.Types, listed(t, object)...)
		case pathIs(path, "linode", "types", "*"):
			f.Types = append(f.Types, object)
		case pathIs(path, "lke", "versions"):
			f.LKEVersions[tierStandard] = append(f.LKEVersions[tierStandard], ids(t, listed(t, object))...)
		case pathIs(path, "lke", "versions", "*"):
			f.LKEVersions[tierStandard] = append(f.LKEVersions[tierStandard], ids(t, []json.RawMessage{object})...)
		case pathIs(path, "lke", "tiers", "*", "versions"):
			f.LKEVersions[path[2]] = append(f.LKEVersions[path[2]], ids(t, listed(t, object))...)
		}
	}
	return f
}

// pathIs reports whether the path's segments are the pattern's, "*" standing for any one segment.
func pathIs(path []string, pattern ...string) bool {
	return slices.EqualFunc(path, pattern, func(segment, want string) bool { return want == "*" || segment == want })
}

// listed are the objects of one page of a list.
func listed(t *testing.T, page json.RawMessage) []json.RawMessage {
	var body struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(page, &body); err != nil {
		t.Fatalf("recorded page: %v", err)
	}
	return body.Data
}

// ids are the objects' "id" fields.
func ids(t *testing.T, objects []json.RawMessage) []string {
	out := make([]string, 0, len(objects))
	for _, raw := range objects {
		var object struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &object); err != nil {
			t.Fatalf("recorded object: %v", err)
		}
		out = append(out, object.ID)
	}
	return out
}

func queryOf(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// matchRoute finds the served route for a method and escaped path.
func matchRoute(routes []route, method, path string) (route, bool) {
	segs := strings.Split(path, "/")
	for _, rt := range routes {
		if rt.method != method {
			continue
		}
		tmpl := strings.Split(rt.path, "/")
		if len(tmpl) != len(segs) {
			continue
		}
		match := true
		for i := range tmpl {
			if !strings.HasPrefix(tmpl[i], "{") && tmpl[i] != segs[i] {
				match = false
				break
			}
		}
		if match {
			return rt, true
		}
	}
	return route{}, false
}

func mapSegments(path string, ids map[string]string, addresses *addressBook) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		// Ids with a slash, such as an image's "private/<n>", travel escaped.
		unescaped, err := url.PathUnescape(s)
		if err != nil {
			unescaped = s
		}
		if mapped, ok := ids[unescaped]; ok {
			segs[i] = url.PathEscape(mapped)
		} else if address, ok := addresses.current(s); ok {
			segs[i] = address
		}
	}
	return strings.Join(segs, "/")
}

// rewriteBody maps recorded ids in a JSON body to the replay's objects.
// Firewalls and VPCs the recording referenced but did not create are seeded. LKE
// versions are replaced by the emulator's newest of the requested tier,
// since recordings span years of version churn.
func rewriteBody(t *testing.T, e *Emulator, body string, ids map[string]string, addresses *addressBook) string {
	if strings.TrimSpace(body) == "" {
		return body
	}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("recorded request body: %v", err)
	}
	if m, ok := v.(map[string]any); ok {
		if fw, ok := m["firewall_id"].(float64); ok {
			key := idString(fw)
			if _, known := ids[key]; !known {
				ids[key] = strconv.Itoa(e.AddFirewall("recorded-firewall"))
			}
		}
		if vpcID, ok := m["vpc_id"].(float64); ok {
			key := idString(vpcID)
			if _, known := ids[key]; !known {
				region, _ := m["region"].(string)
				id, err := e.AddVPC("recorded-vpc", region)
				if err != nil {
					t.Fatalf("seeding the VPC the recording brought: %v", err)
				}
				ids[key] = strconv.Itoa(id)
			}
		}
		if _, ok := m["k8s_version"]; ok {
			tier, _ := m["tier"].(string)
			if tier == "" {
				tier = tierStandard
			}
			m["k8s_version"] = e.cat.latestLKEVersion(tier)
		}
	}
	out, err := json.Marshal(mapValues(v, ids, addresses))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func mapValues(v any, ids map[string]string, addresses *addressBook) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = mapValues(val, ids, addresses)
		}
	case []any:
		for i, val := range x {
			x[i] = mapValues(val, ids, addresses)
		}
	case float64:
		if mapped, ok := ids[idString(x)]; ok {
			n, _ := strconv.Atoi(mapped)
			return n
		}
	case string:
		if address, ok := addresses.current(x); ok {
			return address
		}
	}
	return v
}

// addressBook pairs the IPv4 addresses of a recording with the replay's. Recordings sanitise
// every address to the same value, so a recorded address stands for one of the addresses the
// replay got under it (a new Linode's, one added to a Linode, an allocated or a reserved one):
// the newest, or the newest still reserved where the request needs a reserved address.
type addressBook struct {
	e       *Emulator
	learned map[string][]string
	// reservedOnly is set for requests that name a reserved address.
	reservedOnly bool
}

func newAddressBook(e *Emulator) *addressBook {
	return &addressBook{e: e, learned: map[string][]string{}}
}

func (b *addressBook) current(recorded string) (string, bool) {
	candidates := b.learned[recorded]
	for i := len(candidates) - 1; i >= 0; i-- {
		if !b.reservedOnly || b.reserved(candidates[i]) {
			return candidates[i], true
		}
	}
	if len(candidates) > 0 {
		return candidates[len(candidates)-1], true
	}
	return "", false
}

func (b *addressBook) reserved(address string) bool {
	b.e.mu.RLock()
	defer b.e.mu.RUnlock()
	_, ok := b.e.st.reservedIPs[address]
	return ok
}

// prepare says what the next request's addresses stand for. A request the recording shows
// refused as not found named an address no longer there: the newest, reserved or not.
func (b *addressBook) prepare(rt route, recordedStatus int) {
	b.reservedOnly = recordedStatus != http.StatusNotFound &&
		(rt.name() == "POST /linode/instances" || rt.name() == "POST /linode/instances/{linodeId}/ips" ||
			strings.HasPrefix(rt.path, "/networking/reserved/ips/"))
}

// follow learns the addresses a create, an allocation or a reservation gave, and the IPv6
// ranges a create routed.
func (b *addressBook) follow(rt route, real, got any) {
	learn := func(recorded, ours any) {
		r, _ := recorded.(string)
		o, _ := ours.(string)
		if r != "" && o != "" {
			b.learned[r] = append(b.learned[r], o)
		}
	}
	realObject, _ := real.(map[string]any)
	gotObject, _ := got.(map[string]any)
	switch rt.name() {
	case "POST /networking/reserved/ips", "POST /networking/ips", "POST /linode/instances/{linodeId}/ips":
		learn(realObject["address"], gotObject["address"])
	case "POST /networking/ipv6/ranges":
		// The range is read and deleted by its first address, without the prefix length.
		r, _ := realObject["range"].(string)
		o, _ := gotObject["range"].(string)
		learn(strings.Split(r, "/")[0], strings.Split(o, "/")[0])
	case "POST /linode/instances":
		realIPs, _ := realObject["ipv4"].([]any)
		gotIPs, _ := gotObject["ipv4"].([]any)
		if len(realIPs) > 0 && len(gotIPs) > 0 {
			learn(realIPs[0], gotIPs[0])
		}
	}
}

// learnIDs pairs the ids of objects in a recorded answer with those in the
// emulator's answer. Pages are skipped, their items need not correspond,
// except a page of exactly one item on both sides: a filter picked out the
// same object (the event a replayed action caused, which the recording then
// reads by id).
func learnIDs(real, got any, ids map[string]string) {
	switch r := real.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return
		}
		if _, isPage := r["pages"]; isPage {
			realItems, _ := r["data"].([]any)
			gotItems, _ := g["data"].([]any)
			if len(realItems) == 1 && len(gotItems) == 1 {
				learnIDs(realItems[0], gotItems[0], ids)
			}
			return
		}
		for _, key := range []string{"id", "instance_id"} {
			if r[key] != nil && g[key] != nil {
				ids[idString(r[key])] = idString(g[key])
			}
		}
		for k, rv := range r {
			learnIDs(rv, g[k], ids)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return
		}
		for i := 0; i < len(r) && i < len(g); i++ {
			learnIDs(r[i], g[i], ids)
		}
	}
}

// uploadImage sends a disk image to the URL an image upload answered, as the recorded test did
// between the interactions: the upload goes to object storage, which the cassette does not keep.
func uploadImage(t *testing.T, got any) {
	answer, _ := got.(map[string]any)
	uploadTo, _ := answer["upload_to"].(string)
	if uploadTo == "" {
		return
	}
	req, err := http.NewRequest(http.MethodPut, uploadTo, strings.NewReader("disk image"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("uploading to %s: status %d", uploadTo, resp.StatusCode)
	}
}

// learnInOrder pairs the items of two pages of the same length by position, for lists whose
// order both sides share: a Linode's disks, in the order deploying its image made them.
func learnInOrder(real, got any, ids map[string]string) {
	realPage, _ := real.(map[string]any)
	gotPage, _ := got.(map[string]any)
	realItems, _ := realPage["data"].([]any)
	gotItems, _ := gotPage["data"].([]any)
	if len(realItems) != len(gotItems) {
		return
	}
	for i := range realItems {
		learnIDs(realItems[i], gotItems[i], ids)
	}
}

// compareShape reports fields of real missing from got or of another JSON
// type. Items of pages are paired by id where possible (the emulator has
// only the replay's objects and its own catalogue).
func compareShape(path string, real, got any, nullable map[string]bool, ids map[string]string) []string {
	if real == nil {
		return nil
	}
	if got == nil {
		if nullable[path] {
			return nil
		}
		return []string{fmt.Sprintf("%s: null, recorded %s", pathOrRoot(path), jsonType(real))}
	}
	if jsonType(real) != jsonType(got) {
		return []string{fmt.Sprintf("%s: %s, recorded %s", pathOrRoot(path), jsonType(got), jsonType(real))}
	}
	var problems []string
	switch r := real.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, rv := range r {
			gv, ok := g[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: missing", joinPath(path, k)))
				continue
			}
			if k == "data" && path == "" {
				problems = append(problems, comparePage(rv, gv, nullable, ids)...)
				continue
			}
			problems = append(problems, compareShape(joinPath(path, k), rv, gv, nullable, ids)...)
		}
	case []any:
		g := got.([]any)
		if len(r) > 0 && len(g) > 0 {
			problems = append(problems, compareShape(path+"[]", r[0], g[0], nullable, ids)...)
		}
	}
	return problems
}

func comparePage(real, got any, nullable map[string]bool, ids map[string]string) []string {
	r, ok1 := real.([]any)
	g, ok2 := got.([]any)
	if !ok1 || !ok2 {
		return compareShape("data", real, got, nullable, ids)
	}
	byID := map[string]any{}
	for _, item := range g {
		if m, ok := item.(map[string]any); ok && m["id"] != nil {
			byID[idString(m["id"])] = item
		}
	}
	var problems []string
	paired := false
	for _, item := range r {
		m, ok := item.(map[string]any)
		if !ok || m["id"] == nil {
			continue
		}
		id := idString(m["id"])
		if mapped, ok := ids[id]; ok {
			id = mapped
		}
		if counterpart, ok := byID[id]; ok {
			paired = true
			problems = append(problems, compareShape("data[]", item, counterpart, nullable, ids)...)
		}
	}
	if !paired && len(r) > 0 && len(g) > 0 {
		problems = append(problems, compareShape("data[]", r[0], g[0], nullable, ids)...)
	}
	return problems
}

// idString renders a decoded id (number or string) as it appears in paths.
func idString(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathOrRoot(path string) string {
	if path == "" {
		return "(body)"
	}
	return path
}

// nullablePaths collects the paths at which any recorded answer holds null.
func nullablePaths(cassettes map[string]cassette) map[string]bool {
	out := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			out[path] = true
		case map[string]any:
			for k, val := range x {
				walk(joinPath(path, k), val)
			}
		case []any:
			for _, val := range x {
				walk(path+"[]", val)
			}
		}
	}
	for _, c := range cassettes {
		for _, in := range c.Interactions {
			var v any
			if json.Unmarshal([]byte(in.Response.Body), &v) == nil {
				walk("", v)
			}
		}
	}
	return out
}
