package emulator

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// newerThanDescription are routes the API gained after the OpenAPI description in
// ../shared/linode-api (version 4.189.0, October 2024), with where they are documented.
var newerThanDescription = map[string]string{
	"GET /maintenance/policies":                         "linode-api-docs openapi.json update of 2025-08-26 (#1008): List maintenance policies",
	"GET /regions/vpc-availability":                     "linodego v1.66.0, ListRegionsVPCAvailability; recording TestRegionsVPCAvailability_List",
	"GET /regions/{regionId}/vpc-availability":          "linodego v1.66.0, GetRegionVPCAvailability; recording TestRegionVPCAvailability_Get",
	"GET /networking/firewalls/settings":                "linodego v1.56.0, GetFirewallSettings; recording TestFirewallSettings_Get",
	"PUT /networking/firewalls/settings":                "linodego v1.56.0, UpdateFirewallSettings; recording TestFirewallSettings_UpdateAllFields",
	"GET /networking/firewalls/templates":               "linodego v1.56.0, ListFirewallTemplates; recording TestFirewallTemplates_List",
	"GET /networking/firewalls/templates/{slug}":        "linodego v1.56.0, GetFirewallTemplate; recording TestFirewallTemplate_Get",
	"GET /networking/firewalls/rulesets":                "linodego v1.63.0, ListFirewallRuleSets; recording TestFirewallRuleSets_CRUD",
	"POST /networking/firewalls/rulesets":               "linodego v1.63.0, CreateFirewallRuleSet; recording TestFirewallRuleSets_CRUD",
	"GET /networking/firewalls/rulesets/{rulesetId}":    "linodego v1.63.0, GetFirewallRuleSet; recording TestFirewallRuleSets_CRUD",
	"PUT /networking/firewalls/rulesets/{rulesetId}":    "linodego v1.63.0, UpdateFirewallRuleSet; recording TestFirewallRuleSets_CRUD",
	"DELETE /networking/firewalls/rulesets/{rulesetId}": "linodego v1.63.0, DeleteFirewallRuleSet; recording TestFirewallRuleSets_CRUD",
	"GET /networking/reserved/ips":                      "linodego v1.41.0, ListReservedIPAddresses; recording TestReservedIPAddresses_EndToEndTest",
	"POST /networking/reserved/ips":                     "linodego v1.41.0, ReserveIPAddress; recording TestReservedIPAddresses_EndToEndTest",
	"GET /networking/reserved/ips/types":                "linodego v2, ListReservedIPTypes; recording TestReservedIPTypes_List",
	"GET /networking/reserved/ips/{address}":            "linodego v1.41.0, GetReservedIPAddress; recording TestReservedIPAddresses_EndToEndTest",
	"PUT /networking/reserved/ips/{address}":            "linodego v2, UpdateReservedIPAddress; recording TestReservedIPAddress_UpdateTags",
	"DELETE /networking/reserved/ips/{address}":         "linodego v1.41.0, DeleteReservedIPAddress; recording TestReservedIPAddresses_EndToEndTest",
	"GET /lke/tiers/{tier}/versions":                    "linodego v1.48.1, ListLKETierVersions; recording TestLKETierVersion_ListAndGet",
	"GET /vpcs/default-ranges":                          "linodego v2.3.0, GetVPCDefaultRanges; recording TestVPC_DefaultRanges",
	// Linode Interfaces: linodego v1.69.1 interfaces.go and Linode's API reference
	// (techdocs.akamai.com/linode-api/reference/post-linode-interface); no recording shows them.
	"GET /linode/instances/{linodeId}/interfaces":                         "linodego v1.69.1, ListInterfaces",
	"POST /linode/instances/{linodeId}/interfaces":                        "linodego v1.69.1, CreateInterface",
	"GET /linode/instances/{linodeId}/interfaces/settings":                "linodego v1.69.1, GetInterfaceSettings",
	"PUT /linode/instances/{linodeId}/interfaces/settings":                "linodego v1.69.1, UpdateInterfaceSettings",
	"GET /linode/instances/{linodeId}/interfaces/{interfaceId}":           "linodego v1.69.1, GetInterface",
	"PUT /linode/instances/{linodeId}/interfaces/{interfaceId}":           "linodego v1.69.1, UpdateInterface",
	"DELETE /linode/instances/{linodeId}/interfaces/{interfaceId}":        "linodego v1.69.1, DeleteInterface",
	"GET /linode/instances/{linodeId}/interfaces/{interfaceId}/firewalls": "linodego v1.69.1, ListInterfaceFirewalls",
}

// TestRoutesExistInOpenAPI checks every route the emulator serves against
// Linode's OpenAPI description. Parameter names follow the description, so
// paths compare verbatim; the admin endpoints are not API routes.
func TestRoutesExistInOpenAPI(t *testing.T) {
	path := sharedFile(t, "openapi.yaml")
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	e := New()
	for _, rt := range e.routes() {
		if _, ok := newerThanDescription[rt.name()]; ok {
			continue
		}
		item := doc.Paths.Find("/{apiVersion}" + rt.path)
		if item == nil {
			t.Errorf("%s: path not in the OpenAPI description", rt.name())
			continue
		}
		if item.GetOperation(rt.method) == nil {
			t.Errorf("%s: method not in the OpenAPI description", rt.name())
		}
	}
}
