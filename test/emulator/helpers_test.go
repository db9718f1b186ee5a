package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/linodego"
	clocktesting "k8s.io/utils/clock/testing"
)

// epoch is the fake clocks' start time.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// startEmulator starts an emulator on a fake clock without rate limits and
// returns it with a client and the clock.
func startEmulator(t testing.TB, opts ...Option) (*Emulator, *linodego.Client, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	e := New(append([]Option{WithClock(clk), WithoutRateLimits()}, opts...)...)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		recordLinodegoRoutes(e)
		_ = e.Close()
	})
	return e, e.NewClient(), clk
}

// apiErr asserts err is a linodego API error with that status and returns it.
// wantAPIError asserts err is a Linode API error with the status.
func wantAPIError(t *testing.T, err error, status int) {
	t.Helper()
	_ = apiErr(t, err, status)
}

func apiErr(t *testing.T, err error, status int) *linodego.Error {
	t.Helper()
	var le *linodego.Error
	if !errors.As(err, &le) {
		t.Fatalf("want API error %d, got %v", status, err)
	}
	if le.Code != status {
		t.Fatalf("want status %d, got %d: %v", status, le.Code, err)
	}
	return le
}

// wantField asserts err is a 400 naming field, and returns its message.
func wantField(t *testing.T, err error, field string) string {
	t.Helper()
	le := apiErr(t, err, 400)
	if le.Response == nil {
		t.Fatalf("no response in %v", err)
	}
	if want := "[" + field + "]"; !strings.Contains(le.Message, want) {
		t.Fatalf("want error on field %q, got %q", field, le.Message)
	}
	return le.Message
}

// sharedFile is the path of name under ../shared/linode-api; a test on a clone without it is
// skipped, or fails under CI=true (package shared).
func sharedFile(t testing.TB, name string) string {
	return filepath.Join(shared.Require(t, shared.LinodeAPI), name)
}

func ptr[T any](v T) *T { return &v }

// getObject reads path (under /v4beta) as raw JSON, to see what linodego's types cannot show,
// such as a field that is null rather than absent.
func getObject(t *testing.T, e *Emulator, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.URL()+"/v4beta"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var object map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&object); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v", path, resp.StatusCode, err)
	}
	return object
}
