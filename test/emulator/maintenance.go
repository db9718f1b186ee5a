package emulator

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Host maintenance: GET /account/maintenance lists the maintenance Linode schedules on the
// account's Linodes, GET /maintenance/policies the policies a Linode can choose between, and
// ScheduleMaintenance (or POST /_emulator/maintenance) is how a test makes Linode schedule some.
//
// The recording of the list is empty; the fields come from the API's August 2025 OpenAPI update
// (linode-api-docs #1008 and #1009: maintenance_policy_set, description, source, not_before,
// start_time, complete_time, beside the older entity, reason, status, type and when), as linodego
// v1.69 reads them. Filtering accepts the fields the API documents as filterable.
//
// A maintenance is "pending" from when it is scheduled, "started" at its start and "completed"
// after its duration; canceled maintenance, and that of deleted Linodes, is not listed. Types that
// take the Linode down (power_off_on, reboot, cold_migration) power it off at the start and boot
// it again, on a new host for migrations, at the end; live_migration and migrate only move it to
// a new host. Each maintenance has an account event (linode_poweroff_on, linode_reboot or
// linode_migrate) that goes scheduled -> started -> finished with it.

// Maintenance types, as the API names them.
const (
	MaintenanceReboot        = "reboot"
	MaintenanceColdMigration = "cold_migration"
	MaintenanceLiveMigration = "live_migration"
	MaintenanceMigrate       = "migrate"
	MaintenancePowerOffOn    = "power_off_on"
)

// Maintenance policies a Linode can choose (its maintenance_policy).
const (
	PolicyMigrate    = "linode/migrate"
	PolicyPowerOffOn = "linode/power_off_on"
)

// Maintenance statuses.
const (
	maintenancePending   = "pending"
	maintenanceStarted   = "started"
	maintenanceCompleted = "completed"
)

// Maintenance descriptions: the API tells planned maintenance from emergency maintenance.
const (
	DescriptionScheduled = "Scheduled Maintenance"
	DescriptionEmergency = "Emergency Maintenance"
)

// DefaultMaintenanceDuration is how long a maintenance lasts when the test does not say.
const DefaultMaintenanceDuration = 30 * time.Minute

// maintenanceFilterFields are the fields the API documents as filterable on maintenance.
var maintenanceFilterFields = []string{"status", "type", "when", "not_before", "start_time", "complete_time", "maintenance_policy_set"}

// Maintenance is work Linode schedules on a Linode's host.
type Maintenance struct {
	// Policy is the maintenance policy the maintenance follows (maintenance_policy_set): one of
	// the Policy* slugs; when empty, the Linode's maintenance_policy.
	Policy string
	// Type is one of the Maintenance* types; when empty, the policy decides: migrate for
	// linode/migrate, power_off_on for linode/power_off_on.
	Type string
	// StartsIn is how long from now, on the emulator's clock, the maintenance starts. Tests that
	// run the emulator on the real clock with scaled delays scale it the same way.
	StartsIn time.Duration
	// Duration is how long it lasts (DefaultMaintenanceDuration when zero).
	Duration time.Duration
	// Reason is the API's explanation; a generic one when empty.
	Reason string
	// Description is DescriptionScheduled (the default) or DescriptionEmergency.
	Description string
}

// MaintenanceInfo is a scheduled maintenance as ScheduleMaintenance placed it.
type MaintenanceInfo struct {
	LinodeID int       `json:"linode_id"`
	Type     string    `json:"type"`
	Policy   string    `json:"maintenance_policy_set"`
	When     time.Time `json:"when"`
	Status   string    `json:"status"`
}

type maintenanceEntry struct {
	LinodeID    int
	Type        string
	Status      string
	Reason      string
	Description string
	Source      string
	Policy      string
	When        time.Time
	Started     time.Time
	Completed   time.Time
	Duration    time.Duration
	event       *accountEvent
}

// takesLinodeDown reports the types whose maintenance powers the Linode off.
func takesLinodeDown(maintenanceType string) bool {
	return maintenanceType != MaintenanceLiveMigration && maintenanceType != MaintenanceMigrate
}

