package instance_test

import (
	"context"
	"testing"

	"github.com/linode/linodego"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

func TestSetMaintenancePolicyReachesTheLinode(t *testing.T) {
	e := test.StartEmulatorForTest(t)
	for _, tc := range []struct {
		name   string
		policy *v1.MaintenancePolicy
		want   string
	}{
		{"power off/on", new(v1.MaintenancePolicyPowerOffOn), emulator.PolicyPowerOffOn},
		{"migrate", new(v1.MaintenancePolicyMigrate), emulator.PolicyMigrate},
		{"unset: the account's default", nil, emulator.PolicyMigrate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2"}
			instance.SetMaintenancePolicy(&opts, &v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{MaintenancePolicy: tc.policy}})
			created, err := e.Client.CreateInstance(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if created.MaintenancePolicy != tc.want {
				t.Fatalf("Linode's maintenance policy %q, want %q", created.MaintenancePolicy, tc.want)
			}
		})
	}
}
