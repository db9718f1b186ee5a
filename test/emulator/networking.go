package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

type firewall struct {
	ID               int
	Label            string
	Tags             []string
	Rules            json.RawMessage
	Created, Updated time.Time
}

// firewallEntity is what a firewall applies to; a Linode interface has no label and names its
// Linode as parent.
type firewallEntity struct {
	ID           int             `json:"id"`
	Type         string          `json:"type"`
	Label        *string         `json:"label"`
	URL          string          `json:"url"`
	ParentEntity *firewallEntity `json:"parent_entity"`
}

type firewallWire struct {
	ID       int              `json:"id"`
	Label    string           `json:"label"`
	Created  apiTime          `json:"created"`
	Updated  apiTime          `json:"updated"`
	Status   string           `json:"status"`
	Rules    json.RawMessage  `json:"rules"`
	Tags     []string         `json:"tags"`
	Entities []firewallEntity `json:"entities"`
}

// defaultFirewallRules is what a firewall created without rules shows.
var defaultFirewallRules = json.RawMessage(`{"inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT", "version": 1, "fingerprint": "00000000"}`)

// firewallToWire lists the Linodes and Linode interfaces behind the firewall as its entities.
func (e *Emulator) firewallToWire(f *firewall) firewallWire {
	w := firewallWire{
		ID: f.ID, Label: f.Label, Created: apiTime(f.Created), Updated: apiTime(f.Updated),
		Status: "enabled", Rules: f.Rules, Tags: nonNil(f.Tags), Entities: []firewallEntity{},
	}
	if w.Rules == nil {
		w.Rules = defaultFirewallRules
	}
	for _, d := range e.firewallDevices(f) {
		w.Entities = append(w.Entities, d.Entity)
	}
	return w
}

func (e *Emulator) lookupFirewall(r *http.Request) (*firewall, *apiError) {
	return e.st.firewalls.lookup(r, "firewallId")
}

type firewallCreateRequest struct {
	Label   string          `json:"label"`
	Tags    []string        `json:"tags"`
	Rules   json.RawMessage `json:"rules"`
	Devices struct {
		Linodes          []int `json:"linodes"`
		LinodeInterfaces []int `json:"linode_interfaces"`
	} `json:"devices"`
}

func (e *Emulator) createFirewall(r *http.Request) (any, *apiError) {
	var req firewallCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if len(req.Label) < 3 || len(req.Label) > 32 {
		return nil, errInvalid("label", "Length must be 3-32 characters")
	}
	if err := validateTags("tags", req.Tags); err != nil {
		return nil, err
	}
	if err := e.validateFirewallDevices(req.Devices.Linodes, req.Devices.LinodeInterfaces); err != nil {
		return nil, err
	}
	f := e.addFirewallLocked(req.Label, req.Tags)
	if len(req.Rules) > 0 {
		f.Rules = firewallRulesWithVersion(req.Rules)
	}
	for _, id := range req.Devices.Linodes {
		_ = e.attachDevice(f.ID, "", deviceLinode, id)
	}
	for _, id := range req.Devices.LinodeInterfaces {
		_ = e.attachDevice(f.ID, "", deviceLinodeInterface, id)
	}
	return e.firewallToWire(f), nil
}

// firewallRulesWithVersion adds the read-only version and fingerprint the
// API reports to submitted rules.
func firewallRulesWithVersion(rules json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(rules, &m) != nil || m == nil {
		return defaultFirewallRules
	}
	m["version"] = 1
	m["fingerprint"] = "00000000"
	for _, k := range []string{"inbound_policy", "outbound_policy"} {
		if _, ok := m[k]; !ok {
			m[k] = "ACCEPT"
		}
	}
	raw, _ := json.Marshal(m)
	return raw
}

func (e *Emulator) addFirewallLocked(label string, tags []string) *firewall {
	now := e.clock.Now()
	f := &firewall{ID: e.st.nextID("firewall"), Label: label, Tags: slices.Clone(tags), Created: now, Updated: now}
	e.st.firewalls[f.ID] = f
	return f
}

func (e *Emulator) deleteFirewall(f *firewall) { delete(e.st.firewalls, f.ID) }

type vpc struct {
	ID          int
	Label       string
	Description string
	Region      string
	// Type is vpcTypeRegular or vpcTypeRDMA; its subnets report it too.
	Type string
	// IPv4 are the ranges the VPC's subnets draw from; nil for Linode's defaults.
	IPv4             []ipv4Range
	Created, Updated time.Time
}

