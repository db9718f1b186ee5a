package emulator

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// instanceConfig is a Linode's configuration profile: what it boots (kernel, disks) and its
// legacy network interfaces (public, VLAN, VPC).
type instanceConfig struct {
	ID               int
	Label            string
	Kernel           string
	Comments         string
	Devices          map[string]*configDevice
	Interfaces       []*configInterface
	Created, Updated time.Time
}

type configDevice struct {
	DiskID   int  `json:"disk_id"`
	VolumeID *int `json:"volume_id"`
}

type configInterface struct {
	ID          int
	Purpose     string
	Label       string
	IPAMAddress string
	Primary     bool
	SubnetID    int
	VPCID       int
	VPCAddress  string
	NAT1To1     string
}

// configDevices are the device slots of a profile, sda to sdh.
var configDevices = []string{"sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh"}

// Interface purposes.
const (
	purposePublic = "public"
	purposeVLAN   = "vlan"
	purposeVPC    = "vpc"
)

// maxInterfaces is how many interfaces a profile can have (eth0-eth2).
const maxInterfaces = 3

type configHelpersWire struct {
	UpdateDBDisabled  bool `json:"updatedb_disabled"`
	Distro            bool `json:"distro"`
	ModulesDep        bool `json:"modules_dep"`
	Network           bool `json:"network"`
	DevTmpFsAutomount bool `json:"devtmpfs_automount"`
}

type configInterfaceIPv4Wire struct {
	VPC     string  `json:"vpc"`
	NAT1To1 *string `json:"nat_1_1"`
}

type configInterfaceWire struct {
	ID          int                      `json:"id"`
	Label       *string                  `json:"label"`
	Purpose     string                   `json:"purpose"`
	IPAMAddress *string                  `json:"ipam_address"`
	Primary     bool                     `json:"primary"`
	Active      bool                     `json:"active"`
	SubnetID    *int                     `json:"subnet_id"`
	VPCID       *int                     `json:"vpc_id"`
	IPv4        *configInterfaceIPv4Wire `json:"ipv4"`
	IPv6        *struct{}                `json:"ipv6"`
	IPRanges    []string                 `json:"ip_ranges"`
}

type configWire struct {
	ID          int                      `json:"id"`
	Label       string                   `json:"label"`
	Helpers     configHelpersWire        `json:"helpers"`
	Kernel      string                   `json:"kernel"`
	Comments    string                   `json:"comments"`
	MemoryLimit int                      `json:"memory_limit"`
	Created     apiTime                  `json:"created"`
	Updated     apiTime                  `json:"updated"`
	RootDevice  string                   `json:"root_device"`
	Devices     map[string]*configDevice `json:"devices"`
	InitRD      *int                     `json:"initrd"`
	RunLevel    string                   `json:"run_level"`
	VirtMode    string                   `json:"virt_mode"`
	Interfaces  []configInterfaceWire    `json:"interfaces"`
}

// configToWire shows a profile as the API does. Its interfaces are active while the Linode is up
// with this profile, the first one.
func configToWire(in *instance, cfg *instanceConfig) configWire {
	w := configWire{
		ID: cfg.ID, Label: cfg.Label, Kernel: cfg.Kernel, Comments: cfg.Comments,
		Helpers: configHelpersWire{UpdateDBDisabled: true, Distro: true, ModulesDep: true, DevTmpFsAutomount: true},
		Created: apiTime(cfg.Created), Updated: apiTime(cfg.Updated),
		RootDevice: "/dev/sda", Devices: map[string]*configDevice{}, RunLevel: "default", VirtMode: "paravirt",
		Interfaces: []configInterfaceWire{},
	}
	for _, slot := range configDevices {
		w.Devices[slot] = cfg.Devices[slot]
	}
	active := in.bootConfig() == cfg && in.Status != statusOffline && in.Status != statusProvisioning
	for _, iface := range cfg.Interfaces {
		w.Interfaces = append(w.Interfaces, iface.toWire(active))
	}
	return w
}

func (iface *configInterface) toWire(active bool) configInterfaceWire {
	w := configInterfaceWire{ID: iface.ID, Purpose: iface.Purpose, Primary: iface.Primary, Active: active, IPRanges: []string{}}
	switch iface.Purpose {
	case purposeVLAN:
		w.Label, w.IPAMAddress = ptrTo(iface.Label), ptrTo(iface.IPAMAddress)
	case purposeVPC:
		w.SubnetID, w.VPCID = ptrTo(iface.SubnetID), ptrTo(iface.VPCID)
		w.IPv4 = &configInterfaceIPv4Wire{VPC: iface.VPCAddress}
		if iface.NAT1To1 != "" {
			w.IPv4.NAT1To1 = ptrTo(iface.NAT1To1)
		}
	}
	return w
}