// downStatus is the Linode's status while maintenance of the type holds it down.
func downStatus(maintenanceType string) string {
	switch maintenanceType {
	case MaintenanceReboot:
		return statusRebooting
	case MaintenanceColdMigration:
		return statusMigrating
	}
	return statusOffline
}

func maintenanceAction(maintenanceType string) string {
	switch maintenanceType {
	case MaintenancePowerOffOn:
		return actionPowerOffOn
	case MaintenanceReboot:
		return actionLinodeReboot
	}
	return actionLinodeMigrate
}

var maintenanceTypes = []string{MaintenanceReboot, MaintenanceColdMigration, MaintenanceLiveMigration, MaintenanceMigrate, MaintenancePowerOffOn}

// ScheduleMaintenance has Linode schedule maintenance on a Linode, starting StartsIn from now on
// the emulator's clock, and returns it as listed.
func (e *Emulator) ScheduleMaintenance(linodeID int, m Maintenance) (info MaintenanceInfo, err error) {
	e.writing(func() { info, err = e.scheduleMaintenance(linodeID, m) })
	return info, err
}

func (e *Emulator) scheduleMaintenance(linodeID int, m Maintenance) (MaintenanceInfo, error) {
	in, ok := e.st.instances[linodeID]
	if !ok {
		return MaintenanceInfo{}, fmt.Errorf("schedule maintenance: Linode %d not found", linodeID)
	}
	if m.Policy == "" {
		m.Policy = in.MaintenancePolicy
	}
	if err := validateMaintenancePolicy(&m.Policy); err != nil {
		return MaintenanceInfo{}, fmt.Errorf("schedule maintenance: policy %q is not one of %s, %s", m.Policy, PolicyMigrate, PolicyPowerOffOn)
	}
	if m.Type == "" {
		m.Type = MaintenanceMigrate
		if m.Policy == PolicyPowerOffOn {
			m.Type = MaintenancePowerOffOn
		}
	}
	if !slices.Contains(maintenanceTypes, m.Type) {
		return MaintenanceInfo{}, fmt.Errorf("schedule maintenance: type %q is not one of %v", m.Type, maintenanceTypes)
	}
	if m.StartsIn < 0 || m.Duration < 0 {
		return MaintenanceInfo{}, fmt.Errorf("schedule maintenance: starts_in and duration must not be negative")
	}
	now := e.clock.Now()
	entry := &maintenanceEntry{
		LinodeID: linodeID, Type: m.Type, Status: maintenancePending, Source: "platform",
		Reason: m.Reason, Description: m.Description, Policy: m.Policy,
		When: now.Add(m.StartsIn), Duration: m.Duration,
	}
	if entry.Reason == "" {
		entry.Reason = "Linode is upgrading the host this Linode runs on."
	}
	if entry.Description == "" {
		entry.Description = DescriptionScheduled
	}
	if entry.Duration == 0 {
		entry.Duration = DefaultMaintenanceDuration
	}
	entry.event = e.recordEvent(maintenanceAction(entry.Type), eventScheduled, "", in, "", now)
	entry.event.maintenance = entry
	e.st.maintenances = append(e.st.maintenances, entry)
	e.st.at(entry.When, func(at time.Time) { e.startMaintenance(entry, at) })
	return entry.info(), nil
}

func (m *maintenanceEntry) info() MaintenanceInfo {
	return MaintenanceInfo{LinodeID: m.LinodeID, Type: m.Type, Policy: m.Policy, When: m.When, Status: m.Status}
}

// CancelMaintenance cancels the Linode's maintenance that has not started and reports how many
// it canceled; canceled maintenance is no longer listed.
func (e *Emulator) CancelMaintenance(linodeID int) (canceled int) {
	e.writing(func() {
		before := len(e.st.maintenances)
		e.st.maintenances = slices.DeleteFunc(e.st.maintenances, func(m *maintenanceEntry) bool {
			return m.LinodeID == linodeID && m.Status == maintenancePending
		})
		canceled = before - len(e.st.maintenances)
	})
	return canceled
}

