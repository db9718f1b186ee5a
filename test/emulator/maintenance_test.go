package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
)

// runningLinode creates a Linode and steps the clock until it runs.
func runningLinode(t *testing.T, c *linodego.Client, clk interface{ Step(time.Duration) }, opts linodego.InstanceCreateOptions) *linodego.Instance {
	t.Helper()
	if opts.Region == "" {
		opts.Region, opts.Type = "us-ord", "g6-standard-2"
	}
	in, err := c.CreateInstance(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)
	got, err := c.GetInstance(context.Background(), in.ID)
	if err != nil || got.Status != linodego.InstanceRunning {
		t.Fatalf("Linode not running: %+v, %v", got, err)
	}
	return got
}

func statusOf(t *testing.T, c *linodego.Client, id int) linodego.InstanceStatus {
	t.Helper()
	in, err := c.GetInstance(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return in.Status
}

func TestMaintenanceLifecycle(t *testing.T) {
	tests := []struct {
		name string
		// policy is the Linode's maintenance policy; typ the maintenance's type ("" follows the policy).
		policy, typ string
		// wantType is the listed type; down whether the Linode is powered off during the window,
		// and downStatus its status then; newHost whether it ends on another host.
		wantType   string
		down       bool
		downStatus linodego.InstanceStatus
		newHost    bool
		action     linodego.EventAction
	}{
		{"power off/on follows the policy", PolicyPowerOffOn, "", MaintenancePowerOffOn, true, linodego.InstanceOffline, false, linodego.ActionLinodePowerOffOn},
		{"migrate follows the policy", PolicyMigrate, "", MaintenanceMigrate, false, linodego.InstanceRunning, true, linodego.ActionLinodeMigrate},
		{"live migration", PolicyMigrate, MaintenanceLiveMigration, MaintenanceLiveMigration, false, linodego.InstanceRunning, true, linodego.ActionLinodeMigrate},
		{"cold migration", PolicyMigrate, MaintenanceColdMigration, MaintenanceColdMigration, true, linodego.InstanceMigrating, true, linodego.ActionLinodeMigrate},
		{"reboot", PolicyPowerOffOn, MaintenanceReboot, MaintenanceReboot, true, linodego.InstanceRebooting, false, linodego.ActionLinodeReboot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, c, clk := startEmulator(t)
			ctx := context.Background()
			var kubelet eventLog
			e.OnInstanceEvent(kubelet.add)
			in := runningLinode(t, c, clk, linodego.InstanceCreateOptions{MaintenancePolicy: &tt.policy})

			scheduled, err := e.ScheduleMaintenance(in.ID, Maintenance{Type: tt.typ, StartsIn: time.Hour, Duration: 20 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if scheduled.Type != tt.wantType || scheduled.Policy != tt.policy || !scheduled.When.Equal(epoch.Add(2*time.Minute+30*time.Second+time.Hour)) {
				t.Fatalf("scheduled: %+v", scheduled)
			}
			list, err := c.ListMaintenances(ctx, nil)
			if err != nil || len(list) != 1 {
				t.Fatalf("list: %+v, %v", list, err)
			}
			m := list[0]
			if m.Entity.ID != in.ID || m.Entity.Type != "linode" || m.Entity.Label != in.Label || m.Status != maintenancePending ||
				m.Type != tt.wantType || m.MaintenancePolicySet != tt.policy || m.Source != "platform" || m.Description != DescriptionScheduled ||
				m.When == nil || !m.When.Equal(scheduled.When) || //nolint:staticcheck // the API still sends when beside not_before
				m.NotBefore == nil || !m.NotBefore.Equal(scheduled.When) || m.StartTime != nil {
				t.Fatalf("pending maintenance: %+v", m)
			}

			clk.Step(time.Hour)
			if got := statusOf(t, c, in.ID); got != tt.downStatus {
				t.Fatalf("status during the window: %s, want %s", got, tt.downStatus)
			}
			list, _ = c.ListMaintenances(ctx, nil)
			if list[0].Status != maintenanceStarted || list[0].StartTime == nil {
				t.Fatalf("started maintenance: %+v", list[0])
			}
			if stopped := kubelet.of(InstanceStopped); tt.down != (len(stopped) == 1) {
				t.Fatalf("kubelet stopped events: %+v", stopped)
			}

			clk.Step(20 * time.Minute)
			clk.Step(DefaultDelays().Booting)
			after, _ := c.GetInstance(ctx, in.ID)
			if after.Status != linodego.InstanceRunning || (after.HostUUID != in.HostUUID) != tt.newHost {
				t.Fatalf("after the window: %s, host %s (was %s)", after.Status, after.HostUUID, in.HostUUID)
			}
			if resumed := kubelet.of(InstanceResumed); tt.down != (len(resumed) == 1) {
				t.Fatalf("kubelet resumed events: %+v", resumed)
			}
			list, _ = c.ListMaintenances(ctx, nil)
			if list[0].Status != maintenanceCompleted || list[0].CompleteTime == nil {
				t.Fatalf("completed maintenance: %+v", list[0])
			}
			events, err := c.ListEvents(ctx, &linodego.ListOptions{Filter: `{"action": "` + string(tt.action) + `", "entity.id": ` + strconv.Itoa(in.ID) + `}`})
			if err != nil || len(events) != 1 {
				t.Fatalf("maintenance events: %+v, %v", events, err)
			}
			if ev := events[0]; ev.Status != linodego.EventFinished || ev.Username != "" || ev.MaintenancePolicySet != tt.policy ||
				ev.NotBefore == nil || ev.StartTime == nil || ev.CompleteTime == nil || ev.Source != "platform" {
				t.Fatalf("maintenance event: %+v", ev)
			}
		})
	}
}

func TestMaintenanceFilteringAndCancellation(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	first := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})
	second := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})
	gone := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})
	for _, m := range []struct {
		id int
		m  Maintenance
	}{
		{first.ID, Maintenance{Type: MaintenancePowerOffOn, StartsIn: time.Minute, Duration: time.Minute}},
		{second.ID, Maintenance{Type: MaintenanceLiveMigration, StartsIn: time.Hour}},
		{gone.ID, Maintenance{Type: MaintenanceReboot, StartsIn: time.Hour}},
	} {
		if _, err := e.ScheduleMaintenance(m.id, m.m); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteInstance(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(3 * time.Minute)

	types := func(filter string) ([]string, error) {
		list, err := c.ListMaintenances(ctx, &linodego.ListOptions{Filter: filter})
		var out []string
		for _, m := range list {
			out = append(out, m.Type)
		}
		return out, err
	}
	for _, tt := range []struct {
		name, filter string
		want         []string
	}{
		{"everything listed but a deleted Linode's", "", []string{MaintenancePowerOffOn, MaintenanceLiveMigration}},
		{"not completed", `{"status": {"+neq": "completed"}}`, []string{MaintenanceLiveMigration}},
		{"by type", `{"type": "power_off_on"}`, []string{MaintenancePowerOffOn}},
		{"by time", `{"when": {"+gt": "` + epoch.Add(time.Hour).Format(timeLayout) + `"}}`, []string{MaintenanceLiveMigration}},
	} {
		got, err := types(tt.filter)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	_, err := types(`{"entity.id": 1}`)
	wantField(t, err, "X-Filter")

	if n := e.CancelMaintenance(second.ID); n != 1 {
		t.Fatalf("canceled %d", n)
	}
	if got, _ := types(""); !slices.Equal(got, []string{MaintenancePowerOffOn}) {
		t.Fatalf("after canceling: %v", got)
	}
	if _, err := e.ScheduleMaintenance(gone.ID, Maintenance{}); err == nil {
		t.Fatal("maintenance scheduled for a deleted Linode")
	}
	if _, err := e.ScheduleMaintenance(first.ID, Maintenance{Type: "upgrade"}); err == nil {
		t.Fatal("unknown maintenance type accepted")
	}
	if _, err := e.ScheduleMaintenance(first.ID, Maintenance{Policy: "linode/sometimes"}); err == nil {
		t.Fatal("unknown maintenance policy accepted")
	}
	// Linode's beta notes that planned maintenance may not follow the Linode's own policy.
	overridden, err := e.ScheduleMaintenance(first.ID, Maintenance{Policy: PolicyPowerOffOn, StartsIn: time.Hour})
	if err != nil || overridden.Policy != PolicyPowerOffOn || overridden.Type != MaintenancePowerOffOn {
		t.Fatalf("maintenance with its own policy: %+v, %v", overridden, err)
	}
}

func TestHostFailure(t *testing.T) {
	for _, tt := range []struct {
		name         string
		restartAfter time.Duration
		wantEnd      linodego.InstanceStatus
	}{
		{"Linode restarts it on another host", 5 * time.Minute, linodego.InstanceRunning},
		{"the Linode stays off", 0, linodego.InstanceOffline},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, c, clk := startEmulator(t)
			ctx := context.Background()
			var kubelet eventLog
			e.OnInstanceEvent(kubelet.add)
			in := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})
			bystander := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})

			down, err := e.FailHost(in.ID, HostFailure{RestartAfter: tt.restartAfter})
			if err != nil || !slices.Equal(down, []int{in.ID}) {
				t.Fatalf("failed host took down %v, %v", down, err)
			}
			if got := statusOf(t, c, in.ID); got != linodego.InstanceOffline {
				t.Fatalf("failed Linode is %s", got)
			}
			if got := statusOf(t, c, bystander.ID); got != linodego.InstanceRunning {
				t.Fatalf("Linode on another host is %s", got)
			}
			if stopped := kubelet.of(InstanceStopped); len(stopped) != 1 || stopped[0].InstanceID != in.ID {
				t.Fatalf("kubelet stopped events: %+v", stopped)
			}
			failures, err := c.ListEvents(ctx, &linodego.ListOptions{Filter: `{"action": "host_reboot", "entity.type": "linode"}`})
			if err != nil || len(failures) != 1 {
				t.Fatalf("host_reboot events: %+v, %v", failures, err)
			}
			if ev := failures[0]; ev.Entity.ID != float64(in.ID) || ev.Status != linodego.EventStarted || ev.Username != "" || ev.Created == nil {
				t.Fatalf("host_reboot event: %+v %+v", ev, ev.Entity)
			}

			clk.Step(5*time.Minute + DefaultDelays().Booting)
			after, _ := c.GetInstance(ctx, in.ID)
			if after.Status != tt.wantEnd {
				t.Fatalf("after the failure: %s, want %s", after.Status, tt.wantEnd)
			}
			event, err := c.GetEvent(ctx, failures[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if restarted := tt.wantEnd == linodego.InstanceRunning; restarted != (event.Status == linodego.EventFinished) ||
				restarted != (after.HostUUID != in.HostUUID) || restarted != (len(kubelet.of(InstanceResumed)) == 1) {
				t.Fatalf("restart: event %s, host %s (was %s), resumed %v", event.Status, after.HostUUID, in.HostUUID, kubelet.of(InstanceResumed))
			}
		})
	}
}

