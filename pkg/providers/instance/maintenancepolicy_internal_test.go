package instance

import (
	"strings"
	"testing"

	"github.com/linode/linodego"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Every region of the emulator's catalogue lists the "Maintenance Policy" capability; recordings of
// the beta show regions without it, whose refusal is checked here.
func TestMaintenancePolicyNotOffered(t *testing.T) {
	for _, tc := range []struct {
		name         string
		capabilities []string
		wantInMsg    string
	}{
		{"region offers policies", []string{"Linodes", linodego.CapabilityMaintenancePolicy}, ""},
		{"region without the capability", []string{"Linodes", "Kubernetes"}, "Linodes in ap-west cannot choose"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			message := maintenancePolicyNotOffered(v1.MaintenancePolicyPowerOffOn, "ap-west", tc.capabilities)
			if (message == "") != (tc.wantInMsg == "") || !strings.Contains(message, tc.wantInMsg) {
				t.Fatalf("refusal %q, want one containing %q", message, tc.wantInMsg)
			}
			if message != "" && !strings.Contains(message, `remove maintenancePolicy "linode/power_off_on"`) {
				t.Fatalf("message %q does not say what to do", message)
			}
		})
	}
}