func ptrTo[T any](v T) *T { return &v }

type configInterfaceRequest struct {
	Purpose     string  `json:"purpose"`
	Label       *string `json:"label"`
	IPAMAddress *string `json:"ipam_address"`
	Primary     bool    `json:"primary"`
	SubnetID    *int    `json:"subnet_id"`
	IPv4        *struct {
		VPC     string  `json:"vpc"`
		NAT1To1 *string `json:"nat_1_1"`
	} `json:"ipv4"`
}

type configCreateRequest struct {
	Label      string                   `json:"label"`
	Kernel     string                   `json:"kernel"`
	Comments   string                   `json:"comments"`
	Devices    map[string]*configDevice `json:"devices"`
	Interfaces []configInterfaceRequest `json:"interfaces"`
}

// validateInterfaces checks interfaces for a Linode in region: at most three, one public and one
// VPC interface at most, each VPC interface on an existing subnet of a VPC in the Linode's region,
// and a 1:1 NAT only on a VPC interface.
func (e *Emulator) validateInterfaces(field, regionID string, ifaces []configInterfaceRequest) *apiError {
	if len(ifaces) > maxInterfaces {
		return errInvalid(field, fmt.Sprintf("At most %d interfaces are allowed", maxInterfaces))
	}
	seen := map[string]bool{}
	for i, iface := range ifaces {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch iface.Purpose {
		case purposePublic, purposeVPC:
			if seen[iface.Purpose] {
				return errInvalid(at+".purpose", fmt.Sprintf("Only one %s interface is allowed", iface.Purpose))
			}
		case purposeVLAN:
			if iface.Label == nil || *iface.Label == "" {
				return errInvalid(at+".label", "A VLAN interface needs a label")
			}
		default:
			return errInvalid(at+".purpose", "Must be one of public, vlan, vpc")
		}
		seen[iface.Purpose] = true
		if iface.Purpose != purposeVPC {
			if iface.IPv4 != nil && iface.IPv4.NAT1To1 != nil {
				return errInvalid(at+".ipv4.nat_1_1", "A 1:1 NAT maps a public address onto a VPC address; only a VPC interface can have one")
			}
			continue
		}
		if iface.SubnetID == nil {
			return errInvalid(at+".subnet_id", "A VPC interface needs a subnet_id")
		}
		sub, ok := e.st.subnets[*iface.SubnetID]
		if !ok {
			return errInvalid(at+".subnet_id", "Subnet not found")
		}
		if v := e.st.vpcs[sub.VPCID]; v.Region != regionID {
			return errInvalid(at+".subnet_id", fmt.Sprintf("Subnet %d belongs to a VPC in %s, not %s", sub.ID, v.Region, regionID))
		}
		if iface.IPv4 != nil && iface.IPv4.VPC != "" {
			addr, err := netip.ParseAddr(iface.IPv4.VPC)
			if err != nil || !netip.MustParsePrefix(sub.IPv4).Contains(addr) {
				return errInvalid(at+".ipv4.vpc", "Must be an address in the subnet's range "+sub.IPv4)
			}
		}
	}
	return nil
}

// validateConfigInterfaces checks interfaces for a profile of the Linode, which cannot have
// them if its interfaces are Linode interfaces.
func (e *Emulator) validateConfigInterfaces(in *instance, field string, ifaces []configInterfaceRequest) *apiError {
	if len(ifaces) > 0 && in.generation() == generationLinode {
		return errInvalid(field, "This Linode uses Linode interfaces; its configuration profiles cannot have interfaces")
	}
	return e.validateInterfaces(field, in.Region, ifaces)
}

// newInterfaces builds validated interfaces, giving each VPC interface the next free address of
// its subnet and, for nat_1_1 "any", the Linode's public address.
func (e *Emulator) newInterfaces(reqs []configInterfaceRequest, publicIPv4 string) []*configInterface {
	out := make([]*configInterface, 0, len(reqs))
	for _, req := range reqs {
		iface := &configInterface{ID: e.st.nextID("interface"), Purpose: req.Purpose, Primary: req.Primary}
		switch req.Purpose {
		case purposeVLAN:
			iface.Label = *req.Label
			setIfGiven(&iface.IPAMAddress, req.IPAMAddress)
		case purposeVPC:
			sub := e.st.subnets[*req.SubnetID]
			iface.SubnetID, iface.VPCID = sub.ID, sub.VPCID
			if req.IPv4 != nil && req.IPv4.VPC != "" {
				iface.VPCAddress = req.IPv4.VPC
			} else {
				iface.VPCAddress = e.freeSubnetAddress(sub)
			}
			if req.IPv4 != nil && req.IPv4.NAT1To1 != nil && *req.IPv4.NAT1To1 == "any" {
				iface.NAT1To1 = publicIPv4
			}
		}
		out = append(out, iface)
	}
	return out
}

