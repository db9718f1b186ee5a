package emulator

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Linode statuses the emulator moves through.
const (
	statusProvisioning = "provisioning"
	statusBooting      = "booting"
	statusRebooting    = "rebooting"
	statusRunning      = "running"
	statusOffline      = "offline"
)

type instance struct {
	ID                int
	Label             string
	Group             string
	Type              string
	Region            string
	Image             string
	Status            string
	Created, Updated  time.Time
	IPv4              []string
	IPv6              string
	Tags              []string
	HostUUID          string
	UserData          string
	DiskEncryption    string
	WatchdogEnabled   bool
	MaintenancePolicy string
	FirewallID        int
	// FirewallDeviceID is the Linode's device id on its firewall (firewall_devices.go).
	FirewallDeviceID int
	PlacementGroupID int
	// Booted is false for Linodes created with "booted": false; they end
	// "offline" instead of "running".
	Booted bool
	// LKEClusterID, LKEPoolID and NodeID are set on LKE pool nodes.
	LKEClusterID int
	LKEPoolID    int
	NodeID       string
	// Deployment is what was deployed onto the Linode: credentials and configuration profiles.
	Deployment deployment
	// K8sVersion is the Kubernetes version an LKE node's Linode installed.
	K8sVersion string
	// InterfaceGeneration is generationLinode for Linodes whose network interfaces are their
	// own (Interfaces) rather than their configuration profiles'.
	InterfaceGeneration string
	Interfaces          []*linodeInterface
	// NetworkHelper is the Linode interfaces' setting for Linode's Network Helper.
	NetworkHelper bool
	// announced records that the running event went out, so a reboot does
	// not announce the Linode again.
	announced bool
}

type instanceSpecs struct {
	Disk               int `json:"disk"`
	Memory             int `json:"memory"`
	VCPUs              int `json:"vcpus"`
	GPUs               int `json:"gpus"`
	Transfer           int `json:"transfer"`
	AcceleratedDevices int `json:"accelerated_devices"`
}

type instanceAlerts struct {
	CPU           int   `json:"cpu"`
	NetworkIn     int   `json:"network_in"`
	NetworkOut    int   `json:"network_out"`
	TransferQuota int   `json:"transfer_quota"`
	IO            int   `json:"io"`
	SystemAlerts  []any `json:"system_alerts"`
	UserAlerts    []any `json:"user_alerts"`
}

type instanceBackups struct {
	Enabled   bool `json:"enabled"`
	Available bool `json:"available"`
	Schedule  struct {
		Day    *string `json:"day"`
		Window *string `json:"window"`
	} `json:"schedule"`
	LastSuccessful *apiTime `json:"last_successful"`
}

type instancePlacementGroup struct {
	ID                   int    `json:"id"`
	Label                string `json:"label"`
	PlacementGroupType   string `json:"placement_group_type"`
	PlacementGroupPolicy string `json:"placement_group_policy"`
	MigratingTo          *int   `json:"migrating_to"`
}

// instanceWire is a Linode as GET /linode/instances/{id} shows it.
type instanceWire struct {
	ID                  int                     `json:"id"`
	Label               string                  `json:"label"`
	Group               string                  `json:"group"`
	Status              string                  `json:"status"`
	Created             apiTime                 `json:"created"`
	Updated             apiTime                 `json:"updated"`
	Type                string                  `json:"type"`
	IPv4                []string                `json:"ipv4"`
	IPv6                *string                 `json:"ipv6"`
	Image               *string                 `json:"image"`
	Region              string                  `json:"region"`
	SiteType            string                  `json:"site_type"`
	Specs               instanceSpecs           `json:"specs"`
	Alerts              instanceAlerts          `json:"alerts"`
	Backups             instanceBackups         `json:"backups"`
	Hypervisor          string                  `json:"hypervisor"`
	WatchdogEnabled     bool                    `json:"watchdog_enabled"`
	Tags                []string                `json:"tags"`
	HostUUID            string                  `json:"host_uuid"`
	HasUserData         bool                    `json:"has_user_data"`
	PlacementGroup      *instancePlacementGroup `json:"placement_group"`
	DiskEncryption      string                  `json:"disk_encryption"`
	LKEClusterID        *int                    `json:"lke_cluster_id"`
	Capabilities        []string                `json:"capabilities"`
	InterfaceGeneration string                  `json:"interface_generation"`
	MaintenancePolicy   string                  `json:"maintenance_policy"`
	Locks               []string                `json:"locks"`
}

