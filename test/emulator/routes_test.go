package emulator

import (
	"context"
	"testing"

	"github.com/linode/linodego"
)

// TestCatalogueRoutes exercises the read-only catalogue through linodego.
func TestCatalogueRoutes(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"ListRegions", func(t *testing.T) {
			regions, err := c.ListRegions(ctx, nil)
			if err != nil || len(regions) < 30 {
				t.Fatalf("regions: %d, %v", len(regions), err)
			}
		}},
		{"ListRegionsVPCAvailability", func(t *testing.T) {
			availability, err := c.ListRegionsVPCAvailability(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			available := map[string]bool{}
			for _, a := range availability {
				available[a.Region] = a.Available
			}
			if len(available) < 30 || !available["us-ord"] || available["us-east"] {
				t.Fatalf("VPC availability (us-ord has VPCs, us-east none): %+v", availability)
			}
		}},
		{"GetRegionVPCAvailability", func(t *testing.T) {
			a, err := c.GetRegionVPCAvailability(ctx, "us-ord")
			if err != nil || a.Region != "us-ord" || !a.Available || a.AvailableIPV6PrefixLengths == nil {
				t.Fatalf("us-ord: %+v, %v", a, err)
			}
			if _, err := c.GetRegionVPCAvailability(ctx, "xx-nowhere"); !linodego.IsNotFound(err) {
				t.Fatalf("unknown region: %v", err)
			}
		}},
		{"GetVPCDefaultRanges", func(t *testing.T) {
			// linodego v1 has no method for it (v2.3 has), so through its client's request.
			var ranges struct {
				Default   []string `json:"default_ipv4_ranges"`
				Forbidden []string `json:"forbidden_ipv4_ranges"`
			}
			resp, err := c.R(ctx).SetResult(&ranges).Get("vpcs/default-ranges")
			if err != nil || resp.IsError() || !contains(ranges.Default, "10.0.0.0/8") || !contains(ranges.Forbidden, publicIPv4Range) {
				t.Fatalf("default ranges: %+v, %v %v", ranges, resp, err)
			}
		}},
		{"GetRegion", func(t *testing.T) {
			r, err := c.GetRegion(ctx, "es-mad")
			if err != nil || !contains(r.Capabilities, "Kubernetes Enterprise") {
				t.Fatalf("es-mad: %+v, %v", r, err)
			}
			_, err = c.GetRegion(ctx, "xx-nowhere")
			if !linodego.IsNotFound(err) {
				t.Fatalf("want not found, got %v", err)
			}
		}},
		{"ListRegionsAvailability", func(t *testing.T) {
			av, err := c.ListRegionsAvailability(ctx, nil)
			if err != nil || len(av) < 300 {
				t.Fatalf("availability: %d, %v", len(av), err)
			}
		}},
		{"GetRegionAvailability", func(t *testing.T) {
			av, err := c.GetRegionAvailability(ctx, "us-ord")
			if err != nil || len(av) == 0 {
				t.Fatalf("us-ord availability: %v, %v", av, err)
			}
			for _, a := range av {
				if a.Region != "us-ord" {
					t.Fatalf("entry for another region: %+v", a)
				}
			}
		}},
		{"ListTypes", func(t *testing.T) {
			types, err := c.ListTypes(ctx, nil)
			if err != nil || len(types) < 30 {
				t.Fatalf("types: %d, %v", len(types), err)
			}
		}},
		{"GetType", func(t *testing.T) {
			typ, err := c.GetType(ctx, "g6-standard-1")
			if err != nil {
				t.Fatal(err)
			}
			if typ.Price.Hourly != 0.018 || len(typ.RegionPrices) != 2 || typ.Addons == nil || typ.Addons.Backups == nil {
				t.Fatalf("g6-standard-1 lacks prices or add-ons: %+v", typ)
			}
			if _, err := c.GetType(ctx, "does-not-exist"); !linodego.IsNotFound(err) {
				t.Fatalf("want not found, got %v", err)
			}
		}},
		{"ListImages", func(t *testing.T) {
			images, err := c.ListImages(ctx, nil)
			if err != nil || len(images) == 0 {
				t.Fatalf("images: %d, %v", len(images), err)
			}
		}},
		{"GetImage", func(t *testing.T) {
			img, err := c.GetImage(ctx, "linode/ubuntu22.04")
			if err != nil || img.Label != "Ubuntu 22.04 LTS" {
				t.Fatalf("ubuntu: %+v, %v", img, err)
			}
		}},
		{"ListLKEVersions", func(t *testing.T) {
			v, err := c.ListLKEVersions(ctx, nil)
			if err != nil || len(v) == 0 {
				t.Fatalf("versions: %v, %v", v, err)
			}
			got, err := c.GetLKEVersion(ctx, v[0].ID)
			if err != nil || got.ID != v[0].ID {
				t.Fatalf("GetLKEVersion: %+v, %v", got, err)
			}
		}},
		{"ListLKETypes", func(t *testing.T) {
			types, err := c.ListLKETypes(ctx, nil)
			if err != nil || len(types) != 2 {
				t.Fatalf("LKE types: %v, %v", types, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestNetworkingRoutes exercises firewalls, VPCs, subnets and placement
// groups through linodego.
func TestNetworkingRoutes(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()

	fwID := e.AddFirewall("seeded-fw")
	fw, err := c.CreateFirewall(ctx, linodego.FirewallCreateOptions{Label: "created-fw", Tags: []string{"a"},
		Rules: linodego.FirewallRuleSet{InboundPolicy: "DROP", OutboundPolicy: "ACCEPT"}})
	if err != nil {
		t.Fatal(err)
	}
	fws, err := c.ListFirewalls(ctx, nil)
	if err != nil || len(fws) != 2 {
		t.Fatalf("firewalls: %v, %v", fws, err)
	}
	got, err := c.GetFirewall(ctx, fwID)
	if err != nil || got.Label != "seeded-fw" {
		t.Fatalf("GetFirewall: %+v, %v", got, err)
	}
	if err := c.DeleteFirewall(ctx, fw.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetFirewall(ctx, fw.ID); !linodego.IsNotFound(err) {
		t.Fatalf("deleted firewall still found: %v", err)
	}

	vpcID, err := e.AddVPC("seeded-vpc", "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddVPCSubnet(vpcID, "seeded-subnet", "10.0.0.0/24"); err != nil {
		t.Fatal(err)
	}
	created, err := c.CreateVPC(ctx, linodego.VPCCreateOptions{
		Label: "vpc2", Region: "us-iad",
		Subnets: []linodego.VPCSubnetCreateOptions{{Label: "s1", IPv4: "192.168.0.0/25"}},
	})
	if err != nil || len(created.Subnets) != 1 {
		t.Fatalf("CreateVPC: %+v, %v", created, err)
	}
	if _, err := c.CreateVPC(ctx, linodego.VPCCreateOptions{Label: "x", Region: "us-east"}); err == nil {
		t.Fatal("VPC created in a region without VPCs")
	} else {
		wantField(t, err, "region")
	}
	if _, err := c.CreateVPC(ctx, linodego.VPCCreateOptions{Label: "bad_label", Region: "us-iad"}); err == nil {
		t.Fatal("VPC created with a label Linode refuses")
	} else {
		wantField(t, err, "label")
	}
	vpcs, err := c.ListVPCs(ctx, nil)
	if err != nil || len(vpcs) != 2 {
		t.Fatalf("ListVPCs: %v, %v", vpcs, err)
	}
	sub, err := c.CreateVPCSubnet(ctx, linodego.VPCSubnetCreateOptions{Label: "s2", IPv4: "10.0.1.0/24"}, vpcID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVPCSubnet(ctx, linodego.VPCSubnetCreateOptions{Label: "bad label", IPv4: "10.0.2.0/24"}, vpcID); err == nil {
		t.Fatal("subnet created with a label Linode refuses")
	} else {
		wantField(t, err, "label")
	}
	subs, err := c.ListVPCSubnets(ctx, vpcID, nil)
	if err != nil || len(subs) != 2 {
		t.Fatalf("ListVPCSubnets: %v, %v", subs, err)
	}
	if s, err := c.GetVPCSubnet(ctx, vpcID, sub.ID); err != nil || s.Label != "s2" {
		t.Fatalf("GetVPCSubnet: %+v, %v", s, err)
	}
	if v, err := c.GetVPC(ctx, vpcID); err != nil || len(v.Subnets) != 2 {
		t.Fatalf("GetVPC: %+v, %v", v, err)
	}
	if v, err := c.UpdateVPC(ctx, vpcID, linodego.VPCUpdateOptions{Label: "renamed", Description: "nodes"}); err != nil || v.Label != "renamed" || v.Description != "nodes" {
		t.Fatalf("UpdateVPC: %+v, %v", v, err)
	}
	if _, err := c.UpdateVPC(ctx, vpcID, linodego.VPCUpdateOptions{Label: "two--hyphens"}); err == nil {
		t.Fatal("VPC renamed to a label Linode refuses")
	} else {
		wantField(t, err, "label")
	}
	if s, err := c.UpdateVPCSubnet(ctx, vpcID, sub.ID, linodego.VPCSubnetUpdateOptions{Label: "s2-renamed"}); err != nil || s.Label != "s2-renamed" {
		t.Fatalf("UpdateVPCSubnet: %+v, %v", s, err)
	}
	if err := c.DeleteVPC(ctx, created.ID); err != nil {
		t.Fatal(err)
	}

	pg, err := c.CreatePlacementGroup(ctx, linodego.PlacementGroupCreateOptions{
		Label: "pg", Region: "us-east", PlacementGroupType: linodego.PlacementGroupTypeAntiAffinityLocal,
		PlacementGroupPolicy: linodego.PlacementGroupPolicyFlexible,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdatePlacementGroup(ctx, pg.ID, linodego.PlacementGroupUpdateOptions{Label: "pg2"}); err != nil {
		t.Fatal(err)
	}
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-east", Type: "g6-standard-1", PlacementGroup: &linodego.InstanceCreatePlacementGroupOptions{ID: pg.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if in.PlacementGroup == nil || in.PlacementGroup.Label != "pg2" {
		t.Fatalf("instance placement group: %+v", in.PlacementGroup)
	}
	gotPG, err := c.GetPlacementGroup(ctx, pg.ID)
	if err != nil || len(gotPG.Members) != 1 || gotPG.Members[0].LinodeID != in.ID {
		t.Fatalf("placement group members: %+v, %v", gotPG, err)
	}
	pgs, err := c.ListPlacementGroups(ctx, &linodego.ListOptions{Filter: `{"label": "pg2"}`})
	if err != nil || len(pgs) != 1 {
		t.Fatalf("ListPlacementGroups: %v, %v", pgs, err)
	}
	if err := c.DeletePlacementGroup(ctx, pg.ID); err != nil {
		t.Fatal(err)
	}
}
