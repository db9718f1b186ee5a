package chaos

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// The emulator knows one token, which the controllers of one account share (as clusters of one
// company may): each controller reaches it through a proxy of its own that adds its tenant's name
// to the requests' user agent, so that the emulator's request log tells them apart. A ledger
// remembers who owned each Linode the account ever held, so that a write is judged by the owner of
// what it wrote to, even once that is gone.

// tenantUserAgent marks a tenant's requests in the user agent.
const tenantUserAgent = " tenant/"

// noTenant owns what no controller of the account owns: the Linodes and LKE clusters of no
// cluster's Karpenter.
const noTenant = "no cluster"

// ledger knows which tenant owns each Linode and LKE cluster of the account.
type ledger struct {
	emu *emulator.Emulator
	// ownerOf names the tenant owning a Linode, or noTenant.
	ownerOf func(emulator.InstanceInfo) string
	// lkeOwners are the LKE clusters' owners, by id; an LKE cluster not named is noTenant's.
	lkeOwners map[int]string

	mu      sync.Mutex
	linodes map[int]string
}

func newLedger(emu *emulator.Emulator, ownerOf func(emulator.InstanceInfo) string) *ledger {
	return &ledger{emu: emu, ownerOf: ownerOf, lkeOwners: map[int]string{}, linodes: map[int]string{}}
}

// look notes the owner of every Linode the account holds now; a Linode keeps the owner it was
// first seen with.
func (l *ledger) look() {
	instances := l.emu.Instances()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, in := range instances {
		if _, known := l.linodes[in.ID]; !known {
			l.linodes[in.ID] = l.ownerOf(in)
		}
	}
}

// watch looks at the account every interval until stop is closed.
func (l *ledger) watch(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		l.look()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// The paths of the writes that name a Linode or an LKE cluster; the request log may hold them
// with or without the API version.
var (
	linodePath = regexp.MustCompile(`^(?:/v4(?:beta)?)?/linode/instances/(\d+)(?:/|$)`)
	lkePath    = regexp.MustCompile(`^(?:/v4(?:beta)?)?/lke/clusters/(\d+)(?:/|$)`)
)

// ownerOfPath names the tenant owning what a request's path names: a Linode or an LKE cluster
// (its pools and nodes). known is false for paths that name neither (a create of a Linode, an
// account's IPv6 range) and for a Linode the ledger never saw.
func (l *ledger) ownerOfPath(path string) (owner string, known bool) {
	if m := linodePath.FindStringSubmatch(path); m != nil {
		id, _ := strconv.Atoi(m[1])
		l.mu.Lock()
		defer l.mu.Unlock()
		owner, known = l.linodes[id]
		return owner, known
	}
	if m := lkePath.FindStringSubmatch(path); m != nil {
		id, _ := strconv.Atoi(m[1])
		if owner, ok := l.lkeOwners[id]; ok {
			return owner, true
		}
		return noTenant, true
	}
	return "", false
}

// proxy starts the tenant's way to the emulator: it notes the owner of the Linodes the account
// holds before each write goes through, and adds the tenant's name to the user agent.
func (l *ledger) proxy(tenant string) (*httptest.Server, error) {
	target, err := url.Parse(l.emu.URL())
	if err != nil {
		return nil, err
	}
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("User-Agent", r.In.Header.Get("User-Agent")+tenantUserAgent+tenant)
	}}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWrite(r.Method) {
			l.look()
		}
		forward.ServeHTTP(w, r)
	})), nil
}

func isWrite(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodDelete
}

// tenantTally is what one tenant's controller sent the account.
type tenantTally struct {
	requests, writes int
	// own are its writes to its own Linodes and LKE cluster: a ledger that finds none of those
	// while the tenant launches and deletes is blind.
	own int
	// launched and deleted count its creates and deletes of Linodes or LKE pools that succeeded.
	launched, deleted int
	// othersTouched are its writes to what another tenant, or no cluster, owns; unresolved its
	// writes to a Linode the ledger never saw.
	othersTouched []string
	unresolved    int
}

// tally reads the emulator's request log: each tenant's requests, and its writes to what is not
// its own. It fails when the log dropped requests, which would leave writes uncounted.
func (l *ledger) tally(tenants []string) (map[string]*tenantTally, error) {
	l.look()
	records := l.emu.Requests()
	total := 0
	for _, n := range l.emu.Counters() {
		total += n
	}
	if total > len(records) {
		return nil, fmt.Errorf("the emulator's request log holds %d of the %d requests: give it room for more", len(records), total)
	}
	tallies := map[string]*tenantTally{}
	for _, tenant := range tenants {
		tallies[tenant] = &tenantTally{}
	}
	for _, r := range records {
		_, tenant, ok := strings.Cut(r.UserAgent, tenantUserAgent)
		if !ok || !harness.IsControllerRequest(r) || tallies[tenant] == nil {
			continue
		}
		t := tallies[tenant]
		t.requests++
		if !isWrite(r.Method) {
			continue
		}
		t.writes++
		succeeded := r.Status >= 200 && r.Status < 300
		switch {
		case succeeded && harness.CreateRoutes[r.Route]:
			t.launched++
		case succeeded && slices.Contains(deleteRoutes, r.Route):
			t.deleted++
		}
		owner, known := l.ownerOfPath(r.Path)
		switch {
		case !known && linodePath.MatchString(r.Path):
			t.unresolved++
		case known && owner == tenant:
			t.own++
		case known:
			t.othersTouched = append(t.othersTouched, fmt.Sprintf("%s %s (%s's, answered %d)", r.Method, r.Path, owner, r.Status))
		}
	}
	return tallies, nil
}

// deleteRoutes remove a node: its Linode (instance mode), its LKE pool or its pool's node.
var deleteRoutes = []string{
	"DELETE /linode/instances/{linodeId}",
	"DELETE /lke/clusters/{clusterId}/pools/{poolId}",
	"DELETE /lke/clusters/{clusterId}/nodes/{nodeId}",
}