func (e *Emulator) instanceWire(in *instance) instanceWire {
	p := e.cat.typeByID[in.Type]
	w := instanceWire{
		ID: in.ID, Label: in.Label, Group: in.Group, Status: in.Status,
		Created: apiTime(in.Created), Updated: apiTime(in.Updated),
		Type: in.Type, IPv4: nonNil(in.IPv4), IPv6: in.publicIPv6(), Region: in.Region,
		SiteType: e.cat.regionByID[in.Region].SiteType,
		Specs: instanceSpecs{
			Disk: p.Disk, Memory: p.Memory, VCPUs: p.VCPUs, GPUs: p.GPUs, Transfer: p.Transfer,
		},
		Alerts: instanceAlerts{
			CPU: 90 * p.VCPUs, NetworkIn: 10, NetworkOut: 10, TransferQuota: 80, IO: 10000,
			SystemAlerts: []any{}, UserAlerts: []any{},
		},
		Hypervisor: "kvm", WatchdogEnabled: in.WatchdogEnabled,
		Tags: nonNil(in.Tags), HostUUID: in.HostUUID, HasUserData: in.UserData != "",
		DiskEncryption:      in.DiskEncryption,
		Capabilities:        []string{},
		InterfaceGeneration: in.generation(),
		MaintenancePolicy:   in.MaintenancePolicy,
		Locks:               []string{},
	}
	if in.Image != "" {
		img := in.Image
		w.Image = &img
	}
	if in.LKEClusterID != 0 {
		id := in.LKEClusterID
		w.LKEClusterID = &id
	}
	if pg, ok := e.st.placementGroups[in.PlacementGroupID]; ok {
		w.PlacementGroup = &instancePlacementGroup{
			ID: pg.ID, Label: pg.Label, PlacementGroupType: pg.Type, PlacementGroupPolicy: pg.Policy,
		}
	}
	return w
}

// generation is the Linode's interface generation.
func (in *instance) generation() string {
	if in.InterfaceGeneration == "" {
		return generationLegacyConfig
	}
	return in.InterfaceGeneration
}

// publicIPv6 is the Linode's SLAAC address, which a Linode with Linode interfaces has only on
// a public interface.
func (in *instance) publicIPv6() *string {
	if in.generation() == generationLinode && !slices.ContainsFunc(in.Interfaces, func(i *linodeInterface) bool { return i.Public != nil }) {
		return nil
	}
	return ptrTo(in.IPv6)
}