// freeSubnetAddress is the lowest address of the subnet no interface holds, skipping the first
// two, which the API reserves.
func (e *Emulator) freeSubnetAddress(sub *subnet) string {
	taken := map[string]bool{}
	for _, in := range e.st.instances {
		for _, a := range in.vpcAttachments() {
			if a.SubnetID == sub.ID {
				taken[a.Address] = true
			}
		}
	}
	prefix := netip.MustParsePrefix(sub.IPv4).Masked()
	addr := prefix.Addr().Next().Next()
	for taken[addr.String()] && prefix.Contains(addr.Next()) {
		addr = addr.Next()
	}
	return addr.String()
}

// subnetLinodes lists the Linodes with an interface on the subnet, as the subnet's "linodes".
func (e *Emulator) subnetLinodes(subnetID int) []subnetLinodeWire {
	out := []subnetLinodeWire{}
	for _, id := range sortedKeys(e.st.instances) {
		in := e.st.instances[id]
		var ifaces []subnetLinodeInterfaceWire
		for _, a := range in.vpcAttachments() {
			if a.SubnetID == subnetID {
				ifaces = append(ifaces, subnetLinodeInterfaceWire{ID: a.InterfaceID, Active: a.Active, ConfigID: a.ConfigID})
			}
		}
		if len(ifaces) > 0 {
			out = append(out, subnetLinodeWire{ID: in.ID, Interfaces: ifaces})
		}
	}
	return out
}

type subnetLinodeInterfaceWire struct {
	ID       int  `json:"id"`
	Active   bool `json:"active"`
	ConfigID *int `json:"config_id"`
}

type subnetLinodeWire struct {
	ID         int                         `json:"id"`
	Interfaces []subnetLinodeInterfaceWire `json:"interfaces"`
}

func (e *Emulator) newConfig(label string, now time.Time) *instanceConfig {
	return &instanceConfig{
		ID: e.st.nextID("config"), Label: label, Kernel: "linode/latest-64bit",
		Devices: map[string]*configDevice{}, Created: now, Updated: now,
	}
}

// configsToWire is the Linode's configuration profiles as listed.
func configsToWire(in *instance) []configWire {
	return toWires(in.Deployment.Configs, func(cfg *instanceConfig) configWire { return configToWire(in, cfg) })
}

func (e *Emulator) getConfig(r *http.Request) (any, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, err
	}
	id, convErr := strconv.Atoi(r.PathValue("configId"))
	if convErr != nil {
		return nil, errNotFound()
	}
	for _, cfg := range in.Deployment.Configs {
		if cfg.ID == id {
			return configToWire(in, cfg), nil
		}
	}
	return nil, errNotFound()
}

func (req *configCreateRequest) validate() *apiError {
	if len(req.Label) < 1 || len(req.Label) > 48 {
		return errInvalid("label", "Length must be 1-48 characters")
	}
	for slot := range req.Devices {
		if !slices.Contains(configDevices, slot) {
			return errInvalid("devices", "Unknown device "+slot)
		}
	}
	return nil
}

func (e *Emulator) createConfig(in *instance, req configCreateRequest) (any, *apiError) {
	if err := e.validateConfigInterfaces(in, "interfaces", req.Interfaces); err != nil {
		return nil, err
	}
	cfg := e.newConfig(req.Label, e.clock.Now())
	if req.Kernel != "" {
		cfg.Kernel = req.Kernel
	}
	cfg.Comments = req.Comments
	for slot, dev := range req.Devices {
		cfg.Devices[slot] = dev
	}
	cfg.Interfaces = e.newInterfaces(req.Interfaces, in.publicIPv4())
	in.Deployment.Configs = append(in.Deployment.Configs, cfg)
	return configToWire(in, cfg), nil
}

// updateConfig changes a profile's label, kernel, comments and devices; the devices given replace
// the profile's, and each must be a disk of the Linode. Interfaces change through the profile's
// interfaces routes: null, as linodego sends when it has none to give, leaves them as they are.
func (e *Emulator) updateConfig(r *http.Request) (any, *apiError) {
	var req struct {
		configCreateRequest
		Interfaces *[]configInterfaceRequest `json:"interfaces"`
	}
	present, err := decodeBodyKeys(r, &req)
	if err != nil {
		return nil, err
	}
	if req.Interfaces != nil {
		return nil, errInvalid("interfaces", "The emulator changes a profile's interfaces through its interfaces routes only")
	}
	if present["label"] && (len(req.Label) < 1 || len(req.Label) > 48) {
		return nil, errInvalid("label", "Length must be 1-48 characters")
	}
	in, cfg, err := e.lookupConfig(r)
	if err != nil {
		return nil, err
	}
	if req.Devices != nil {
		if err := validateDevices(in, req.Devices); err != nil {
			return nil, err
		}
		cfg.Devices = map[string]*configDevice{}
		for slot, dev := range req.Devices {
			if dev != nil {
				cfg.Devices[slot] = dev
			}
		}
	}
	if req.Label != "" {
		cfg.Label = req.Label
	}
	if req.Kernel != "" {
		cfg.Kernel = req.Kernel
	}
	if present["comments"] {
		cfg.Comments = req.Comments
	}
	cfg.Updated = e.clock.Now()
	return configToWire(in, cfg), nil
}

