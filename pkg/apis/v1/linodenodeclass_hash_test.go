package v1_test

import (
	"testing"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

func TestHashChangesWithTheFieldsOfTheModeOnly(t *testing.T) {
	base := func() *v1.LinodeNodeClass {
		return &v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Tags:       []v1.Tag{"team-a", "env-prod"},
			FirewallID: lo.ToPtr(42),
			Image:      lo.ToPtr("linode/ubuntu24.04"),
		}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1.LinodeNodeClass)
		// drifted are the modes in which the change makes a node drift.
		drifted []mode.Mode
	}{
		{"identical spec", func(*v1.LinodeNodeClass) {}, nil},
		{"tags reordered", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = []v1.Tag{"env-prod", "team-a"} }, nil},
		{"status and metadata changed", func(nc *v1.LinodeNodeClass) {
			nc.Name = "other"
			nc.Status.Firewall = &v1.ResolvedFirewall{ID: 42}
		}, nil},
		{"firewall changed", func(nc *v1.LinodeNodeClass) { nc.Spec.FirewallID = lo.ToPtr(43) }, mode.All},
		{"tag added", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = append(nc.Spec.Tags, "cost-x") }, mode.All},
		{"kubelet max pods set", func(nc *v1.LinodeNodeClass) {
			nc.Spec.Kubelet = &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50)}
		}, mode.All},
		{"version pinned", func(nc *v1.LinodeNodeClass) { nc.Spec.LKEK8sVersion = lo.ToPtr("1.31") }, []mode.Mode{mode.LKE}},
		{"update strategy set", func(nc *v1.LinodeNodeClass) { nc.Spec.UpdateStrategy = lo.ToPtr(v1.UpdateStrategyOnRecycle) }, []mode.Mode{mode.LKE}},
		{"image changed", func(nc *v1.LinodeNodeClass) { nc.Spec.Image = lo.ToPtr("linode/debian12") }, []mode.Mode{mode.Instance}},
		{"user data set", func(nc *v1.LinodeNodeClass) { nc.Spec.UserData = lo.ToPtr("#cloud-config\n") }, []mode.Mode{mode.Instance}},
		{"authorized keys set", func(nc *v1.LinodeNodeClass) { nc.Spec.AuthorizedKeys = []string{"ssh-ed25519 AAAA"} }, []mode.Mode{mode.Instance}},
		{"maintenance policy set", func(nc *v1.LinodeNodeClass) { nc.Spec.MaintenancePolicy = lo.ToPtr(v1.MaintenancePolicyMigrate) }, []mode.Mode{mode.Instance}},
	} {
		for _, m := range mode.All {
			t.Run(tc.name+" in "+string(m)+" mode", func(t *testing.T) {
				changed := base()
				tc.mutate(changed)
				want := lo.Contains(tc.drifted, m)
				if drifted := base().Hash(m) != changed.Hash(m); drifted != want {
					t.Fatalf("hash changed = %v, want %v (%s vs %s)", drifted, want, base().Hash(m), changed.Hash(m))
				}
			})
		}
	}
}