func TestPowerOperationsAndTheirEvents(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	var kubelet eventLog
	e.OnInstanceEvent(kubelet.add)
	in := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})

	wantAPIError(t, c.BootInstance(ctx, in.ID, 0), http.StatusBadRequest)
	if err := c.ShutdownInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := statusOf(t, c, in.ID); got != linodego.InstanceShuttingDown {
		t.Fatalf("shutting down: %s", got)
	}
	clk.Step(DefaultDelays().Booting)
	if got := statusOf(t, c, in.ID); got != linodego.InstanceOffline {
		t.Fatalf("after shutdown: %s", got)
	}
	if err := c.BootInstance(ctx, in.ID, 0); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().Booting)
	if got := statusOf(t, c, in.ID); got != linodego.InstanceRunning {
		t.Fatalf("after boot: %s", got)
	}
	if len(kubelet.of(InstanceStopped)) != 1 || len(kubelet.of(InstanceResumed)) != 1 || len(kubelet.of(InstanceRunning)) != 1 {
		t.Fatalf("kubelet events: %+v", kubelet.events)
	}

	events, err := c.ListEvents(ctx, &linodego.ListOptions{Filter: `{"entity.id": ` + strconv.Itoa(in.ID) + `}`})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range events {
		actions = append(actions, string(ev.Action)+" "+string(ev.Status))
		if ev.Username != eventsUsername || ev.Entity.URL != "/v4/linode/instances/"+strconv.Itoa(in.ID) {
			t.Errorf("event %+v", ev)
		}
	}
	want := []string{"linode_boot finished", "linode_shutdown finished", "linode_create finished"}
	if !slices.Equal(actions, want) {
		t.Fatalf("events newest first: %v, want %v", actions, want)
	}
	since := `{"created": {"+gte": "` + clk.Now().Add(-DefaultDelays().Booting).Format(timeLayout) + `"}, "+order_by": "created"}`
	if recent, err := c.ListEvents(ctx, &linodego.ListOptions{Filter: since}); err != nil || len(recent) != 1 || recent[0].Action != linodego.ActionLinodeBoot {
		t.Fatalf("events since the boot: %+v, %v", recent, err)
	}
	_, err = c.ListEvents(ctx, &linodego.ListOptions{Filter: `{"username": "emulator"}`})
	wantField(t, err, "X-Filter")
	_, err = c.GetEvent(ctx, 1)
	wantAPIError(t, err, http.StatusNotFound)
}