// validateDevices accepts device slots sda to sdh holding disks of the Linode, each in one slot
// at most. Volumes are not emulated.
func validateDevices(in *instance, devices map[string]*configDevice) *apiError {
	used := map[int]string{}
	for _, slot := range slices.Sorted(maps.Keys(devices)) {
		dev := devices[slot]
		if !slices.Contains(configDevices, slot) {
			return errInvalid("devices", "Unknown device "+slot)
		}
		if dev == nil {
			continue
		}
		if dev.VolumeID != nil {
			return errInvalid("devices."+slot+".volume_id", "The emulator has no volumes")
		}
		if !slices.ContainsFunc(in.Deployment.Disks, func(d *instanceDisk) bool { return d.ID == dev.DiskID }) {
			return errInvalid("devices."+slot+".disk_id", fmt.Sprintf("Disk %d is not a disk of this Linode", dev.DiskID))
		}
		if other, taken := used[dev.DiskID]; taken {
			return errInvalid("devices."+slot+".disk_id", fmt.Sprintf("Disk %d is already in %s", dev.DiskID, other))
		}
		used[dev.DiskID] = slot
	}
	return nil
}

// lookupConfig finds the profile of the request's Linode.
func (e *Emulator) lookupConfig(r *http.Request) (*instance, *instanceConfig, *apiError) {
	in, err := e.lookupInstance(r)
	if err != nil {
		return nil, nil, err
	}
	id, convErr := strconv.Atoi(r.PathValue("configId"))
	if convErr != nil {
		return nil, nil, errNotFound()
	}
	for _, cfg := range in.Deployment.Configs {
		if cfg.ID == id {
			return in, cfg, nil
		}
	}
	return nil, nil, errNotFound()
}

// listConfigInterfaces answers a profile's interfaces as a bare array, not a page, as the API does.
func (e *Emulator) listConfigInterfaces(r *http.Request) (any, *apiError) {
	in, cfg, err := e.lookupConfig(r)
	if err != nil {
		return nil, err
	}
	return configToWire(in, cfg).Interfaces, nil
}

func (e *Emulator) getConfigInterface(r *http.Request) (any, *apiError) {
	in, cfg, err := e.lookupConfig(r)
	if err != nil {
		return nil, err
	}
	for _, iface := range configToWire(in, cfg).Interfaces {
		if strconv.Itoa(iface.ID) == r.PathValue("interfaceId") {
			return iface, nil
		}
	}
	return nil, errNotFound()
}

// appendConfigInterface adds an interface at the end of a profile's, checked with the ones it
// has; it becomes active when the Linode next boots with the profile.
func (e *Emulator) appendConfigInterface(at found[*instance, *instanceConfig], req configInterfaceRequest) (any, *apiError) {
	in, cfg := at.parent, at.child
	all := make([]configInterfaceRequest, 0, len(cfg.Interfaces)+1)
	for _, iface := range cfg.Interfaces {
		all = append(all, configInterfaceRequest{Purpose: iface.Purpose, Label: ptrTo(iface.Label), SubnetID: ptrTo(iface.SubnetID)})
	}
	all = append(all, req)
	if err := e.validateConfigInterfaces(in, "interfaces", all); err != nil {
		for i := range err.Errors {
			err.Errors[i].Field = strings.TrimPrefix(err.Errors[i].Field, fmt.Sprintf("interfaces[%d].", len(cfg.Interfaces)))
		}
		return nil, err
	}
	iface := e.newInterfaces([]configInterfaceRequest{req}, in.publicIPv4())[0]
	cfg.Interfaces = append(cfg.Interfaces, iface)
	cfg.Updated = e.clock.Now()
	return iface.toWire(false), nil
}

func (e *Emulator) deleteConfigInterface(r *http.Request) (any, *apiError) {
	_, cfg, err := e.lookupConfig(r)
	if err != nil {
		return nil, err
	}
	before := len(cfg.Interfaces)
	cfg.Interfaces = slices.DeleteFunc(cfg.Interfaces, func(iface *configInterface) bool {
		return strconv.Itoa(iface.ID) == r.PathValue("interfaceId")
	})
	if len(cfg.Interfaces) == before {
		return nil, errNotFound()
	}
	cfg.Updated = e.clock.Now()
	return emptyObject{}, nil
}
