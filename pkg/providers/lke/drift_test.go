package lke_test

import (
	"context"
	"strings"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
)

// TestAnUpgradeOfTheControlPlaneDriftsEveryNode upgrades the cluster on each tier and checks that
// the class's recorded version follows the cluster, and that a node on the old version drifts
// then, and not before: on the standard tier by the version its kubelet reports, on the
// enterprise tier by its pool's version.
func TestAnUpgradeOfTheControlPlaneDriftsEveryNode(t *testing.T) {
	for _, tt := range []struct {
		tier lke.Tier
		next string
	}{
		{tier: lke.TierStandard, next: "1.99"},
		{tier: lke.TierEnterprise, next: "v1.99.1+lke1"},
	} {
		t.Run(string(tt.tier), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, fixtureOptions{tier: tt.tier, provider: []option.Function[lke.Options]{lke.WithClusterVersionTTL(0)}})
			resolver := lke.NewKubernetesVersionResolver(f.provider)
			class := nodeClass()
			resolve := func() {
				t.Helper()
				if _, err := resolver.Reconcile(ctx, class); err != nil {
					t.Fatal(err)
				}
			}
			created, err := f.provider.Create(ctx, class, nodeClaim("default-upgrade"), plans())
			if err != nil {
				t.Fatal(err)
			}
			drifted := func(kubeletVersion string) cloudprovider.DriftReason {
				t.Helper()
				node, err := f.provider.Get(ctx, created.ProviderID())
				if err != nil {
					t.Fatal(err)
				}
				node.KubeletVersion = kubeletVersion
				reason, err := f.provider.IsDrifted(ctx, class, node)
				if err != nil {
					t.Fatal(err)
				}
				return reason
			}
			installed := "v" + minor(f.cluster.K8sVersion) + ".4"

			resolve()
			if want := minor(f.cluster.K8sVersion); class.Status.KubernetesVersion != want {
				t.Fatalf("status.kubernetesVersion %q, want the cluster's %q", class.Status.KubernetesVersion, want)
			}
			if reason := drifted(installed); reason != "" {
				t.Fatalf("a node on the cluster's version drifted: %s", reason)
			}

			f.emulator.ReleaseLKEVersion(string(tt.tier), tt.next)
			if _, err := f.client.UpdateLKECluster(ctx, f.cluster.ID, linodego.LKEClusterUpdateOptions{K8sVersion: tt.next}); err != nil {
				t.Fatal(err)
			}
			if reason := drifted(installed); reason != "" {
				t.Fatalf("drifted (%s) before the class recorded the new version: core re-checks when the class changes", reason)
			}
			resolve()
			if class.Status.KubernetesVersion != "1.99" {
				t.Fatalf("status.kubernetesVersion %q after the upgrade, want 1.99", class.Status.KubernetesVersion)
			}
			if reason := drifted(installed); reason != lke.DriftReasonKubernetesVersion {
				t.Fatalf("a node on the old version gave %q, want %s", reason, lke.DriftReasonKubernetesVersion)
			}
			if tt.tier == lke.TierStandard {
				if reason := drifted(""); reason != "" {
					t.Fatalf("a node whose kubelet has not reported drifted: %s", reason)
				}
				if reason := drifted("v1.99.2"); reason != "" {
					t.Fatalf("a recycled node on the new version drifted: %s", reason)
				}
			}
		})
	}
}

// minor is the "<major>.<minor>" of the API's version spellings ("1.33", "v1.33.4+lke1").
func minor(version string) string {
	return strings.Join(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)[:2], ".")
}
