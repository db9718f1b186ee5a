package nodeclass

import (
	"strings"
	"testing"

	"github.com/linode/linodego"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Every region of the emulator's catalogue lists the "Maintenance Policy" capability; recordings of
// the beta show regions without it, whose refusal is checked here.
func TestMaintenancePolicyRefusal(t *testing.T) {
	for _, tc := range []struct {
		name         string
		lkeMode      bool
		capabilities []string
		wantReason   string
		wantInMsg    string
	}{
		{"instance mode, region offers policies", false, []string{"Linodes", linodego.CapabilityMaintenancePolicy}, "", ""},
		{"instance mode, region without the capability", false, []string{"Linodes", "Kubernetes"}, ReasonMaintenancePolicyNotInRegion, "Linodes in ap-west cannot choose"},
		{"LKE mode", true, nil, ReasonMaintenancePolicyNotInLKE, "LKE node pools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := maintenancePolicyRefusal(v1.MaintenancePolicyPowerOffOn, tc.lkeMode, "ap-west", tc.capabilities)
			if reason != tc.wantReason || !strings.Contains(message, tc.wantInMsg) {
				t.Fatalf("refusal %q %q, want %q containing %q", reason, message, tc.wantReason, tc.wantInMsg)
			}
			if reason != "" && !strings.Contains(message, "remove maintenancePolicy") {
				t.Fatalf("message %q does not say what to do", message)
			}
		})
	}
}