// publicIPv4 is the Linode's first public address, "" if it has none (a Linode whose Linode
// interfaces are VLAN or VPC ones without NAT).
func (in *instance) publicIPv4() string {
	for _, address := range in.IPv4 {
		if !isPrivateIPv4(address) {
			return address
		}
	}
	return ""
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// instanceCreateRequest is the subset of POST /linode/instances the emulator
// understands; other fields are accepted and ignored.
type instanceCreateRequest struct {
	Region         string   `json:"region"`
	Type           string   `json:"type"`
	Label          string   `json:"label"`
	Group          string   `json:"group"`
	Image          string   `json:"image"`
	Tags           []string `json:"tags"`
	FirewallID     int      `json:"firewall_id"`
	DiskEncryption string   `json:"disk_encryption"`
	PrivateIP      bool     `json:"private_ip"`
	Booted         *bool    `json:"booted"`
	IPv4           []string `json:"ipv4"`
	Metadata       *struct {
		UserData string `json:"user_data"`
	} `json:"metadata"`
	PlacementGroup *struct {
		ID int `json:"id"`
	} `json:"placement_group"`
	MaintenancePolicy *string `json:"maintenance_policy"`
	// InterfaceGeneration says which form RawInterfaces takes: configuration profile
	// interfaces (Interfaces) or Linode interfaces (LinodeInterfaces).
	InterfaceGeneration string                   `json:"interface_generation"`
	RawInterfaces       json.RawMessage          `json:"interfaces"`
	LinodeInterfaces    []linodeInterfaceRequest `json:"-"`
	deployRequest
}

func (e *Emulator) lookupInstance(r *http.Request) (*instance, *apiError) {
	return e.st.instances.lookup(r, "linodeId")
}

func (e *Emulator) createInstance(r *http.Request) (any, *apiError) {
	var req instanceCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := decodeCreateInterfaces(&req); err != nil {
		return nil, err
	}
	if err := e.validateInstanceCreate(&req); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	in, err := e.launchInstance(now, req.Region, req.Type, req.Label)
	if err != nil {
		return nil, err
	}
	in.Group, in.Image, in.Tags = req.Group, req.Image, req.Tags
	if req.FirewallID != 0 {
		e.putBehindFirewall(in, req.FirewallID)
	}
	if req.DiskEncryption != "" {
		in.DiskEncryption = req.DiskEncryption
	}
	setIfGiven(&in.Booted, req.Booted)
	if len(req.IPv4) > 0 {
		// A reserved address (validateReservedIPv4) replaces the one the Linode would get.
		in.IPv4 = slices.Clone(req.IPv4)
	}
	if req.InterfaceGeneration == generationLinode {
		in.InterfaceGeneration = generationLinode
		e.newLinodeInterfaces(in, req.LinodeInterfaces, now)
	}
	if req.PrivateIP {
		in.IPv4 = append(in.IPv4, privateAddressOf(in.ID))
	}
	if req.Metadata != nil {
		in.UserData = req.Metadata.UserData
	}
	if req.PlacementGroup != nil {
		in.PlacementGroupID = req.PlacementGroup.ID
	}
	setIfGiven(&in.MaintenancePolicy, req.MaintenancePolicy)
	e.deploy(in, &req, now)
	e.st.instances[in.ID] = in
	e.recordEvent(actionLinodeCreate, eventStarted, eventsUsername, in, in.bootTarget(), now)
	e.startBoot(in, now)
	return e.instanceWire(in), nil
}

func (e *Emulator) validateInstanceCreate(req *instanceCreateRequest) *apiError {
	reg, err := e.validateRegion("region", req.Region, "")
	if err != nil {
		return err
	}
	if _, err := e.validatePlan("type", req.Type, reg); err != nil {
		return err
	}
	if err := validateTags("tags", req.Tags); err != nil {
		return err
	}
	if req.Label != "" {
		if err := validateInstanceLabel(req.Label); err != nil {
			return err
		}
	}
	if err := validateMaintenancePolicy(req.MaintenancePolicy); err != nil {
		return err
	}
	if req.FirewallID != 0 {
		if err := e.validateFirewall("firewall_id", req.FirewallID); err != nil {
			return err
		}
		if req.InterfaceGeneration == generationLinode {
			return errInvalid("firewall_id", "With Linode interfaces, firewalls apply to each public or VPC interface: set interfaces[].firewall_id")
		}
	}
	if req.Metadata != nil {
		if err := validateUserData(reg, req.Metadata.UserData); err != nil {
			return err
		}
	}
	if req.DiskEncryption != "" && req.DiskEncryption != "enabled" && req.DiskEncryption != "disabled" {
		return errInvalid("disk_encryption", "Must be one of enabled, disabled")
	}
	if req.IPv4 != nil {
		if err := e.validateReservedIPv4(req.IPv4, reg.ID); err != nil {
			return err
		}
	}
	if req.InterfaceGeneration == generationLinode {
		if err := e.validateLinodeInterfaces("interfaces", reg.ID, nil, req.LinodeInterfaces, 0); err != nil {
			return err
		}
	}
	if req.PlacementGroup != nil {
		pg, ok := e.st.placementGroups[req.PlacementGroup.ID]
		if !ok {
			return errInvalid("placement_group.id", "Placement group not found")
		}
		if pg.Region != req.Region {
			return errInvalid("placement_group.id", "Placement group must be in the same region as the Linode")
		}
	}
	return e.validateDeploy(req)
}

func validateInstanceLabel(label string) *apiError {
	if len(label) < 3 || len(label) > 64 {
		return errInvalid("label", "Length must be 3-64 characters")
	}
	return nil
}

// validateUserData checks user data for a Linode in region: the region must offer the Metadata
// service, and the data be base64. No user data is always fine.
// maxUserDataBytes is the API's limit on metadata.user_data, before base64.
const maxUserDataBytes = 65535

func validateUserData(reg region, userData string) *apiError {
	if userData == "" {
		return nil
	}
	if !reg.has(capMetadata) {
		return errInvalid("metadata.user_data", "Metadata is not available in region "+reg.ID)
	}
	decoded, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		return errInvalid("metadata.user_data", "Must be base64-encoded")
	}
	if len(decoded) > maxUserDataBytes {
		return errInvalid("metadata.user_data", "Unencoded data must not exceed 65535 bytes")
	}
	return nil
}

// newInstance builds a provisioning Linode with the API's defaults; the
// caller stores it and starts its boot.
// launchInstance takes the region's capacity for one Linode of the plan and creates it, with the
// label asked for or Linode's own.
func (e *Emulator) launchInstance(now time.Time, regionID, planID, label string) (*instance, *apiError) {
	if err := e.st.takeCapacity("type", regionID, planID, 1); err != nil {
		return nil, err
	}
	in := e.newInstance(now, regionID, planID)
	if label != "" {
		in.Label = label
	}
	return in, nil
}

