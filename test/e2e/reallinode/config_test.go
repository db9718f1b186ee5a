package reallinode

import (
	"errors"
	"strings"
	"testing"
)

func environment(values map[string]string) func(string) string {
	return func(name string) string { return values[name] }
}

func TestLoadConfigRefusesWithoutATokenAndSaysWhatItNeeds(t *testing.T) {
	_, err := LoadConfig(environment(map[string]string{"E2E_CLUSTER": "mine"}))
	if !errors.Is(err, ErrNoToken) {
		t.Fatalf("LoadConfig without LINODE_TOKEN: %v, want ErrNoToken", err)
	}
	for _, needed := range []string{"LINODE_TOKEN", "Kubernetes read/write", "Linodes read/write", "Events and Account read only",
		"E2E_CLUSTER", "E2E_ENTERPRISE_CLUSTER", "E2E_TIERS", "E2E_REGION", "E2E_PLAN", "docs/e2e-linode.md", "estimate"} {
		if !strings.Contains(err.Error(), needed) {
			t.Errorf("the refusal does not mention %q:\n%s", needed, err)
		}
	}
}

func TestLoadConfigDefaultsToBothTiersCreatingTheirClusters(t *testing.T) {
	cfg, err := LoadConfig(environment(map[string]string{"LINODE_TOKEN": "secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Tiers, ",") != "standard,enterprise" || cfg.Region != "us-ord" || cfg.Plan != "g6-standard-2" ||
		cfg.URL != "https://api.linode.com" || cfg.Clusters[TierStandard] != "" || cfg.Clusters[TierEnterprise] != "" {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = LoadConfig(environment(map[string]string{"LINODE_TOKEN": "secret", "E2E_TIERS": "enterprise", "E2E_ENTERPRISE_CLUSTER": "prod-like"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Tiers, ",") != "enterprise" || cfg.Clusters[TierEnterprise] != "prod-like" {
		t.Errorf("enterprise only, in a named cluster: %+v", cfg)
	}
	if _, err := LoadConfig(environment(map[string]string{"LINODE_TOKEN": "secret", "E2E_TIERS": "standard,premium"})); err == nil || !strings.Contains(err.Error(), "premium") {
		t.Errorf("an unknown tier: %v, want a refusal naming it", err)
	}
}