// VPC types: RDMA VPCs connect GPU Linodes' RDMA interfaces and take no IPv6 ranges.
const (
	vpcTypeRegular = "regular"
	vpcTypeRDMA    = "rdma"
)

// vpcLabelPattern is the API description's rule for VPC and subnet labels: ASCII letters,
// numbers and hyphens, never two hyphens in a row (checked apart).
var vpcLabelPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func validateVPCLabel(field, label string) *apiError {
	if len(label) < 1 || len(label) > 64 {
		return errInvalid(field, "Length must be 1-64 characters")
	}
	if !vpcLabelPattern.MatchString(label) || strings.Contains(label, "--") {
		return errInvalid(field, "Label must include only ASCII letters, numbers, and dashes")
	}
	return nil
}

type subnet struct {
	ID               int
	VPCID            int
	Label            string
	IPv4             string
	Created, Updated time.Time
}

type ipv4Range struct {
	Range string `json:"range"`
}

type vpcWire struct {
	ID          int          `json:"id"`
	Label       string       `json:"label"`
	Description string       `json:"description"`
	Region      string       `json:"region"`
	IPv4        []ipv4Range  `json:"ipv4"`
	IPv6        []ipv4Range  `json:"ipv6"`
	Subnets     []subnetWire `json:"subnets"`
	VPCType     string       `json:"vpc_type"`
	Created     apiTime      `json:"created"`
	Updated     apiTime      `json:"updated"`
}

type subnetWire struct {
	ID            int                `json:"id"`
	Label         string             `json:"label"`
	IPv4          string             `json:"ipv4"`
	IPv6          []any              `json:"ipv6"`
	Linodes       []subnetLinodeWire `json:"linodes"`
	Databases     []any              `json:"databases"`
	Nodebalancers []any              `json:"nodebalancers"`
	VPCType       string             `json:"vpc_type"`
	Created       apiTime            `json:"created"`
	Updated       apiTime            `json:"updated"`
}

// vpcPrivateRanges are the ranges every VPC may draw subnets from.
var vpcPrivateRanges = []ipv4Range{{"10.0.0.0/8"}, {"172.16.0.0/12"}, {"192.168.0.0/17"}}

// vpcDefaultRangesWire answers GET /vpcs/default-ranges: the ranges a VPC gets unless it asks
// for others, and those no VPC may use. Linode forbids its own public ranges; the emulator's
// are the special-purpose ranges and the one it hands public addresses out of (nextIPv4).
type vpcDefaultRangesWire struct {
	DefaultIPv4Ranges   []string `json:"default_ipv4_ranges"`
	ForbiddenIPv4Ranges []string `json:"forbidden_ipv4_ranges"`
}

func (e *Emulator) getVPCDefaultRanges(*http.Request) (any, *apiError) {
	return vpcDefaultRangesWire{
		DefaultIPv4Ranges:   []string{"10.0.0.0/8", "192.168.0.0/17", "172.16.0.0/12"},
		ForbiddenIPv4Ranges: []string{"0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", publicIPv4Range, "224.0.0.0/4", "240.0.0.0/4"},
	}, nil
}

// subnetToWire lists the Linodes with an interface on the subnet as its "linodes".
func (e *Emulator) subnetToWire(s *subnet) subnetWire {
	return subnetWire{
		ID: s.ID, Label: s.Label, IPv4: s.IPv4,
		Linodes: e.subnetLinodes(s.ID), Databases: []any{}, Nodebalancers: []any{},
		VPCType: e.st.vpcs[s.VPCID].Type,
		Created: apiTime(s.Created), Updated: apiTime(s.Updated),
	}
}

func (e *Emulator) vpcToWire(v *vpc) vpcWire {
	w := vpcWire{
		ID: v.ID, Label: v.Label, Description: v.Description, Region: v.Region,
		IPv4: vpcPrivateRanges, Subnets: []subnetWire{}, VPCType: v.Type,
		Created: apiTime(v.Created), Updated: apiTime(v.Updated),
	}
	if v.IPv4 != nil {
		w.IPv4 = v.IPv4
	}
	w.Subnets = append(w.Subnets, e.subnetsToWire(v)...)
	return w
}

func (e *Emulator) subnetsOf(v *vpc) []*subnet {
	return valuesWhere(e.st.subnets, func(s *subnet) bool { return s.VPCID == v.ID })
}

// subnetsToWire is the VPC's subnets as listed.
func (e *Emulator) subnetsToWire(v *vpc) []subnetWire {
	return toWires(e.subnetsOf(v), e.subnetToWire)
}

func (e *Emulator) lookupVPC(r *http.Request) (*vpc, *apiError) {
	return e.st.vpcs.lookup(r, "vpcId")
}

