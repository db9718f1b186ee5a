package emulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// The account-wide firewall objects: the default firewall of each kind of entity, the templates
// Linode offers, and rule sets that firewalls can share.

// firewallDefaultKinds are the entities an account can give a default firewall.
var firewallDefaultKinds = []string{"linode", "nodebalancer", "public_interface", "vpc_interface"}

type firewallSettingsWire struct {
	DefaultFirewallIDs map[string]*int `json:"default_firewall_ids"`
}

func (e *Emulator) firewallSettingsToWire() firewallSettingsWire {
	w := firewallSettingsWire{DefaultFirewallIDs: map[string]*int{}}
	for _, kind := range firewallDefaultKinds {
		w.DefaultFirewallIDs[kind] = e.st.defaultFirewalls[kind]
	}
	return w
}

func (e *Emulator) getFirewallSettings(*http.Request) (any, *apiError) {
	return e.firewallSettingsToWire(), nil
}

// updateFirewallSettings sets the kinds the request names (null clears one) and leaves the
// others.
func (e *Emulator) updateFirewallSettings(r *http.Request) (any, *apiError) {
	var req struct {
		DefaultFirewallIDs map[string]*int `json:"default_firewall_ids"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	for kind, id := range req.DefaultFirewallIDs {
		field := "default_firewall_ids." + kind
		if !slices.Contains(firewallDefaultKinds, kind) {
			return nil, errInvalid(field, "Unknown kind of entity")
		}
		if id != nil {
			if err := e.validateFirewall(field, *id); err != nil {
				return nil, err
			}
		}
	}
	for kind, id := range req.DefaultFirewallIDs {
		e.st.defaultFirewalls[kind] = id
	}
	return e.firewallSettingsToWire(), nil
}

type firewallTemplateWire struct {
	Slug  string          `json:"slug"`
	Rules json.RawMessage `json:"rules"`
}

// firewallTemplates are the templates Linode offers every account: SSH and ping from anywhere
// ("public"), and those plus everything from the private ranges VPCs use ("vpc").
var firewallTemplates = []firewallTemplateWire{
	{Slug: "vpc", Rules: json.RawMessage(`{"inbound": [` +
		`{"protocol": "TCP", "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}, "action": "ACCEPT", "label": "accept-inbound-ssh", "ports": "22", "description": "Accept inbound SSH"}, ` +
		`{"protocol": "ICMP", "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}, "action": "ACCEPT", "label": "accept-inbound-icmp", "description": "Accept inbound ICMP"}, ` +
		`{"protocol": "TCP", "addresses": {"ipv4": ["10.0.0.0/8", "192.168.0.0/17", "172.16.0.0/12"]}, "action": "ACCEPT", "label": "accept-inbound-rfc1918", "ports": "1-65535", "description": "Accept inbound RFC-1918"}, ` +
		`{"protocol": "UDP", "addresses": {"ipv4": ["10.0.0.0/8", "192.168.0.0/17", "172.16.0.0/12"]}, "action": "ACCEPT", "label": "accept-inbound-rfc1918", "ports": "1-65535", "description": "Accept inbound RFC-1918"}` +
		`], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"}`)},
	{Slug: "public", Rules: json.RawMessage(`{"inbound": [` +
		`{"protocol": "TCP", "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}, "action": "ACCEPT", "label": "accept-inbound-ssh", "ports": "22", "description": "Accept inbound SSH"}, ` +
		`{"protocol": "ICMP", "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}, "action": "ACCEPT", "label": "accept-inbound-icmp", "description": "Accept inbound ICMP"}` +
		`], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"}`)},
}

func (e *Emulator) listFirewallTemplates(*http.Request) (any, *apiError) {
	return mustList(newList(firewallTemplates, firewallTemplateWire{}))
}

func (e *Emulator) getFirewallTemplate(r *http.Request) (any, *apiError) {
	for _, t := range firewallTemplates {
		if t.Slug == r.PathValue("slug") {
			return t, nil
		}
	}
	return nil, errNotFound()
}

// ruleSet is a named list of firewall rules of one direction. Deleting one marks it deleted:
// the API goes on listing it, with the time.
type ruleSet struct {
	ID               int
	Version          int
	Label            string
	Description      string
	Type             string
	Rules            json.RawMessage
	Created, Updated time.Time
	Deleted          *time.Time
}

type ruleSetWire struct {
	ID               int             `json:"id"`
	Version          int             `json:"version"`
	Label            string          `json:"label"`
	Description      string          `json:"description"`
	Type             string          `json:"type"`
	IsServiceDefined bool            `json:"is_service_defined"`
	Rules            json.RawMessage `json:"rules"`
	Created          apiTime         `json:"created"`
	Updated          apiTime         `json:"updated"`
	Deleted          *apiTime        `json:"deleted"`
}

func ruleSetToWire(rs *ruleSet) ruleSetWire {
	w := ruleSetWire{
		ID: rs.ID, Version: rs.Version, Label: rs.Label, Description: rs.Description, Type: rs.Type,
		Rules: rs.Rules, Created: apiTime(rs.Created), Updated: apiTime(rs.Updated),
	}
	if rs.Deleted != nil {
		deleted := apiTime(*rs.Deleted)
		w.Deleted = &deleted
	}
	return w
}

type ruleSetRequest struct {
	Label       *string          `json:"label"`
	Description *string          `json:"description"`
	Type        string           `json:"type"`
	Rules       *json.RawMessage `json:"rules"`
}

func validateRuleSet(req ruleSetRequest) *apiError {
	if req.Label != nil && (len(*req.Label) < 3 || len(*req.Label) > 32) {
		return errInvalid("label", "Length must be 3-32 characters")
	}
	if req.Rules != nil {
		var rules []json.RawMessage
		if json.Unmarshal(*req.Rules, &rules) != nil {
			return errInvalid("rules", "Must be a list of rules")
		}
	}
	return nil
}

func (e *Emulator) createFirewallRuleSet(r *http.Request) (any, *apiError) {
	var req ruleSetRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Label == nil {
		return nil, errInvalid("label", "Label is required")
	}
	if req.Type != "inbound" && req.Type != "outbound" {
		return nil, errInvalid("type", "Must be one of inbound, outbound")
	}
	if req.Rules == nil {
		return nil, errInvalid("rules", "Rules are required")
	}
	if err := validateRuleSet(req); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	rs := &ruleSet{
		ID: e.st.nextID("ruleSet"), Version: 1, Label: *req.Label, Type: req.Type, Rules: *req.Rules,
		Created: now, Updated: now,
	}
	setIfGiven(&rs.Description, req.Description)
	e.st.ruleSets[rs.ID] = rs
	return ruleSetToWire(rs), nil
}

func (e *Emulator) lookupRuleSet(r *http.Request) (*ruleSet, *apiError) {
	return e.st.ruleSets.lookup(r, "rulesetId")
}

// ruleSetUpdateRequest is a rule set's create request less its type, which cannot change.
type ruleSetUpdateRequest struct{ ruleSetRequest }

func (req *ruleSetUpdateRequest) validate() *apiError {
	if req.Type != "" {
		return errInvalid("type", "A rule set's type cannot change")
	}
	return validateRuleSet(req.ruleSetRequest)
}

// updateFirewallRuleSet changes what the request names; each change is a new version.
func (e *Emulator) updateFirewallRuleSet(rs *ruleSet, req ruleSetUpdateRequest) (any, *apiError) {
	if rs.Deleted != nil {
		return nil, errInvalid("", "The rule set has been deleted")
	}
	setIfGiven(&rs.Label, req.Label)
	setIfGiven(&rs.Description, req.Description)
	setIfGiven(&rs.Rules, req.Rules)
	rs.Version++
	rs.Updated = e.clock.Now()
	return ruleSetToWire(rs), nil
}

// deleteFirewallRuleSet marks the rule set deleted; it is still listed, as Linode lists it.
func (e *Emulator) deleteFirewallRuleSet(rs *ruleSet) {
	if rs.Deleted == nil {
		now := e.clock.Now()
		rs.Deleted = &now
	}
}
