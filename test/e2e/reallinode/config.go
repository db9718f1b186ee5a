// Package reallinode runs the end-to-end specs of package lifecycle against a real Linode
// account (`make e2e-linode`): on an LKE cluster of each tier that it is named or creates, with
// the provider's controller running on this machine against the cluster's kubeconfig, fetched
// through the Linode API. Everything it makes carries the run's tag (RunTag), and everything
// carrying a run's tag is deleted at the end, on an interrupt, and, for a run killed before it
// could, by the next run's sweep (Sweep). It prices what it will run before it starts (Estimate)
// and what it ran at the end (Ledger), from the catalogue the account's API serves.
//
// docs/e2e-linode.md is the user's page. The pieces that need no Linode account run in
// `make test` against the emulator; the suite itself (suite_test.go) is built only with the
// e2elinode build tag, which `make e2e-linode` sets.
package reallinode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Tiers of LKE, and the Linode API version each needs.
const (
	TierStandard   = "standard"
	TierEnterprise = "enterprise"
)

// APIVersion is the Linode API version the tier's clusters are managed with.
func APIVersion(tier string) string {
	if tier == TierEnterprise {
		return "v4beta"
	}
	return "v4"
}

// Config is what a run is told through its environment.
type Config struct {
	// Token is the Linode API token (LINODE_TOKEN).
	Token string
	// URL is the Linode API's address without the version (LINODE_URL, https://api.linode.com).
	URL string
	// Region is where the clusters it creates run (E2E_REGION, us-ord).
	Region string
	// Tiers are those it runs, in order (E2E_TIERS, "standard,enterprise").
	Tiers []string
	// Clusters are the labels of existing clusters to use, by tier (E2E_CLUSTER for the standard
	// tier, E2E_ENTERPRISE_CLUSTER); a tier without one gets a cluster created for the run.
	Clusters map[string]string
	// Plan is the plan of the nodes the specs launch (E2E_PLAN, g6-standard-2).
	Plan string
}

// Requirements is what the run tells someone who started it without a token.
const Requirements = `make e2e-linode runs the end-to-end specs (test/e2e/lifecycle) against a real Linode account.
It creates LKE clusters and Linodes, which Linode bills: it prints an estimate before it starts and
the cost of what it ran at the end (docs/e2e-linode.md).

Required:
  LINODE_TOKEN            a personal access token with the controller's scopes: Kubernetes read/write,
                          Linodes read/write, Events and Account read only (README, "Linode API token");
                          the account must offer LKE Enterprise for the enterprise tier.
Optional:
  E2E_CLUSTER             label of an existing standard-tier LKE cluster to run in (one is created,
                          and deleted at the end, otherwise); it must not run this provider already
  E2E_ENTERPRISE_CLUSTER  the same for the enterprise tier
  E2E_TIERS               tiers to run, in order (standard,enterprise)
  E2E_REGION              region of the clusters it creates (us-ord): it must offer Kubernetes and
                          Kubernetes Enterprise
  E2E_PLAN                plan of the nodes the specs launch (g6-standard-2)`

// ErrNoToken is LoadConfig's error when LINODE_TOKEN is not set.
var ErrNoToken = errors.New("LINODE_TOKEN is not set")

// LoadConfig reads the run's configuration with getenv (os.Getenv). Without a token it refuses,
// with Requirements.
func LoadConfig(getenv func(string) string) (Config, error) {
	orDefault := func(name, fallback string) string {
		if value := strings.TrimSpace(getenv(name)); value != "" {
			return value
		}
		return fallback
	}
	cfg := Config{
		Token:  strings.TrimSpace(getenv("LINODE_TOKEN")),
		URL:    orDefault("LINODE_URL", "https://api.linode.com"),
		Region: orDefault("E2E_REGION", "us-ord"),
		Plan:   orDefault("E2E_PLAN", "g6-standard-2"),
		Clusters: map[string]string{
			TierStandard:   strings.TrimSpace(getenv("E2E_CLUSTER")),
			TierEnterprise: strings.TrimSpace(getenv("E2E_ENTERPRISE_CLUSTER")),
		},
	}
	if cfg.Token == "" {
		return Config{}, fmt.Errorf("%w\n\n%s", ErrNoToken, Requirements)
	}
	for _, tier := range strings.Split(orDefault("E2E_TIERS", TierStandard+","+TierEnterprise), ",") {
		tier = strings.TrimSpace(tier)
		if tier != TierStandard && tier != TierEnterprise {
			return Config{}, fmt.Errorf("E2E_TIERS: %q is not a tier: use standard, enterprise or both", tier)
		}
		if !slices.Contains(cfg.Tiers, tier) {
			cfg.Tiers = append(cfg.Tiers, tier)
		}
	}
	return cfg, nil
}
