package nodeidentity_test

import (
	"io"
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/nodeidentity"
)

func TestParseOptionsNamesEveryBadSetting(t *testing.T) {
	opts, err := nodeidentity.ParseOptions([]string{"--system-namespace=karpenter"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Namespace != "karpenter" || opts.KeySecretName != "karpenter-bootstrap-token-key" || !opts.LeaderElection ||
		opts.LeaderElectionName != "karpenter-node-identity" || opts.MetricsPort != 8080 || opts.HealthProbePort != 8081 {
		t.Errorf("defaults = %+v", opts)
	}
	_, err = nodeidentity.ParseOptions([]string{"--log-level=verbose", "--metrics-port=0", "--bootstrap-token-key-secret="}, io.Discard)
	if err == nil {
		t.Fatal("bad settings accepted")
	}
	for _, want := range []string{`LOG_LEVEL "verbose" is not valid`, "METRICS_PORT 0 is not a port", "BOOTSTRAP_TOKEN_KEY_SECRET is empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
