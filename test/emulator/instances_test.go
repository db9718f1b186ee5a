package emulator

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
)

func TestInstanceLifecycle(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	var events eventLog
	e.OnInstanceEvent(events.add)
	fw := e.AddFirewall("fw")
	userData := base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))

	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-ord", Type: "g6-standard-2", Label: "worker-1", Image: "linode/ubuntu22.04", AuthorizedKeys: []string{testSSHKey},
		Tags: []string{"karpenter"}, FirewallID: fw, Metadata: &linodego.InstanceMetadataOptions{UserData: userData},
	})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != linodego.InstanceProvisioning || !in.HasUserData || in.Created == nil || in.Specs.VCPUs != 2 {
		t.Fatalf("created instance: %+v", in)
	}
	if got := e.Instances()[0]; got.UserData != userData || got.FirewallID != fw {
		t.Fatalf("user data or firewall not kept: %+v", got)
	}
	steps := []struct {
		step time.Duration
		want linodego.InstanceStatus
	}{
		{DefaultDelays().Provisioning, linodego.InstanceBooting},
		{DefaultDelays().Booting, linodego.InstanceRunning},
	}
	for _, s := range steps {
		clk.Step(s.step)
		got, err := c.GetInstance(ctx, in.ID)
		if err != nil || got.Status != s.want {
			t.Fatalf("want %s, got %+v, %v", s.want, got, err)
		}
	}
	if ev := events.of(InstanceRunning); len(ev) != 1 || ev[0].InstanceID != in.ID || ev[0].Tags[0] != "karpenter" {
		t.Fatalf("running events: %+v", ev)
	}
	fwGot, _ := c.GetFirewall(ctx, fw)
	if len(fwGot.Entities) != 1 || fwGot.Entities[0].ID != in.ID {
		t.Fatalf("firewall entities: %+v", fwGot.Entities)
	}

	updated, err := c.UpdateInstance(ctx, in.ID, linodego.InstanceUpdateOptions{Label: "worker-2", Tags: &[]string{"x"}})
	if err != nil || updated.Label != "worker-2" || updated.Tags[0] != "x" {
		t.Fatalf("update: %+v, %v", updated, err)
	}
	if err := c.RebootInstance(ctx, in.ID, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.GetInstance(ctx, in.ID); got.Status != linodego.InstanceRebooting {
		t.Fatalf("after reboot: %s", got.Status)
	}
	clk.Step(DefaultDelays().Booting)
	if got, _ := c.GetInstance(ctx, in.ID); got.Status != linodego.InstanceRunning {
		t.Fatalf("after reboot delay: %s", got.Status)
	}
	filtered, err := c.ListInstances(ctx, &linodego.ListOptions{Filter: `{"tags": "x"}`})
	if err != nil || len(filtered) != 1 {
		t.Fatalf("filter by tag: %v, %v", filtered, err)
	}
	if err := c.DeleteInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInstance(ctx, in.ID); !linodego.IsNotFound(err) {
		t.Fatalf("deleted instance found: %v", err)
	}
	if ev := events.of(InstanceDeleted); len(ev) != 1 || ev[0].InstanceID != in.ID {
		t.Fatalf("deleted events: %+v", ev)
	}
}

func TestInstanceNotBooted(t *testing.T) {
	_, c, clk := startEmulator(t)
	ctx := context.Background()
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-nanode-1", Booted: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)
	if got, _ := c.GetInstance(ctx, in.ID); got.Status != linodego.InstanceOffline {
		t.Fatalf("booted=false instance is %s", got.Status)
	}
}

func TestInstanceValidation(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	fw := e.AddFirewall("fw")
	ud := &linodego.InstanceMetadataOptions{UserData: base64.StdEncoding.EncodeToString([]byte("x"))}
	tests := []struct {
		name  string
		opts  linodego.InstanceCreateOptions
		field string
	}{
		{"unknown region", linodego.InstanceCreateOptions{Region: "xx-nowhere", Type: "g6-standard-1"}, "region"},
		{"unknown type", linodego.InstanceCreateOptions{Region: "us-east", Type: "g9-huge"}, "type"},
		{"GPU without capability", linodego.InstanceCreateOptions{Region: "us-west", Type: "g1-gpu-rtx6000-1"}, "type"},
		{"long tag", linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1", Tags: []string{strings.Repeat("t", 51)}}, "tags"},
		{"unknown firewall", linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1", FirewallID: fw + 7}, "firewall_id"},
		{"unknown image", linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1", Image: "linode/nope"}, "image"},
		{"user data not base64", linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1", Metadata: &linodego.InstanceMetadataOptions{UserData: "%%%"}}, "metadata.user_data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CreateInstance(ctx, tt.opts)
			wantField(t, err, tt.field)
		})
	}
	if len(e.Instances()) != 0 {
		t.Fatalf("refused instances stored: %+v", e.Instances())
	}
	if _, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1", Metadata: ud}); err != nil {
		t.Fatalf("valid instance refused: %v", err)
	}
}

func TestSetDelaysAppliesToLinodesCreatedAfterwards(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	create := func(label string) int {
		t.Helper()
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: label, Image: "linode/ubuntu22.04", RootPass: "Not-a-real-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	before := create("before")
	e.SetDelays(Delays{Provisioning: time.Hour, Booting: time.Hour})
	if got := e.Delays().Booting; got != time.Hour {
		t.Fatalf("Delays() after SetDelays: booting %s", got)
	}
	after := create("after")

	clk.Step(DefaultDelays().Provisioning + DefaultDelays().Booting)
	for _, tc := range []struct {
		id   int
		want linodego.InstanceStatus
	}{{before, linodego.InstanceRunning}, {after, linodego.InstanceProvisioning}} {
		got, err := c.GetInstance(ctx, tc.id)
		if err != nil || got.Status != tc.want {
			t.Errorf("Linode %s: want %s, got %+v, %v", got.Label, tc.want, got, err)
		}
	}
}
