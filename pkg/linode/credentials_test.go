package linode_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestRotatedTokenFileIsUsedWithoutARestart follows a token through its life on Linode's side:
// accepted, revoked (the client notices and says so), replaced in its file (the client uses the
// new one and notices it is accepted), while a 403 about a plan, or about a scope only maintenance
// needs, never passes for a token problem.
func TestRotatedTokenFileIsUsedWithoutARestart(t *testing.T) {
	emu := emulator.New(emulator.WithoutRateLimits(), emulator.WithToken("first-token"))
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	clusterID, err := emu.AddLKECluster("tokens", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "token")
	write := func(token string) {
		t.Helper()
		// The kubelet swaps a Secret volume's files atomically; a rename does the same.
		next := file + ".next"
		if err := os.WriteFile(next, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(next, file); err != nil {
			t.Fatal(err)
		}
	}
	write("first-token")
	credentials, err := linode.CredentialsFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := linode.DefaultClientOptions()
	opts.URL, opts.Credentials, opts.RetryCount = emu.URL(), credentials, 0
	client, err := linode.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	probe := func(ctx context.Context) error { _, err := client.GetLKECluster(ctx, clusterID); return err }
	go credentials.Watch(ctx, 20*time.Millisecond, probe)

	if err := probe(ctx); err != nil {
		t.Fatal(err)
	}
	expectRefused(t, credentials, false)

	emu.SetCapacity("us-ord", "g6-dedicated-8", 0)
	if _, err := client.CreateLKENodePool(ctx, clusterID, linode.NodePoolCreateOptions{Count: 1, Type: "g6-dedicated-8"}); !linode.IsInsufficientCapacity(err) {
		t.Fatalf("create of an exhausted plan: %v", err)
	}
	expectRefused(t, credentials, false)

	// A token without the Account and Events scopes cannot read maintenance, which the controller
	// does without: that 403 says nothing about launching nodes.
	emu.InjectFault(emulator.Fault{Route: "/account/maintenance", Sequence: []int{403}, Reason: "Unauthorized"})
	if _, err := client.ListMaintenances(ctx, nil); !linode.IsUnauthorized(err) {
		t.Fatalf("a read of maintenance without the scope: %v", err)
	}
	expectRefused(t, credentials, false)

	emu.SetToken("second-token")
	if err := probe(ctx); !linode.IsUnauthorized(err) {
		t.Fatalf("a call with the revoked token: %v", err)
	}
	expectRefused(t, credentials, true)
	if _, reason := credentials.Refused(); !strings.Contains(reason, "401") {
		t.Fatalf("the reason the token is refused: %q", reason)
	}

	changed := credentials.Changed()
	write("second-token")
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the new token in the file was not noticed")
	}
	expectRefused(t, credentials, false)
	if credentials.Token() != "second-token" {
		t.Fatalf("token in use: %q", credentials.Token())
	}
}

func expectRefused(t *testing.T, credentials *linode.Credentials, want bool) {
	t.Helper()
	if refused, reason := credentials.Refused(); refused != want {
		t.Fatalf("refused = %v (%s), want %v", refused, reason, want)
	}
	metric := 0.0
	if want {
		metric = 1
	}
	if got := gauge(t, "karpenter_linode_api_token_refused"); got != metric {
		t.Fatalf("karpenter_linode_api_token_refused = %v, want %v", got, metric)
	}
}

// gauge reads a gauge without labels from the registry the controller serves on /metrics.
func gauge(t *testing.T, name string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() == name && len(family.GetMetric()) == 1 {
			return family.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s on /metrics", name)
	return 0
}

// TestTheTokenNeverFollowsARedirectToAnotherHost: an API answer that redirects the client to
// another host (a compromised proxy, a misconfigured API URL) does not hand that host the token,
// while a redirect within the API keeps it.
func TestTheTokenNeverFollowsARedirectToAnotherHost(t *testing.T) {
	const region = `{"id":"us-ord","country":"us","capabilities":[],"status":"ok"}`
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(region))
	}))
	t.Cleanup(other.Close)
	var withinAPI []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v4/regions/elsewhere":
			http.Redirect(w, r, other.URL+"/v4/regions/us-ord", http.StatusFound)
		case "/v4/regions/moved":
			http.Redirect(w, r, "/v4/regions/us-ord", http.StatusFound)
		default:
			withinAPI = append(withinAPI, r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(region))
		}
	}))
	t.Cleanup(api.Close)
	opts := linode.DefaultClientOptions()
	opts.URL, opts.Credentials, opts.RetryCount = api.URL, linode.StaticCredentials("secret-token"), 0
	client, err := linode.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := client.GetRegion(context.Background(), "elsewhere"); err != nil {
		t.Fatal(err)
	}
	if len(elsewhere) != 1 || elsewhere[0] != "" {
		t.Fatalf("the other host received Authorization %q, want the redirect followed without the token", elsewhere)
	}
	if _, err := client.GetRegion(context.Background(), "moved"); err != nil {
		t.Fatal(err)
	}
	if len(withinAPI) != 1 || withinAPI[0] != "Bearer secret-token" {
		t.Fatalf("a redirect within the API sent Authorization %q, want the token", withinAPI)
	}
}
