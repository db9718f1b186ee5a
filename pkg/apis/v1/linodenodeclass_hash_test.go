package v1_test

import (
	"testing"

	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

func TestHashChangesWithTheSpecOnly(t *testing.T) {
	base := func() *v1.LinodeNodeClass {
		return &v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Tags:       []v1.Tag{"team-a", "env-prod"},
			FirewallID: lo.ToPtr(42),
		}}
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*v1.LinodeNodeClass)
		drifted bool
	}{
		{"identical spec", func(*v1.LinodeNodeClass) {}, false},
		{"tags reordered", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = []v1.Tag{"env-prod", "team-a"} }, false},
		{"status and metadata changed", func(nc *v1.LinodeNodeClass) {
			nc.Name = "other"
			nc.Status.Firewall = &v1.ResolvedFirewall{ID: 42}
		}, false},
		{"firewall changed", func(nc *v1.LinodeNodeClass) { nc.Spec.FirewallID = lo.ToPtr(43) }, true},
		{"tag added", func(nc *v1.LinodeNodeClass) { nc.Spec.Tags = append(nc.Spec.Tags, "cost-x") }, true},
		{"maintenance policy set", func(nc *v1.LinodeNodeClass) { nc.Spec.MaintenancePolicy = lo.ToPtr(v1.MaintenancePolicyMigrate) }, true},
		{"version pinned", func(nc *v1.LinodeNodeClass) { nc.Spec.LKEK8sVersion = lo.ToPtr("1.31") }, true},
		{"kubelet max pods set", func(nc *v1.LinodeNodeClass) {
			nc.Spec.Kubelet = &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50)}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base()
			tc.mutate(changed)
			if drifted := base().Hash() != changed.Hash(); drifted != tc.drifted {
				t.Fatalf("hash changed = %v, want %v (%s vs %s)", drifted, tc.drifted, base().Hash(), changed.Hash())
			}
		})
	}
}