type subnetCreateRequest struct {
	Label string `json:"label"`
	IPv4  string `json:"ipv4"`
}

type vpcCreateRequest struct {
	Label       string                `json:"label"`
	Description string                `json:"description"`
	Region      string                `json:"region"`
	VPCType     string                `json:"vpc_type"`
	IPv4        []ipv4Range           `json:"ipv4"`
	IPv6        []ipv4Range           `json:"ipv6"`
	Subnets     []subnetCreateRequest `json:"subnets"`
}

func (e *Emulator) createVPC(r *http.Request) (any, *apiError) {
	var req vpcCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := validateVPCLabel("label", req.Label); err != nil {
		return nil, err
	}
	switch req.VPCType {
	case "":
		req.VPCType = vpcTypeRegular
	case vpcTypeRegular:
	case vpcTypeRDMA:
		if len(req.IPv6) > 0 {
			return nil, errInvalid("ipv6", "RDMA VPCs cannot have IPv6 ranges")
		}
	default:
		return nil, errInvalid("vpc_type", "Must be one of regular, rdma")
	}
	for i, s := range req.Subnets {
		if err := validateSubnet(fmt.Sprintf("subnets[%d].", i), s); err != nil {
			return nil, err
		}
	}
	if err := validateVPCRanges(req.IPv4); err != nil {
		return nil, err
	}
	if _, err := e.validateRegion("region", req.Region, capVPCs); err != nil {
		return nil, err
	}
	v := e.addVPCLocked(req.Label, req.Region)
	v.Description, v.Type, v.IPv4 = req.Description, req.VPCType, req.IPv4
	for _, s := range req.Subnets {
		e.addSubnetLocked(v.ID, s.Label, s.IPv4)
	}
	return e.vpcToWire(v), nil
}

// validateVPCRanges checks the IPv4 ranges a VPC asks for: private ranges in CIDR notation.
func validateVPCRanges(ranges []ipv4Range) *apiError {
	for i, r := range ranges {
		p, err := netip.ParsePrefix(r.Range)
		if err != nil || !p.Addr().Is4() || !p.Addr().IsPrivate() {
			return errInvalid(fmt.Sprintf("ipv4[%d].range", i), "Must be a private IPv4 range in CIDR notation")
		}
	}
	return nil
}

func validateSubnet(prefix string, s subnetCreateRequest) *apiError {
	if err := validateVPCLabel(prefix+"label", s.Label); err != nil {
		return err
	}
	if _, err := netip.ParsePrefix(s.IPv4); err != nil {
		return errInvalid(prefix+"ipv4", "Must be an IPv4 range in CIDR notation")
	}
	return nil
}

func (e *Emulator) addVPCLocked(label, regionID string) *vpc {
	now := e.clock.Now()
	v := &vpc{ID: e.st.nextID("vpc"), Label: label, Region: regionID, Type: vpcTypeRegular, Created: now, Updated: now}
	e.st.vpcs[v.ID] = v
	return v
}

func (e *Emulator) addSubnetLocked(vpcID int, label, ipv4 string) *subnet {
	now := e.clock.Now()
	s := &subnet{ID: e.st.nextID("subnet"), VPCID: vpcID, Label: label, IPv4: ipv4, Created: now, Updated: now}
	e.st.subnets[s.ID] = s
	return s
}

// deleteVPC removes the VPC with its subnets.
func (e *Emulator) deleteVPC(v *vpc) {
	for _, s := range e.subnetsOf(v) {
		delete(e.st.subnets, s.ID)
	}
	delete(e.st.vpcs, v.ID)
}

func (e *Emulator) lookupSubnet(r *http.Request) (*subnet, *apiError) {
	v, err := e.lookupVPC(r)
	if err != nil {
		return nil, err
	}
	s, err := e.st.subnets.lookup(r, "vpcSubnetId")
	if err != nil || s.VPCID != v.ID {
		return nil, errNotFound()
	}
	return s, nil
}

type subnetUpdateRequest struct {
	Label string `json:"label"`
}

func (req *subnetUpdateRequest) validate() *apiError {
	return validateVPCLabel("label", req.Label)
}

// updateSubnet renames a subnet, the one thing about it that can change.
func (e *Emulator) updateSubnet(s *subnet, req subnetUpdateRequest) (any, *apiError) {
	s.Label, s.Updated = req.Label, e.clock.Now()
	return e.subnetToWire(s), nil
}

type vpcUpdateRequest struct {
	Label       *string     `json:"label"`
	Description *string     `json:"description"`
	IPv4        []ipv4Range `json:"ipv4"`
}

