package emulator

import (
	"fmt"
	"net/http"
	"strconv"
)

// Firewall devices are what a firewall applies to: Linodes of the legacy interface generation
// (their FirewallID) and public or VPC Linode interfaces (theirs). Each attachment has its own
// device id, kept with the Linode or interface.

// Firewall device types, as linodego names them.
const (
	deviceLinode          = "linode"
	deviceLinodeInterface = "linode_interface"
)

type firewallDeviceWire struct {
	ID      int            `json:"id"`
	Created apiTime        `json:"created"`
	Updated apiTime        `json:"updated"`
	Entity  firewallEntity `json:"entity"`
}

// putBehindFirewall attaches the firewall to a Linode, or detaches it with 0.
func (e *Emulator) putBehindFirewall(in *instance, firewallID int) {
	in.FirewallID, in.FirewallDeviceID = firewallID, 0
	if firewallID != 0 {
		in.FirewallDeviceID = e.st.nextID("firewallDevice")
	}
}

// putInterfaceBehindFirewall attaches the firewall to a Linode interface, or detaches it with 0.
func (e *Emulator) putInterfaceBehindFirewall(iface *linodeInterface, firewallID int) {
	iface.FirewallID, iface.FirewallDeviceID = firewallID, 0
	if firewallID != 0 {
		iface.FirewallDeviceID = e.st.nextID("firewallDevice")
	}
}

func firewallLinodeEntity(in *instance) firewallEntity {
	return firewallEntity{ID: in.ID, Type: deviceLinode, Label: ptrTo(in.Label), URL: fmt.Sprintf("/v4/linode/instances/%d", in.ID)}
}

// firewallDevices lists the firewall's devices: Linodes in id order, each followed by its
// interfaces.
func (e *Emulator) firewallDevices(f *firewall) []firewallDeviceWire {
	out := []firewallDeviceWire{}
	for _, id := range sortedKeys(e.st.instances) {
		in := e.st.instances[id]
		if in.FirewallID == f.ID {
			out = append(out, firewallDeviceWire{ID: in.FirewallDeviceID, Created: apiTime(in.Created), Updated: apiTime(in.Updated), Entity: firewallLinodeEntity(in)})
		}
		for _, iface := range in.Interfaces {
			if iface.FirewallID != f.ID {
				continue
			}
			parent := firewallLinodeEntity(in)
			out = append(out, firewallDeviceWire{
				ID: iface.FirewallDeviceID, Created: apiTime(iface.Created), Updated: apiTime(iface.Updated),
				Entity: firewallEntity{
					ID: iface.ID, Type: deviceLinodeInterface,
					URL:          fmt.Sprintf("/v4/linode/instances/%d/interfaces/%d", in.ID, iface.ID),
					ParentEntity: &parent,
				},
			})
		}
	}
	return out
}

func (e *Emulator) listFirewallDevices(r *http.Request) (any, *apiError) {
	f, err := e.lookupFirewall(r)
	if err != nil {
		return nil, err
	}
	return mustList(newList(e.firewallDevices(f), firewallDeviceWire{}))
}

func (e *Emulator) lookupFirewallDevice(r *http.Request) (*firewall, firewallDeviceWire, *apiError) {
	f, err := e.lookupFirewall(r)
	if err != nil {
		return nil, firewallDeviceWire{}, err
	}
	id, convErr := strconv.Atoi(r.PathValue("deviceId"))
	if convErr != nil {
		return nil, firewallDeviceWire{}, errNotFound()
	}
	for _, d := range e.firewallDevices(f) {
		if d.ID == id {
			return f, d, nil
		}
	}
	return nil, firewallDeviceWire{}, errNotFound()
}

func (e *Emulator) getFirewallDevice(r *http.Request) (any, *apiError) {
	_, d, err := e.lookupFirewallDevice(r)
	if err != nil {
		return nil, err
	}
	return d, nil
}

