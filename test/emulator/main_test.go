package emulator

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// linodegoRoutes collects the routes that tests reached through linodego (not raw HTTP), across
// every emulator the tests start.
var linodegoRoutes = struct {
	sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

func recordLinodegoRoutes(e *Emulator) {
	linodegoRoutes.Lock()
	defer linodegoRoutes.Unlock()
	for _, rec := range e.Requests() {
		if rec.Route != "" && strings.HasPrefix(rec.UserAgent, "linodego") {
			linodegoRoutes.seen[rec.Route] = true
		}
	}
}

// TestMain fails the package when a full run leaves a served route unexercised by linodego:
// the emulator exists to serve linodego, so each route must be proven against it.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		var missing []string
		for _, rt := range New().routes() {
			if !linodegoRoutes.seen[rt.name()] {
				missing = append(missing, rt.name())
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			fmt.Fprintf(os.Stderr, "routes served but never exercised through linodego:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}
