package operator_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// validEnvironment is what the Helm chart sets with the required values given.
var validEnvironment = map[string]string{
	"CLUSTER_NAME": "prod",
	"LINODE_TOKEN": "secret-token-value",
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		// wantProblems are fragments of the expected problems, one per line, in order.
		wantProblems []string
	}{
		{name: "the chart's required values are enough"},
		{
			name:         "nothing set names both required settings",
			env:          map[string]string{"CLUSTER_NAME": "", "LINODE_TOKEN": ""},
			wantProblems: []string{"CLUSTER_NAME is not set", "LINODE_TOKEN is not set"},
		},
		{
			name:         "unknown mode",
			env:          map[string]string{"KARPENTER_MODE": "eks"},
			wantProblems: []string{`KARPENTER_MODE "eks" is not valid: use lke or instance`},
		},
		{
			name:         "instance mode needs a region",
			env:          map[string]string{"KARPENTER_MODE": "instance"},
			wantProblems: []string{"LINODE_REGION is not set"},
		},
		{
			name:         "API URL with the version in it",
			env:          map[string]string{"LINODE_URL": "https://api.linode.com/v4"},
			wantProblems: []string{"includes the API version: drop it and set LINODE_API_VERSION"},
		},
		{
			name:         "plain http to another machine would send the token in clear",
			env:          map[string]string{"LINODE_URL": "http://api.linode.com"},
			wantProblems: []string{`LINODE_URL "http://api.linode.com" is plain http to another machine, which would send the token in clear: use https`},
		},
		{name: "plain http to an emulator on loopback", env: map[string]string{"LINODE_URL": "http://127.0.0.1:8080"}},
		{name: "plain http to localhost", env: map[string]string{"LINODE_URL": "http://localhost:8080"}},
		{name: "plain http to IPv6 loopback", env: map[string]string{"LINODE_URL": "http://[::1]:8080"}},
		{
			name:         "a token file that cannot be read",
			env:          map[string]string{"LINODE_TOKEN": "", "LINODE_TOKEN_FILE": "/nonexistent/token"},
			wantProblems: []string{"LINODE_TOKEN_FILE: reading the Linode API token from /nonexistent/token"},
		},
		{
			name:         "a token and a token file",
			env:          map[string]string{"LINODE_TOKEN_FILE": "/nonexistent/token"},
			wantProblems: []string{"LINODE_TOKEN and LINODE_TOKEN_FILE are both set"},
		},
		{
			name:         "malformed durations of ours and of core's are named, not replaced by defaults",
			env:          map[string]string{"CATALOGUE_REFRESH_INTERVAL": "daily", "BATCH_MAX_DURATION": "10"},
			wantProblems: []string{`BATCH_MAX_DURATION "10" is not valid: use a duration such as 10s`, `CATALOGUE_REFRESH_INTERVAL "daily" is not a duration`},
		},
		{
			name: "maintenance settings that would miss or overrun Linode's limits",
			env:  map[string]string{"MAINTENANCE_POLL_INTERVAL": "1s", "MAINTENANCE_LEAD_TIME": "1s"},
			wantProblems: []string{
				"MAINTENANCE_POLL_INTERVAL 1s is too short: use at least 5s",
				"MAINTENANCE_LEAD_TIME 1s is not longer than MAINTENANCE_POLL_INTERVAL 1s",
			},
		},
		{
			name:         "malformed maintenance lead time",
			env:          map[string]string{"MAINTENANCE_LEAD_TIME": "two hours"},
			wantProblems: []string{`MAINTENANCE_LEAD_TIME "two hours" is not a duration`},
		},
		{
			name:         "core's enumerations say what is valid",
			env:          map[string]string{"LOG_LEVEL": "verbose", "FEATURE_GATES": "NodeRepair=yes"},
			wantProblems: []string{`LOG_LEVEL "verbose" is not valid: use debug, info or error`, `FEATURE_GATES "NodeRepair=yes" is not valid`},
		},
		{
			name:         "the sizing trade-off's settings say what is valid",
			env:          map[string]string{"SIZING_LARGE_FLEET_NODES": "-1", "SIZING_TOLERANCE_PERCENT": "150", "SIZING_TIME_BUDGET": "-1s"},
			wantProblems: []string{`SIZING_LARGE_FLEET_NODES -1 is not valid: use a node count`, `SIZING_TOLERANCE_PERCENT 150 is not valid: use a percentage from 0`, `SIZING_TIME_BUDGET -1s is not valid`},
		},
		{
			name:         "the sizing policy is enabled or disabled",
			env:          map[string]string{"SIZING_POLICY": "off"},
			wantProblems: []string{`SIZING_POLICY "off" is not valid: use enabled or disabled (helm: settings.sizing.policy)`},
		},
		{name: "the sizing policy disabled", env: map[string]string{"SIZING_POLICY": "disabled"}},
		{
			name:         "an unknown flag",
			args:         []string{"--cluster=prod"},
			wantProblems: []string{"flag provided but not defined: -cluster"},
		},
		{
			name:         "the alpha provider's DISABLE_DRY_RUN=true is refused, naming what replaces it",
			env:          map[string]string{"DISABLE_DRY_RUN": "true"},
			wantProblems: []string{"DISABLE_DRY_RUN=true is not supported: LinodeNodeClasses are validated at apply time and by their status conditions"},
		},
		{
			name:         "the alpha provider's memory overhead and ours at once",
			env:          map[string]string{"VM_MEMORY_OVERHEAD_PERCENT": "0.075", "HYPERVISOR_MEMORY_PERCENT": "2.5"},
			wantProblems: []string{"VM_MEMORY_OVERHEAD_PERCENT and HYPERVISOR_MEMORY_PERCENT are both set: keep HYPERVISOR_MEMORY_PERCENT"},
		},
		{
			name:         "the alpha provider's memory overhead is a fraction",
			env:          map[string]string{"VM_MEMORY_OVERHEAD_PERCENT": "7.5"},
			wantProblems: []string{`VM_MEMORY_OVERHEAD_PERCENT "7.5" is not valid: use a fraction from 0 to 0.5`},
		},
		{
			name:         "a cluster endpoint that is not an API server URL",
			env:          map[string]string{"CLUSTER_ENDPOINT": "10.0.0.1:6443"},
			wantProblems: []string{`CLUSTER_ENDPOINT "10.0.0.1:6443" is not the https URL of a Kubernetes API server`},
		},
		{
			name:         "a client timeout of no time",
			env:          map[string]string{"LINODE_CLIENT_TIMEOUT": "0"},
			wantProblems: []string{"LINODE_CLIENT_TIMEOUT 0 is not valid: use a number of seconds"},
		},
		{
			name:         "a rate limit of a class of requests Linode does not have",
			env:          map[string]string{"LINODE_API_RATE_LIMITS": "creates=20/15s"},
			wantProblems: []string{`LINODE_API_RATE_LIMITS: "creates=20/15s" does not name a class of requests`},
		},
		{
			name: "flags override the environment",
			env:  map[string]string{"CLUSTER_NAME": ""},
			args: []string{"--cluster-name=prod"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for key, value := range validEnvironment {
				t.Setenv(key, value)
			}
			for key, value := range tt.env {
				t.Setenv(key, value)
			}
			ctx, err := operator.ParseSettings(context.Background(), tt.args, io.Discard)
			if len(tt.wantProblems) == 0 {
				if err != nil {
					t.Fatalf("ParseSettings: %v", err)
				}
				if got := options.FromContext(ctx).ClusterName; got != "prod" {
					t.Errorf("cluster name in context = %q, want prod", got)
				}
				if got := coreoptions.FromContext(ctx).BatchMaxDuration.String(); got != "10s" {
					t.Errorf("core's batch max duration in context = %s, want the default 10s", got)
				}
				return
			}
			var settingsErr *operator.SettingsError
			if !errors.As(err, &settingsErr) {
				t.Fatalf("ParseSettings error = %v, want a SettingsError", err)
			}
			if len(settingsErr.Problems) != len(tt.wantProblems) {
				t.Fatalf("problems = %q, want %d", settingsErr.Problems, len(tt.wantProblems))
			}
			for i, want := range tt.wantProblems {
				if !strings.Contains(settingsErr.Problems[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, settingsErr.Problems[i], want)
				}
				if strings.Contains(settingsErr.Problems[i], "\n") {
					t.Errorf("problem %d spans several lines: %q", i, settingsErr.Problems[i])
				}
			}
			if strings.Contains(err.Error(), validEnvironment["LINODE_TOKEN"]) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestParseSettingsHelp(t *testing.T) {
	var usage strings.Builder
	_, err := operator.ParseSettings(context.Background(), []string{"--help"}, &usage)
	if !errors.Is(err, operator.ErrHelp) {
		t.Fatalf("ParseSettings(--help) = %v, want ErrHelp", err)
	}
	for _, setting := range []string{"CLUSTER_NAME", "LINODE_TOKEN", "KARPENTER_MODE", "batch-max-duration"} {
		if !strings.Contains(usage.String(), setting) {
			t.Errorf("--help does not mention %s", setting)
		}
	}
}

// TestAlphaEnvironmentIsHonoured: the settings of the alpha provider's configuration reference
// that have a meaning here take effect, under their new name where it changed.
func TestAlphaEnvironmentIsHonoured(t *testing.T) {
	alpha := map[string]string{
		"LINODE_TOKEN": "secret-token-value", "CLUSTER_NAME": "prod", "LINODE_REGION": "us-ord",
		"CLUSTER_ENDPOINT": "https://203.0.113.10:6443", "KARPENTER_MODE": "lke", "LINODE_CLIENT_TIMEOUT": "60",
		"VM_MEMORY_OVERHEAD_PERCENT": "0.075", "DISABLE_DRY_RUN": "false",
	}
	for key, value := range alpha {
		t.Setenv(key, value)
	}
	ctx, err := operator.ParseSettings(context.Background(), nil, io.Discard)
	if err != nil {
		t.Fatalf("ParseSettings: %v", err)
	}
	opts := options.FromContext(ctx)
	if opts.Token != "secret-token-value" || opts.ClusterName != "prod" || opts.Region != "us-ord" || opts.Mode != mode.LKE {
		t.Errorf("token, cluster, region, mode = %q, %q, %q, %q", opts.Token, opts.ClusterName, opts.Region, opts.Mode)
	}
	if opts.ClusterEndpoint != "https://203.0.113.10:6443" || opts.ClientTimeoutSeconds != 60 {
		t.Errorf("cluster endpoint %q, client timeout %ds", opts.ClusterEndpoint, opts.ClientTimeoutSeconds)
	}
	if opts.HypervisorMemoryPercent != 7.5 {
		t.Errorf("VM_MEMORY_OVERHEAD_PERCENT 0.075 read as HYPERVISOR_MEMORY_PERCENT %v, want 7.5", opts.HypervisorMemoryPercent)
	}
	if len(opts.AlphaSettings) != 1 || !strings.Contains(opts.AlphaSettings[0], "HYPERVISOR_MEMORY_PERCENT=7.5") {
		t.Errorf("settings to log under their new name = %q", opts.AlphaSettings)
	}
	if got := operator.ClientOptions(opts).Timeout; got != time.Minute {
		t.Errorf("Linode client timeout = %v, want LINODE_CLIENT_TIMEOUT's 60s", got)
	}
}

// TestRateLimitsSetting: LINODE_API_RATE_LIMITS changes the budgets the client paces a class to,
// and the others keep Linode's published figures.
func TestRateLimitsSetting(t *testing.T) {
	t.Setenv("LINODE_TOKEN", "secret-token-value")
	t.Setenv("CLUSTER_NAME", "prod")
	t.Setenv("LINODE_API_RATE_LIMITS", "lke_pool_create=10/1m")
	ctx, err := operator.ParseSettings(context.Background(), nil, io.Discard)
	if err != nil {
		t.Fatalf("ParseSettings: %v", err)
	}
	budgets := operator.ClientOptions(options.FromContext(ctx)).Budgets
	if got := budgets[linode.ClassPoolCreate]; got != (linode.Budget{Requests: 10, Window: time.Minute}) {
		t.Errorf("LKE pool creates paced to %v, want 10/1m", got)
	}
	if got := budgets[linode.ClassLinodeCreate]; got != linode.DefaultBudgets()[linode.ClassLinodeCreate] {
		t.Errorf("Linode creates paced to %v, want Linode's 20/15s", got)
	}
}