func TestMaintenancePolicies(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()
	policies, err := c.ListMaintenancePolicies(ctx, nil)
	if err != nil || len(policies) != 2 || policies[0].Slug != PolicyMigrate || !policies[0].IsDefault || policies[1].Slug != PolicyPowerOffOn {
		t.Fatalf("policies: %+v, %v", policies, err)
	}
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"})
	if err != nil || in.MaintenancePolicy != PolicyMigrate {
		t.Fatalf("default policy: %+v, %v", in, err)
	}
	invalid := "linode/sometimes"
	_, err = c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", MaintenancePolicy: &invalid})
	if msg := wantField(t, err, "maintenance_policy"); !strings.Contains(msg, "Unsupported maintenance policy slug format.") {
		t.Fatalf("message: %s", msg)
	}
	_, err = c.UpdateInstance(ctx, in.ID, linodego.InstanceUpdateOptions{MaintenancePolicy: &invalid})
	wantField(t, err, "maintenance_policy")
	powerOff := PolicyPowerOffOn
	if updated, err := c.UpdateInstance(ctx, in.ID, linodego.InstanceUpdateOptions{MaintenancePolicy: &powerOff}); err != nil || updated.MaintenancePolicy != PolicyPowerOffOn {
		t.Fatalf("update: %+v, %v", updated, err)
	}
}

