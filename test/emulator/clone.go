package emulator

import (
	"maps"
	"slices"
	"strconv"
	"time"
)

// actionLinodeClone is the event of a clone, on the source Linode, with the new one as its
// secondary entity.
const actionLinodeClone = "linode_clone"

type cloneRequest struct {
	Region         string `json:"region"`
	Type           string `json:"type"`
	Label          string `json:"label"`
	Group          string `json:"group"`
	BackupsEnabled bool   `json:"backups_enabled"`
	PrivateIP      bool   `json:"private_ip"`
	LinodeID       int    `json:"linode_id"`
	Metadata       *struct {
		UserData string `json:"user_data"`
	} `json:"metadata"`
}

// cloneInstance copies a Linode's image and profiles to a new Linode, which ends offline as the
// API's clones do, or onto an existing Linode that is offline (linode_id), whose profiles they
// replace.
func (e *Emulator) cloneInstance(source *instance, req cloneRequest) (any, *apiError) {
	if req.LinodeID != 0 {
		return e.cloneOnto(source, req.LinodeID)
	}
	if req.Region == "" {
		req.Region = source.Region
	}
	if req.Type == "" {
		req.Type = source.Type
	}
	reg, err := e.validateRegion("region", req.Region, "")
	if err != nil {
		return nil, err
	}
	if _, err := e.validatePlan("type", req.Type, reg); err != nil {
		return nil, err
	}
	if req.Label != "" {
		if err := validateInstanceLabel(req.Label); err != nil {
			return nil, err
		}
	}
	if req.Metadata != nil {
		if err := validateUserData(reg, req.Metadata.UserData); err != nil {
			return nil, err
		}
	}
	now := e.clock.Now()
	clone, err := e.launchInstance(now, req.Region, req.Type, req.Label)
	if err != nil {
		return nil, err
	}
	clone.Group, clone.Image, clone.Tags = req.Group, source.Image, slices.Clone(source.Tags)
	clone.DiskEncryption, clone.Booted = source.DiskEncryption, false
	if req.PrivateIP {
		clone.IPv4 = append(clone.IPv4, privateAddressOf(clone.ID))
	}
	if req.Metadata != nil {
		clone.UserData = req.Metadata.UserData
	}
	clone.Deployment = deployment{
		AuthorizedKeys: slices.Clone(source.Deployment.AuthorizedKeys), AuthorizedUsers: slices.Clone(source.Deployment.AuthorizedUsers),
		BackupsEnabled: req.BackupsEnabled,
	}
	e.cloneDisksAndConfigs(source, clone, now)
	e.st.instances[clone.ID] = clone

	ev := e.recordEvent(actionLinodeClone, eventStarted, eventsUsername, source, "", now)
	ev.Secondary = ptrTo(linodeEntity(clone.ID, clone.Label))
	ev.finishesWhen = statusOffline
	e.st.openEvents[clone.ID] = append(e.st.openEvents[clone.ID], ev)
	e.startBoot(clone, now)
	return e.instanceWire(clone), nil
}

// cloneOnto copies a Linode's image and profiles onto another, offline Linode of the account.
func (e *Emulator) cloneOnto(source *instance, targetID int) (any, *apiError) {
	target, ok := e.st.instances[targetID]
	switch {
	case !ok || target == source:
		return nil, errInvalid("linode_id", "Linode not found")
	case target.Status != statusOffline:
		return nil, errInvalid("linode_id", "The Linode cloned onto must be offline")
	}
	now := e.clock.Now()
	target.Image = source.Image
	e.cloneDisksAndConfigs(source, target, now)
	ev := e.recordEvent(actionLinodeClone, eventStarted, eventsUsername, source, "", now)
	ev.Secondary = ptrTo(linodeEntity(target.ID, target.Label))
	e.st.at(now.Add(e.cfg.delays.Provisioning), ev.finish)
	return e.instanceWire(target), nil
}

// cloneDisksAndConfigs replaces a Linode's disks and profiles with copies of the source's.
func (e *Emulator) cloneDisksAndConfigs(source, clone *instance, now time.Time) {
	disks := map[int]int{}
	clone.Deployment.Disks, clone.Deployment.Configs = nil, nil
	for _, d := range source.Deployment.Disks {
		copied := *d
		copied.ID, copied.Created = e.st.nextID("disk"), now
		disks[d.ID] = copied.ID
		clone.Deployment.Disks = append(clone.Deployment.Disks, &copied)
	}
	for _, cfg := range source.Deployment.Configs {
		clone.Deployment.Configs = append(clone.Deployment.Configs, e.cloneConfig(cfg, clone, disks, now))
	}
}

// cloneConfig copies a profile for a clone: its devices on the clone's copies of the disks
// (disks maps the source's disk ids to them), and on a VPC interface the next free address of
// the subnet, with a 1:1 NAT to the clone's own public address.
func (e *Emulator) cloneConfig(cfg *instanceConfig, clone *instance, disks map[int]int, now time.Time) *instanceConfig {
	copied := e.newConfig(cfg.Label, now)
	copied.Kernel, copied.Comments = cfg.Kernel, cfg.Comments
	for _, slot := range slices.Sorted(maps.Keys(cfg.Devices)) {
		device := *cfg.Devices[slot]
		if id, ok := disks[device.DiskID]; ok {
			device.DiskID = id
		}
		copied.Devices[slot] = &device
	}
	for _, iface := range cfg.Interfaces {
		c := *iface
		c.ID = e.st.nextID("interface")
		if c.Purpose == purposeVPC {
			c.VPCAddress = e.freeSubnetAddress(e.st.subnets[c.SubnetID])
			if c.NAT1To1 != "" {
				c.NAT1To1 = clone.publicIPv4()
			}
		}
		copied.Interfaces = append(copied.Interfaces, &c)
	}
	return copied
}

// privateAddressOf is the private address a Linode gets with "private_ip": true.
func privateAddressOf(id int) string {
	return "192.168." + strconv.Itoa(id>>8&0xff) + "." + strconv.Itoa(id&0xff)
}