// startMaintenance begins a maintenance, unless it was canceled or its Linode is gone, in which
// case nothing is left to list.
func (e *Emulator) startMaintenance(m *maintenanceEntry, at time.Time) {
	in, exists := e.st.instances[m.LinodeID]
	if !slices.Contains(e.st.maintenances, m) || !exists {
		e.st.maintenances = slices.DeleteFunc(e.st.maintenances, func(other *maintenanceEntry) bool { return other == m })
		return
	}
	m.Status, m.Started = maintenanceStarted, at
	m.event.Status = eventStarted
	if takesLinodeDown(m.Type) {
		e.setStatus(in, downStatus(m.Type), at)
	}
	e.st.at(at.Add(m.Duration), func(at time.Time) { e.completeMaintenance(m, at) })
}

func (e *Emulator) completeMaintenance(m *maintenanceEntry, at time.Time) {
	m.Status, m.Completed = maintenanceCompleted, at
	m.event.finish(at)
	in, exists := e.st.instances[m.LinodeID]
	if !exists {
		return
	}
	if m.Type != MaintenanceReboot && m.Type != MaintenancePowerOffOn {
		in.HostUUID = e.st.hex(40)
	}
	if takesLinodeDown(m.Type) && in.Status == downStatus(m.Type) {
		e.setStatus(in, statusBooting, at)
		e.finishBoot(in, at, e.cfg.delays.Booting)
	}
}

type maintenanceWire struct {
	Entity               eventEntityWire `json:"entity"`
	Reason               string          `json:"reason"`
	Status               string          `json:"status"`
	Type                 string          `json:"type"`
	MaintenancePolicySet string          `json:"maintenance_policy_set"`
	Description          string          `json:"description"`
	Source               string          `json:"source"`
	When                 *apiTime        `json:"when"`
	NotBefore            *apiTime        `json:"not_before"`
	StartTime            *apiTime        `json:"start_time"`
	CompleteTime         *apiTime        `json:"complete_time"`
}

// listMaintenances answers GET /account/maintenance, in the order Linode scheduled them.
func (e *Emulator) listMaintenances(*http.Request) (any, *apiError) {
	items := make([]maintenanceWire, 0, len(e.st.maintenances))
	for _, m := range e.st.maintenances {
		in, exists := e.st.instances[m.LinodeID]
		if !exists {
			continue
		}
		items = append(items, maintenanceWire{
			Entity: linodeEntity(in.ID, in.Label), Reason: m.Reason, Status: m.Status, Type: m.Type,
			MaintenancePolicySet: m.Policy, Description: m.Description, Source: m.Source,
			When: timeOrNil(m.When), NotBefore: timeOrNil(m.When),
			StartTime: timeOrNil(m.Started), CompleteTime: timeOrNil(m.Completed),
		})
	}
	return mustList(filterableList(items, maintenanceFilterFields))
}

type maintenancePolicyWire struct {
	Slug                  string `json:"slug"`
	Label                 string `json:"label"`
	Description           string `json:"description"`
	Type                  string `json:"type"`
	NotificationPeriodSec int    `json:"notification_period_sec"`
	IsDefault             bool   `json:"is_default"`
}

// maintenancePolicies are the policies GET /maintenance/policies lists (TestMaintenancePolicies_List).
var maintenancePolicies = []maintenancePolicyWire{
	{
		Slug: PolicyMigrate, Label: "Migrate", Type: "migrate", NotificationPeriodSec: 10800, IsDefault: true,
		Description: "Migrates the Linode to a new host while it remains fully operational. Recommended for maximizing availability.",
	},
	{
		Slug: PolicyPowerOffOn, Label: "Power Off / Power On", Type: "power_off_on", NotificationPeriodSec: 604800,
		Description: "Powers off the Linode at the start of the maintenance event and reboots it once the maintenance finishes. Recommended for maximizing performance.",
	},
}

func (e *Emulator) listMaintenancePolicies(*http.Request) (any, *apiError) {
	return mustList(newList(maintenancePolicies, maintenancePolicyWire{}))
}

// validateMaintenancePolicy checks a maintenance_policy in a Linode create or update, with the
// API's answer to anything but a policy's slug.
func validateMaintenancePolicy(policy *string) *apiError {
	if policy == nil || slices.ContainsFunc(maintenancePolicies, func(p maintenancePolicyWire) bool { return p.Slug == *policy }) {
		return nil
	}
	return errInvalid("maintenance_policy", "Unsupported maintenance policy slug format.")
}