func TestMaintenanceAdminEndpoints(t *testing.T) {
	e, c, clk := startEmulator(t)
	in := runningLinode(t, c, clk, linodego.InstanceCreateOptions{})
	call := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	status, out := call("POST", "/_emulator/maintenance", `{"linode_id": `+strconv.Itoa(in.ID)+`, "type": "power_off_on", "starts_in": "1h", "duration": "10m"}`)
	if status != 200 || out["type"] != MaintenancePowerOffOn || out["status"] != maintenancePending {
		t.Fatalf("schedule: %d %v", status, out)
	}
	if status, _ := call("POST", "/_emulator/maintenance", `{"linode_id": `+strconv.Itoa(in.ID)+`, "starts_in": "soon"}`); status != 400 {
		t.Fatalf("bad duration: %d", status)
	}
	if status, out := call("DELETE", "/_emulator/maintenance/"+strconv.Itoa(in.ID), ""); status != 200 || out["canceled"] != 1.0 {
		t.Fatalf("cancel: %d %v", status, out)
	}
	status, out = call("POST", "/_emulator/host-failures", `{"linode_id": `+strconv.Itoa(in.ID)+`}`)
	if status != 200 || len(out["linode_ids"].([]any)) != 1 {
		t.Fatalf("fail host: %d %v", status, out)
	}
	if status, _ := call("POST", "/_emulator/host-failures", `{"linode_id": 1}`); status != 400 {
		t.Fatalf("unknown Linode: %d", status)
	}
}

func TestPlacementGroupComplianceAdminEndpoint(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	pg, err := c.CreatePlacementGroup(ctx, linodego.PlacementGroupCreateOptions{
		Label: "spread", Region: "us-east", PlacementGroupType: linodego.PlacementGroupTypeAntiAffinityLocal,
		PlacementGroupPolicy: linodego.PlacementGroupPolicyFlexible,
	})
	if err != nil {
		t.Fatal(err)
	}
	var members []int
	for range 2 {
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1", PlacementGroup: &linodego.InstanceCreatePlacementGroupOptions{ID: pg.ID}})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, in.ID)
	}
	put := func(path, body string) int {
		req, _ := http.NewRequest(http.MethodPut, e.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	compliance := "/_emulator/placement-groups/" + strconv.Itoa(pg.ID) + "/compliance"
	if status := put(compliance, `{"compliant": false}`); status != http.StatusOK {
		t.Fatalf("break compliance: %d", status)
	}
	got, err := c.GetPlacementGroup(ctx, pg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsCompliant || len(got.Members) != len(members) {
		t.Errorf("a group out of compliance: %+v", got)
	}
	if status := put(compliance, `{"compliant": true}`); status != http.StatusOK {
		t.Fatalf("restore compliance: %d", status)
	}
	if got, err := c.GetPlacementGroup(ctx, pg.ID); err != nil || !got.IsCompliant {
		t.Errorf("a group compliant again: %+v, %v", got, err)
	}
	if status := put("/_emulator/placement-groups/999999/compliance", `{"compliant": false}`); status != http.StatusNotFound {
		t.Errorf("an unknown group: %d", status)
	}
	if status := put(compliance, `{}`); status != http.StatusBadRequest {
		t.Errorf("no compliant: %d", status)
	}
}
