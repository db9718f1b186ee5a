package operator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const testToken = "0123456789abcdef-test-token"

func startEmulator(t *testing.T) *test.Emulator {
	t.Helper()
	e := test.StartEmulatorForTest(t, emulator.WithToken(testToken))
	if _, err := e.AddLKECluster("prod", "us-ord", "standard"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddLKECluster("staging", "us-east", "standard"); err != nil {
		t.Fatal(err)
	}
	return e
}

func client(t *testing.T, e *test.Emulator, token string) linode.API {
	t.Helper()
	opts := linode.DefaultClientOptions()
	opts.URL, opts.Credentials, opts.RetryCount = e.URL(), linode.StaticCredentials(token), 0
	c, err := linode.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckLinode(t *testing.T) {
	e := startEmulator(t)
	tests := []struct {
		name       string
		token      string
		opts       options.Options
		wantRegion string
		// wantConfigError is a fragment of the message the user reads; empty when the check passes.
		wantConfigError string
		wantRefused     bool
	}{
		{
			name:       "LKE mode takes the cluster's region",
			opts:       options.Options{Mode: mode.LKE, ClusterName: "staging"},
			wantRegion: "us-east",
		},
		{
			name:            "LKE mode refuses another region than the cluster's",
			opts:            options.Options{Mode: mode.LKE, ClusterName: "prod", Region: "us-sea"},
			wantConfigError: `LINODE_REGION "us-sea" is not the region of LKE cluster "prod" (us-ord)`,
		},
		{
			name:       "instance mode needs no LKE cluster",
			opts:       options.Options{Mode: mode.Instance, ClusterName: "self-managed", Region: "us-ord"},
			wantRegion: "us-ord",
		},
		{
			name:        "a refused token is no setting the API proves wrong",
			token:       "not-the-token",
			opts:        options.Options{Mode: mode.LKE, ClusterName: "prod"},
			wantRefused: true,
		},
		{
			name:            "an unknown cluster lists the clusters the token sees",
			opts:            options.Options{Mode: mode.LKE, ClusterName: "prdo"},
			wantConfigError: `CLUSTER_NAME "prdo" matches no LKE cluster; clusters this token sees: "prod", "staging"`,
		},
		{
			name:            "an unknown region",
			opts:            options.Options{Mode: mode.Instance, ClusterName: "self-managed", Region: "us-nowhere"},
			wantConfigError: `LINODE_REGION "us-nowhere" is not a Linode region: use one of`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := testToken
			if tt.token != "" {
				token = tt.token
			}
			m, err := operator.ModeNamed(tt.opts.Mode)
			if err != nil {
				t.Fatal(err)
			}
			target, err := operator.CheckLinode(context.Background(), client(t, e, token), &tt.opts, m)
			if tt.wantRefused {
				var refused *operator.TokenRefusedError
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), "the Linode API refuses LINODE_TOKEN (401 Unauthorized): put a current personal access token") {
					t.Fatalf("CheckLinode error = %v, want a TokenRefusedError that says what to do", err)
				}
				return
			}
			if tt.wantConfigError != "" {
				var configErr *options.ConfigError
				if !errors.As(err, &configErr) || !strings.Contains(configErr.Message, tt.wantConfigError) {
					t.Fatalf("CheckLinode error = %v, want a ConfigError containing %q", err, tt.wantConfigError)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckLinode: %v", err)
			}
			if target.Region() != tt.wantRegion || target.Mode() != tt.opts.Mode {
				t.Errorf("target = %s mode in %q, want %s mode in %q", target.Mode(), target.Region(), tt.opts.Mode, tt.wantRegion)
			}
		})
	}
}

func TestWaitForLinodeRetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name   string
		faults []int
	}{
		{name: "server errors", faults: []int{500, 502, 503}},
		{name: "rate limits", faults: []int{429, 429}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEmulator(t)
			e.InjectFault(emulator.Fault{Method: "GET", Route: "/lke/clusters", Sequence: tt.faults})
			opts := &options.Options{Mode: mode.LKE, ClusterName: "prod", Token: testToken, APIURL: e.URL()}
			target, err := operator.WaitForLinode(context.Background(), client(t, e, testToken), opts, operator.LKE{}, linode.StaticCredentials(testToken),
				operator.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond})
			if err != nil {
				t.Fatalf("WaitForLinode: %v", err)
			}
			if lkeTarget, ok := target.(*operator.LKETarget); !ok || lkeTarget.Cluster.Label != "prod" {
				t.Errorf("target = %v, want the LKE cluster prod", target)
			}
			if got := e.Counters()["GET /lke/clusters"]; got != len(tt.faults)+1 {
				t.Errorf("cluster listings = %d, want %d (one per failure, then success)", got, len(tt.faults)+1)
			}
		})
	}
}

// TestWaitForLinodeWaitsForAValidToken: a refused token does not stop the controller (its
// webhooks serve meanwhile); the token written to its file, as the kubelet updates a mounted
// Secret, ends the wait.
func TestWaitForLinodeWaitsForAValidToken(t *testing.T) {
	e := startEmulator(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("revoked-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	credentials, err := linode.CredentialsFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	clientOptions := linode.DefaultClientOptions()
	clientOptions.URL, clientOptions.Credentials, clientOptions.RetryCount = e.URL(), credentials, 0
	api, err := linode.NewClient(clientOptions)
	if err != nil {
		t.Fatal(err)
	}
	opts := &options.Options{Mode: mode.LKE, ClusterName: "prod", APIURL: e.URL()}
	done := make(chan error, 1)
	go func() {
		_, err := operator.WaitForLinode(context.Background(), api, opts, operator.LKE{}, credentials, operator.Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond})
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); e.Counters()["GET /lke/clusters"] < 3; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("WaitForLinode returned %v while the API refuses the token", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("WaitForLinode did not ask the API again while it refused the token")
		}
	}
	if err := os.WriteFile(file, []byte(testToken), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitForLinode: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForLinode still waits once the token file holds a valid token")
	}
}

func TestWaitForLinodeStopsOnConfigErrors(t *testing.T) {
	e := startEmulator(t)
	opts := &options.Options{Mode: mode.LKE, ClusterName: "prdo", Token: testToken, APIURL: e.URL()}
	_, err := operator.WaitForLinode(context.Background(), client(t, e, testToken), opts, operator.LKE{}, linode.StaticCredentials(testToken), operator.DefaultBackoff)
	var configErr *options.ConfigError
	if !errors.As(err, &configErr) {
		t.Fatalf("WaitForLinode error = %v, want a ConfigError without retrying", err)
	}
}

func TestRedactEveryTokenUsed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	credentials, err := linode.CredentialsFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("rotated-token-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := credentials.Reload(); err != nil || !changed || credentials.Token() != "rotated-token-value" {
		t.Fatalf("Reload = %v, %v; token %q", changed, err, credentials.Token())
	}
	got := credentials.Redact(`parse "https://` + testToken + `@api.linode.com": invalid; rotated-token-value`)
	if strings.Contains(got, testToken) || strings.Contains(got, "rotated-token-value") || !strings.Contains(got, "[redacted]") {
		t.Errorf("Redact = %q", got)
	}
}