func (e *Emulator) newInstance(now time.Time, regionID, planID string) *instance {
	id := e.st.nextID("instance")
	return &instance{
		ID: id, Label: "linode" + strconv.Itoa(id), Type: planID, Region: regionID,
		Status: statusProvisioning, Created: now, Updated: now,
		IPv4: []string{e.st.nextIPv4()}, IPv6: e.st.nextIPv6(),
		HostUUID: e.st.hex(40), DiskEncryption: "enabled", WatchdogEnabled: true,
		MaintenancePolicy: "linode/migrate", Booted: true,
	}
}

// startBoot schedules provisioning -> booting -> running (or -> offline for
// Linodes created with "booted": false). Both stages take the delays in effect
// now, so a later SetDelays does not change a boot already under way.
func (e *Emulator) startBoot(in *instance, now time.Time) {
	id, bootDelay := in.ID, e.cfg.delays.Booting
	e.st.at(now.Add(e.cfg.delays.Provisioning), func(at time.Time) {
		in, ok := e.st.instances[id]
		if !ok || in.Status != statusProvisioning {
			return
		}
		if !in.Booted {
			e.setStatus(in, statusOffline, at)
			return
		}
		e.setStatus(in, statusBooting, at)
		e.finishBoot(in, at, bootDelay)
	})
}

// finishBoot schedules the move from booting or rebooting to running after delay.
func (e *Emulator) finishBoot(in *instance, now time.Time, delay time.Duration) {
	id, from := in.ID, in.Status
	e.st.at(now.Add(delay), func(at time.Time) {
		in, ok := e.st.instances[id]
		if !ok || in.Status != from {
			return
		}
		e.setStatus(in, statusRunning, at)
		e.nodeInstanceRunning(in)
		if !in.announced {
			in.announced = true
			e.emit(InstanceRunning, in, at)
		}
	})
}

func (e *Emulator) setStatus(in *instance, status string, at time.Time) {
	from := in.Status
	in.Status = status
	in.Updated = at
	e.instanceStatusChanged(in, from, at)
}

type instanceUpdateRequest struct {
	Label             *string   `json:"label"`
	Group             *string   `json:"group"`
	Tags              *[]string `json:"tags"`
	WatchdogEnabled   *bool     `json:"watchdog_enabled"`
	MaintenancePolicy *string   `json:"maintenance_policy"`
}

func (e *Emulator) updateInstance(in *instance, req instanceUpdateRequest) (any, *apiError) {
	if req.Tags != nil {
		if err := validateTags("tags", *req.Tags); err != nil {
			return nil, err
		}
		in.Tags = slices.Clone(*req.Tags)
	}
	if req.Label != nil {
		if err := validateInstanceLabel(*req.Label); err != nil {
			return nil, err
		}
		in.Label = *req.Label
	}
	setIfGiven(&in.Group, req.Group)
	setIfGiven(&in.WatchdogEnabled, req.WatchdogEnabled)
	if err := validateMaintenancePolicy(req.MaintenancePolicy); err != nil {
		return nil, err
	}
	setIfGiven(&in.MaintenancePolicy, req.MaintenancePolicy)
	in.Updated = e.clock.Now()
	return e.instanceWire(in), nil
}

// deleteInstance is a user's delete: recorded as an event, and LKE replaces a pool node's Linode.
func (e *Emulator) deleteInstance(in *instance) {
	e.recordEvent(actionLinodeDelete, eventNotification, eventsUsername, in, "", e.clock.Now())
	e.removeInstance(in, e.clock.Now())
	e.replaceLostNode(in, e.clock.Now())
}

// removeInstance deletes a Linode and announces it.
func (e *Emulator) removeInstance(in *instance, now time.Time) {
	delete(e.st.instances, in.ID)
	for _, r := range e.rangesOf(in.ID) {
		delete(e.st.ipv6Ranges, r.Address)
	}
	e.emit(InstanceDeleted, in, now)
}

func (e *Emulator) rebootInstance(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	if in.Status != statusRunning && in.Status != statusOffline {
		return nil, errBusy()
	}
	now := e.clock.Now()
	e.recordEvent(actionLinodeReboot, eventStarted, eventsUsername, in, statusRunning, now)
	e.setStatus(in, statusRebooting, now)
	e.finishBoot(in, now, e.cfg.delays.Booting)
	return emptyObject{}, nil
}