func (req *vpcUpdateRequest) validate() *apiError {
	if req.Label != nil {
		if err := validateVPCLabel("label", *req.Label); err != nil {
			return err
		}
	}
	return validateVPCRanges(req.IPv4)
}

// updateVPC renames a VPC or changes its description.
func (e *Emulator) updateVPC(v *vpc, req vpcUpdateRequest) (any, *apiError) {
	setIfGiven(&v.Label, req.Label)
	setIfGiven(&v.Description, req.Description)
	if req.IPv4 != nil {
		v.IPv4 = req.IPv4
	}
	v.Updated = e.clock.Now()
	return e.vpcToWire(v), nil
}

func (req *subnetCreateRequest) validate() *apiError {
	return validateSubnet("", *req)
}

func (e *Emulator) createSubnet(v *vpc, req subnetCreateRequest) (any, *apiError) {
	return e.subnetToWire(e.addSubnetLocked(v.ID, req.Label, req.IPv4)), nil
}

type placementGroup struct {
	ID     int
	Label  string
	Region string
	Type   string
	Policy string
	// NonCompliant is set by tests: Linode reports a group non-compliant when it had to place a
	// member against the group's policy, until it moves that member.
	NonCompliant bool
}

type placementGroupMember struct {
	LinodeID    int  `json:"linode_id"`
	IsCompliant bool `json:"is_compliant"`
}

type placementGroupWire struct {
	ID                   int                    `json:"id"`
	Label                string                 `json:"label"`
	Region               string                 `json:"region"`
	PlacementGroupType   string                 `json:"placement_group_type"`
	PlacementGroupPolicy string                 `json:"placement_group_policy"`
	IsCompliant          bool                   `json:"is_compliant"`
	Members              []placementGroupMember `json:"members"`
	Migrations           *struct{}              `json:"migrations"`
}

// placementGroupToWire lists the Linodes created into the group as members; the emulator never
// breaks anti-affinity itself, so all are compliant, and the group too unless a test said not.
func (e *Emulator) placementGroupToWire(pg *placementGroup) placementGroupWire {
	w := placementGroupWire{
		ID: pg.ID, Label: pg.Label, Region: pg.Region, PlacementGroupType: pg.Type,
		PlacementGroupPolicy: pg.Policy, IsCompliant: !pg.NonCompliant, Members: []placementGroupMember{},
	}
	for _, id := range sortedKeys(e.st.instances) {
		if e.st.instances[id].PlacementGroupID == pg.ID {
			w.Members = append(w.Members, placementGroupMember{LinodeID: id, IsCompliant: true})
		}
	}
	return w
}

func (e *Emulator) lookupPlacementGroup(r *http.Request) (*placementGroup, *apiError) {
	return e.st.placementGroups.lookup(r, "groupId")
}

type placementGroupCreateRequest struct {
	Label                string `json:"label"`
	Region               string `json:"region"`
	PlacementGroupType   string `json:"placement_group_type"`
	PlacementGroupPolicy string `json:"placement_group_policy"`
}

func (e *Emulator) createPlacementGroup(r *http.Request) (any, *apiError) {
	var req placementGroupCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if len(req.Label) < 1 || len(req.Label) > 64 {
		return nil, errInvalid("label", "Length must be 1-64 characters")
	}
	if req.PlacementGroupType != "anti_affinity:local" {
		return nil, errInvalid("placement_group_type", "Must be anti_affinity:local")
	}
	if req.PlacementGroupPolicy != "strict" && req.PlacementGroupPolicy != "flexible" {
		return nil, errInvalid("placement_group_policy", "Must be one of strict, flexible")
	}
	if _, err := e.validateRegion("region", req.Region, capPlacementGroup); err != nil {
		return nil, err
	}
	pg := &placementGroup{
		ID: e.st.nextID("placementGroup"), Label: req.Label, Region: req.Region,
		Type: req.PlacementGroupType, Policy: req.PlacementGroupPolicy,
	}
	e.st.placementGroups[pg.ID] = pg
	return e.placementGroupToWire(pg), nil
}

type placementGroupUpdateRequest struct {
	Label string `json:"label"`
}

func (e *Emulator) updatePlacementGroup(pg *placementGroup, req placementGroupUpdateRequest) (any, *apiError) {
	if req.Label != "" {
		pg.Label = req.Label
	}
	return e.placementGroupToWire(pg), nil
}

func (e *Emulator) deletePlacementGroup(pg *placementGroup) { delete(e.st.placementGroups, pg.ID) }
