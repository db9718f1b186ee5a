package maintenance

import (
	"testing"
	"time"

	"github.com/linode/linodego"
)

func TestDecideMaintenance(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	lead := 2 * time.Hour
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, tc := range []struct {
		name string
		m    linodego.AccountMaintenance
		want Decision
	}{
		{"power off/on within the lead time", linodego.AccountMaintenance{Type: "power_off_on", Status: "pending", NotBefore: at(time.Hour)}, ReplaceBeforeWindow},
		{"power off/on right at the lead time", linodego.AccountMaintenance{Type: "power_off_on", Status: "pending", NotBefore: at(lead)}, ReplaceBeforeWindow},
		{"power off/on beyond the lead time", linodego.AccountMaintenance{Type: "power_off_on", Status: "pending", NotBefore: at(lead + time.Second)}, Wait},
		{"reboot whose start the v4 field alone gives", linodego.AccountMaintenance{Type: "reboot", Status: "pending", When: at(3 * time.Hour)}, Wait}, //nolint:staticcheck // the v4 field
		{"cold migration with no start given", linodego.AccountMaintenance{Type: "cold_migration", Status: "scheduled"}, ReplaceBeforeWindow},
		{"a type Linode adds later", linodego.AccountMaintenance{Type: "warm_migration", Status: "pending", NotBefore: at(time.Hour)}, ReplaceBeforeWindow},
		{"power off/on under way", linodego.AccountMaintenance{Type: "power_off_on", Status: "started", StartTime: at(-time.Minute)}, ReplaceNow},
		{"reboot in progress", linodego.AccountMaintenance{Type: "reboot", Status: "in-progress", NotBefore: at(-time.Minute)}, ReplaceNow},
		{"live migration", linodego.AccountMaintenance{Type: "live_migration", Status: "pending", NotBefore: at(time.Minute)}, NoAction},
		{"the migrate policy's migration, under way", linodego.AccountMaintenance{Type: "migrate", Status: "started", NotBefore: at(-time.Minute)}, NoAction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideMaintenance(newEntry(tc.m, 1, now), now, lead); got != tc.want {
				t.Fatalf("decision %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDecideDown(t *testing.T) {
	for _, tc := range []struct {
		name      string
		action    linodego.EventAction
		status    linodego.EventStatus
		nodeReady bool
		want      Decision
	}{
		{"host restarting the Linode", linodego.ActionHostReboot, linodego.EventStarted, false, ReplaceNow},
		{"host restarting the Linode, node not yet seen down", linodego.ActionHostReboot, linodego.EventStarted, true, ReplaceNow},
		{"host restarted the Linode, node not Ready", linodego.ActionHostReboot, linodego.EventFinished, false, ReplaceNow},
		{"host restarted the Linode, node Ready again", linodego.ActionHostReboot, linodego.EventFinished, true, ReplaceDraining},
		{"watchdog restarted the Linode, node Ready again", linodego.ActionLassieReboot, linodego.EventFinished, true, ReplaceDraining},
		{"powered off, whatever the node says", linodego.ActionLinodeShutdown, linodego.EventFinished, true, ReplaceNow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideDown(linodego.Event{Action: tc.action, Status: tc.status}, tc.nodeReady); got != tc.want {
				t.Fatalf("decision %s, want %s", got, tc.want)
			}
		})
	}
}
