package emulator

import (
	"context"
	"testing"

	"github.com/linode/linodego"
)

func TestFirewallSettings(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	fw := e.AddFirewall("default")

	settings, err := c.GetFirewallSettings(ctx)
	if err != nil || settings.DefaultFirewallIDs.Linode != nil || settings.DefaultFirewallIDs.VPCInterface != nil {
		t.Fatalf("a new account's settings: %+v, %v", settings, err)
	}
	linodeDefault := ptr(fw)
	settings, err = c.UpdateFirewallSettings(ctx, linodego.FirewallSettingsUpdateOptions{
		DefaultFirewallIDs: &linodego.DefaultFirewallIDsOptions{Linode: &linodeDefault},
	})
	if err != nil || settings.DefaultFirewallIDs.Linode == nil || *settings.DefaultFirewallIDs.Linode != fw || settings.DefaultFirewallIDs.NodeBalancer != nil {
		t.Fatalf("only the Linode default set: %+v, %v", settings, err)
	}
	unknown := ptr(fw + 1)
	_, err = c.UpdateFirewallSettings(ctx, linodego.FirewallSettingsUpdateOptions{
		DefaultFirewallIDs: &linodego.DefaultFirewallIDsOptions{NodeBalancer: &unknown},
	})
	wantField(t, err, "default_firewall_ids.nodebalancer")
	var cleared *int
	settings, err = c.UpdateFirewallSettings(ctx, linodego.FirewallSettingsUpdateOptions{
		DefaultFirewallIDs: &linodego.DefaultFirewallIDsOptions{Linode: &cleared},
	})
	if err != nil || settings.DefaultFirewallIDs.Linode != nil {
		t.Fatalf("Linode default cleared: %+v, %v", settings, err)
	}
}

func TestFirewallTemplates(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()
	templates, err := c.ListFirewallTemplates(ctx, nil)
	if err != nil || len(templates) != 2 {
		t.Fatalf("templates: %+v, %v", templates, err)
	}
	public, err := c.GetFirewallTemplate(ctx, "public")
	if err != nil || public.Rules.InboundPolicy != "DROP" || len(public.Rules.Inbound) != 2 || public.Rules.Inbound[0].Ports != "22" {
		t.Fatalf("public template: %+v, %v", public, err)
	}
	if _, err := c.GetFirewallTemplate(ctx, "nowhere"); !linodego.IsNotFound(err) {
		t.Fatalf("unknown template: %v", err)
	}
}

func TestFirewallRuleSetLifecycle(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()
	http := linodego.FirewallRule{Action: "ACCEPT", Label: "allow-http", Ports: "80", Protocol: "TCP", Addresses: linodego.NetworkAddresses{IPv4: &[]string{"0.0.0.0/0"}}}
	https := http
	https.Label, https.Ports = "allow-https", "443"

	if _, err := c.CreateFirewallRuleSet(ctx, linodego.RuleSetCreateOptions{Label: "web", Type: "sideways", Rules: []linodego.FirewallRule{http}}); err == nil {
		t.Fatal("rule set of an unknown type created")
	} else {
		wantField(t, err, "type")
	}
	created, err := c.CreateFirewallRuleSet(ctx, linodego.RuleSetCreateOptions{Label: "web", Type: linodego.FirewallRuleSetTypeInbound, Rules: []linodego.FirewallRule{http}})
	if err != nil || created.Version != 1 || len(created.Rules) != 1 {
		t.Fatalf("created: %+v, %v", created, err)
	}
	label := "web-tls"
	updated, err := c.UpdateFirewallRuleSet(ctx, created.ID, linodego.RuleSetUpdateOptions{Label: &label, Rules: &[]linodego.FirewallRule{https}})
	if err != nil || updated.Version != 2 || updated.Label != label || updated.Rules[0].Ports != "443" || updated.Type != linodego.FirewallRuleSetTypeInbound {
		t.Fatalf("updated: %+v, %v", updated, err)
	}
	if got, err := c.GetFirewallRuleSet(ctx, created.ID); err != nil || got.Version != 2 {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	if err := c.DeleteFirewallRuleSet(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	listed, err := c.ListFirewallRuleSets(ctx, nil)
	if err != nil || len(listed) != 1 || listed[0].Deleted == nil {
		t.Fatalf("a deleted rule set is listed with the time it was deleted: %+v, %v", listed, err)
	}
}