type firewallDeviceCreateRequest struct {
	ID   int    `json:"id"`
	Type string `json:"type"`
}

// createFirewallDevice puts a Linode or a Linode interface behind the firewall. The emulator
// keeps one firewall per Linode or interface, so one already behind another firewall is refused.
func (e *Emulator) createFirewallDevice(f *firewall, req firewallDeviceCreateRequest) (any, *apiError) {
	if err := e.attachDevice(f.ID, "", req.Type, req.ID); err != nil {
		return nil, err
	}
	for _, d := range e.firewallDevices(f) {
		if d.Entity.ID == req.ID && d.Entity.Type == req.Type {
			return d, nil
		}
	}
	return nil, errNotFound()
}

// attachDevice puts the entity of the type behind the firewall.
func (e *Emulator) attachDevice(firewallID int, field, kind string, id int) *apiError {
	attach, err := e.deviceTarget(field, kind, id)
	if err != nil {
		return err
	}
	attach(firewallID)
	return nil
}

// validateFirewallDevices checks the devices of a firewall create.
func (e *Emulator) validateFirewallDevices(linodes, interfaces []int) *apiError {
	for i, id := range linodes {
		if _, err := e.deviceTarget(fmt.Sprintf("devices.linodes[%d].", i), deviceLinode, id); err != nil {
			return err
		}
	}
	for i, id := range interfaces {
		if _, err := e.deviceTarget(fmt.Sprintf("devices.linode_interfaces[%d].", i), deviceLinodeInterface, id); err != nil {
			return err
		}
	}
	return nil
}

// deviceTarget finds the entity of the type that a firewall could apply to and returns what
// attaches it; field prefixes the fields errors name.
func (e *Emulator) deviceTarget(field, kind string, id int) (func(firewallID int), *apiError) {
	switch kind {
	case deviceLinode:
		in, ok := e.st.instances[id]
		switch {
		case !ok:
			return nil, errInvalid(field+"id", fmt.Sprintf("Linode %d not found", id))
		case in.generation() == generationLinode:
			return nil, errInvalid(field+"type", "This Linode uses Linode interfaces; put its public or VPC interface behind the firewall (type linode_interface)")
		case in.FirewallID != 0:
			return nil, errInvalid(field+"id", fmt.Sprintf("Linode %d is already behind firewall %d", id, in.FirewallID))
		}
		return func(firewallID int) { e.putBehindFirewall(in, firewallID) }, nil
	case deviceLinodeInterface:
		for _, in := range e.st.instances {
			for _, iface := range in.Interfaces {
				if iface.ID != id {
					continue
				}
				switch {
				case iface.VLAN != nil:
					return nil, errInvalid(field+"id", "Firewalls cannot be applied to VLAN interfaces")
				case iface.FirewallID != 0:
					return nil, errInvalid(field+"id", fmt.Sprintf("Interface %d is already behind firewall %d", id, iface.FirewallID))
				}
				return func(firewallID int) { e.putInterfaceBehindFirewall(iface, firewallID) }, nil
			}
		}
		return nil, errInvalid(field+"id", fmt.Sprintf("Linode interface %d not found", id))
	}
	return nil, errInvalid(field+"type", "Must be one of linode, linode_interface")
}

func (e *Emulator) deleteFirewallDevice(r *http.Request) (any, *apiError) {
	_, d, err := e.lookupFirewallDevice(r)
	if err != nil {
		return nil, err
	}
	in, ok := e.st.instances[d.Entity.ID]
	if d.Entity.Type == deviceLinodeInterface {
		in, ok = e.st.instances[d.Entity.ParentEntity.ID]
	}
	if !ok {
		return nil, errNotFound()
	}
	if d.Entity.Type == deviceLinode {
		e.putBehindFirewall(in, 0)
	}
	for _, iface := range in.Interfaces {
		if iface.FirewallDeviceID == d.ID {
			e.putInterfaceBehindFirewall(iface, 0)
		}
	}
	return emptyObject{}, nil
}
