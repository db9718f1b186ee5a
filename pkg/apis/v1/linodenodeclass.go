package v1

import (
	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LinodeNodeClass is the Linode-specific configuration of the nodes that Karpenter launches for the
// NodePools that reference it. One NodeClass serves both modes: the LKE fields apply when the
// controller runs in LKE mode, the instance fields when it launches plain Linodes.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=linodenodeclasses,scope=Cluster,categories=karpenter,shortName={linodenc,lnc,lncs}
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Firewall",type="integer",JSONPath=".spec.firewallID"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".status.image.id",priority=1
// +kubebuilder:printcolumn:name="Kubernetes",type="string",JSONPath=".status.kubernetesVersion",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LinodeNodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LinodeNodeClassSpec   `json:"spec,omitempty"`
	Status LinodeNodeClassStatus `json:"status,omitempty"`
}

// LinodeNodeClassList is a list of LinodeNodeClasses.
// +kubebuilder:object:root=true
type LinodeNodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LinodeNodeClass `json:"items"`
}

// LinodeNodeClassSpec is the desired shape of every node launched with this class.
// +kubebuilder:validation:XValidation:rule="!(has(self.image) && has(self.imageSelector))",message="image and imageSelector are mutually exclusive; set one of them"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.placementGroup) == has(self.placementGroup)",message="placementGroup is immutable; create a new LinodeNodeClass to use another group"
// +kubebuilder:validation:XValidation:rule="!has(self.swapSizeMB) || !has(self.rootDiskSizeMB) || self.swapSizeMB < self.rootDiskSizeMB",message="swapSizeMB must be smaller than rootDiskSizeMB"
// +kubebuilder:validation:XValidation:rule="!(has(self.vpc) && has(self.interfaces))",message="vpc and interfaces are mutually exclusive; put the VPC in interfaces"
// +kubebuilder:validation:XValidation:rule="!has(self.dataDisks) || has(self.rootDiskSizeMB)",message="dataDisks need rootDiskSizeMB, to leave room for them in the plan's storage"
// +kubebuilder:validation:XValidation:rule="!has(self.interfaces) || !self.interfaces.exists(i, has(i.firewallID)) || (has(self.interfaceGeneration) && self.interfaceGeneration == 'linode')",message="interfaces[].firewallID needs interfaceGeneration linode; with legacy_config use firewallID"
// +kubebuilder:validation:XValidation:rule="!has(self.dataDisks) || !has(self.rootDiskLabel) || !self.dataDisks.exists(d, d.label == self.rootDiskLabel)",message="dataDisks[].label must differ from rootDiskLabel: labels tell a node's disks apart"
type LinodeNodeClassSpec struct {
	// Tags are extra Linode tags put on every node pool and Linode launched with this class.
	// Linode limits tags to 50 characters. The provider's own tags (karpenter.sh/...,
	// karpenter.k8s.linode/..., kubernetes.io/...) and the ones LKE writes (nodepool=<id>,
	// lke<clusterID>) are reserved.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, !t.startsWith('karpenter.sh/') && !t.startsWith('karpenter.k8s.linode/') && !t.startsWith('kubernetes.io/'))",message="tags must not use the reserved prefixes karpenter.sh/, karpenter.k8s.linode/ or kubernetes.io/"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !t.startsWith('nodepool=') && !t.matches('^lke[0-9]+$'))",message="tags nodepool=<id> and lke<clusterID> are written by LKE and are reserved"
	// +listType=set
	// +optional
	Tags []Tag `json:"tags,omitempty"`
	// FirewallID attaches a Linode Cloud Firewall to every node.
	// +kubebuilder:validation:Minimum=1
	// +optional
	FirewallID *int `json:"firewallID,omitempty"`
	// DiskEncryption sets Linode's local disk encryption; when unset the region's default applies.
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`
	// Kubelet tunes the kubelet of every node and the allocatable resources Karpenter expects.
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`

	// LKEK8sVersion pins the Kubernetes version of the node pools (LKE Enterprise only), as
	// "<major>.<minor>", e.g. "1.33". When unset, nodes follow the cluster's version.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+$`
	// +optional
	LKEK8sVersion *string `json:"lkeK8sVersion,omitempty"`
	// UpdateStrategy is how LKE Enterprise applies a version change to the node pools.
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`

	// Image is the Linode image of each node in instance mode, e.g. "linode/ubuntu24.04".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Image *string `json:"image,omitempty"`
	// ImageSelector picks the newest matching image in instance mode, instead of Image.
	// +optional
	ImageSelector *ImageSelector `json:"imageSelector,omitempty"`
	// AuthorizedKeys are SSH public keys installed for root on each node (instance mode).
	// +kubebuilder:validation:MaxItems=25
	// +optional
	AuthorizedKeys []string `json:"authorizedKeys,omitempty"`
	// AuthorizedUsers are Linode user names whose SSH keys are installed (instance mode).
	// +kubebuilder:validation:MaxItems=25
	// +optional
	AuthorizedUsers []string `json:"authorizedUsers,omitempty"`
	// RootDiskSizeMB is the size of the boot disk (instance mode); the plan's whole disk when unset.
	// +kubebuilder:validation:Minimum=1024
	// +optional
	RootDiskSizeMB *int32 `json:"rootDiskSizeMB,omitempty"`
	// SwapSizeMB is the size of the swap disk (instance mode). Kubernetes nodes usually run without swap.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SwapSizeMB *int32 `json:"swapSizeMB,omitempty"`
	// VPC attaches each node to a VPC subnet (instance mode), beside its public interface, or
	// alone when nat1To1 maps a public address onto it. For any other layout, use interfaces.
	// +optional
	VPC *VPCConfiguration `json:"vpc,omitempty"`
	// InterfaceGeneration is the kind of network interfaces each node gets (instance mode):
	// legacy_config puts them in the Linode's configuration profile, linode gives them to the
	// Linode itself ("Linode Interfaces"), each with its own firewall. When unset, the account's
	// default (GET /account/settings) applies.
	// +optional
	InterfaceGeneration *InterfaceGeneration `json:"interfaceGeneration,omitempty"`
	// Interfaces are each node's network interfaces, in order (instance mode); the first public
	// or VPC interface carries the default route. When unset, a node has one public interface,
	// or the interfaces vpc gives.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:XValidation:rule="self.filter(i, has(i.public)).size() <= 1 && self.filter(i, has(i.vpc)).size() <= 1",message="interfaces may hold at most one public and one vpc interface"
	// +kubebuilder:validation:XValidation:rule="self.exists(i, has(i.public) || has(i.vpc))",message="interfaces need a public or a vpc interface: a node with VLANs alone cannot reach the cluster"
	// +optional
	Interfaces []NetworkInterface `json:"interfaces,omitempty"`
	// DataDisks are extra disks of each node (instance mode), created by Linode with their
	// filesystem and put, in order, on the devices after the boot and swap disks (/dev/sdc on);
	// cloud-init mounts each where mountPath says. The boot disk then takes rootDiskSizeMB, which
	// must leave room for them in the plan's storage.
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:XValidation:rule="self.all(a, !has(a.mountPath) || self.filter(b, has(b.mountPath) && b.mountPath == a.mountPath).size() == 1)",message="dataDisks[].mountPath must differ between disks"
	// +listType=map
	// +listMapKey=label
	// +optional
	DataDisks []DataDisk `json:"dataDisks,omitempty"`
	// RootDiskLabel is the label of each node's boot disk (instance mode).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=48
	// +optional
	RootDiskLabel *string `json:"rootDiskLabel,omitempty"`
	// Kernel is the kernel each node boots (instance mode), e.g. "linode/grub2" or
	// "linode/latest-64bit". When unset, Linode's default for the image applies.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Kernel *string `json:"kernel,omitempty"`
	// PrivateIP adds a private IPv4 address to each node (instance mode).
	// +optional
	PrivateIP *bool `json:"privateIP,omitempty"`
	// PlacementGroup puts every node of the class in one Linode placement group (instance mode).
	// The group cannot change once set: nodes cannot move between groups, so a change would split
	// the fleet across two groups and break the group's guarantee. requireCompliance may change.
	// +kubebuilder:validation:XValidation:rule="(has(self.id) ? has(oldSelf.id) && self.id == oldSelf.id : !has(oldSelf.id)) && (has(self.label) ? has(oldSelf.label) && self.label == oldSelf.label : !has(oldSelf.label)) && (has(self.policy) ? has(oldSelf.policy) && self.policy == oldSelf.policy : !has(oldSelf.policy))",message="placementGroup is immutable but for requireCompliance; create a new LinodeNodeClass to use another group"
	// +optional
	PlacementGroup *PlacementGroupSelector `json:"placementGroup,omitempty"`
	// BackupsEnabled turns on the Linode Backup service for each node (instance mode).
	// +optional
	BackupsEnabled *bool `json:"backupsEnabled,omitempty"`
	// MaintenancePolicy is what Linode does to each node when it maintains the node's host
	// (instance mode): linode/migrate moves the Linode to another host while it runs,
	// linode/power_off_on powers it off for the maintenance and on again after. When unset, the
	// account's default policy applies. Either way Karpenter replaces a node before maintenance
	// that would take it down. LKE node pools cannot choose a policy: their Linodes take the
	// account's default, and a class that sets one is not Ready in LKE mode.
	// +optional
	MaintenancePolicy *MaintenancePolicy `json:"maintenancePolicy,omitempty"`
	// UserData is extra cloud-init configuration merged with the provider's own bootstrap
	// (instance mode). It must be a cloud-config document.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	UserData *string `json:"userData,omitempty"`
}

// Tag is a Linode tag.
// +kubebuilder:validation:MinLength=3
// +kubebuilder:validation:MaxLength=50
type Tag string

// DiskEncryption is Linode's local disk encryption setting.
// +kubebuilder:validation:Enum=enabled;disabled
type DiskEncryption string

const (
	DiskEncryptionEnabled  DiskEncryption = "enabled"
	DiskEncryptionDisabled DiskEncryption = "disabled"
)

// UpdateStrategy is how LKE Enterprise rolls a new Kubernetes version onto a node pool.
// +kubebuilder:validation:Enum=rolling_update;on_recycle
type UpdateStrategy string

const (
	UpdateStrategyRollingUpdate UpdateStrategy = "rolling_update"
	UpdateStrategyOnRecycle     UpdateStrategy = "on_recycle"
)

// MaintenancePolicy is a Linode maintenance policy, by the slug the Linode API uses.
// +kubebuilder:validation:Enum=linode/migrate;linode/power_off_on
type MaintenancePolicy string

const (
	MaintenancePolicyMigrate    MaintenancePolicy = "linode/migrate"
	MaintenancePolicyPowerOffOn MaintenancePolicy = "linode/power_off_on"
)

// ImageSelector picks an image by its attributes; the newest non-deprecated match wins.
// +kubebuilder:validation:XValidation:rule="has(self.label) || has(self.vendor)",message="imageSelector needs a label or a vendor"
type ImageSelector struct {
	// Label is a prefix of the image label, e.g. "Ubuntu 24.04".
	// +kubebuilder:validation:MinLength=1
	// +optional
	Label *string `json:"label,omitempty"`
	// Vendor is the image vendor, e.g. "Ubuntu".
	// +kubebuilder:validation:MinLength=1
	// +optional
	Vendor *string `json:"vendor,omitempty"`
}

// VPCConfiguration selects the VPC subnet of each node: by subnet id; by VPC id, with the
// subnet's label or, when the VPC has a single subnet, that one; or by VPC and subnet labels.
// +kubebuilder:validation:XValidation:rule="[has(self.subnetID), has(self.vpcID), has(self.vpcLabel)].filter(x, x).size() == 1",message="set exactly one of vpc.subnetID, vpc.vpcID and vpc.vpcLabel"
// +kubebuilder:validation:XValidation:rule="!has(self.vpcLabel) || has(self.subnetLabel)",message="vpc.vpcLabel needs vpc.subnetLabel"
// +kubebuilder:validation:XValidation:rule="!has(self.subnetID) || !has(self.subnetLabel)",message="vpc.subnetLabel picks a subnet of vpc.vpcID or vpc.vpcLabel; with vpc.subnetID leave it unset"
type VPCConfiguration struct {
	// SubnetID is the id of the subnet.
	// +kubebuilder:validation:Minimum=1
	// +optional
	SubnetID *int `json:"subnetID,omitempty"`
	// VPCID is the id of the VPC that holds SubnetLabel; without SubnetLabel, the VPC must have
	// exactly one subnet, which nodes then join.
	// +kubebuilder:validation:Minimum=1
	// +optional
	VPCID *int `json:"vpcID,omitempty"`
	// VPCLabel is the label of the VPC that holds SubnetLabel.
	// +kubebuilder:validation:MinLength=1
	// +optional
	VPCLabel *string `json:"vpcLabel,omitempty"`
	// SubnetLabel is the label of the subnet inside VPCID or VPCLabel.
	// +kubebuilder:validation:MinLength=1
	// +optional
	SubnetLabel *string `json:"subnetLabel,omitempty"`
	// NAT1To1 gives each node a public IPv4 address mapped onto its VPC address.
	// +optional
	NAT1To1 *bool `json:"nat1To1,omitempty"`
}

// PlacementGroupSelector names an existing placement group, or one the provider creates.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.label)",message="set exactly one of placementGroup.id and placementGroup.label"
// +kubebuilder:validation:XValidation:rule="!has(self.id) || !has(self.policy)",message="placementGroup.policy applies only to a group created by label"
type PlacementGroupSelector struct {
	// ID of an existing placement group.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ID *int `json:"id,omitempty"`
	// Label of the group; it is created (anti-affinity) in the cluster's region when missing.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Label *string `json:"label,omitempty"`
	// Policy of a group created by label: strict refuses a launch that would break
	// anti-affinity, flexible allows it. Defaults to strict.
	// +kubebuilder:validation:Enum=strict;flexible
	// +kubebuilder:validation:MaxLength=8
	// +optional
	Policy *string `json:"policy,omitempty"`
	// RequireCompliance launches a node only while the group is compliant: when Linode reports
	// the group non-compliant (a flexible group that had to break its policy), launches wait
	// instead of adding to it.
	// +optional
	RequireCompliance *bool `json:"requireCompliance,omitempty"`
}

// InterfaceGeneration is a Linode interface generation, by the name the Linode API uses.
// +kubebuilder:validation:Enum=legacy_config;linode
type InterfaceGeneration string

const (
	InterfaceGenerationLegacyConfig InterfaceGeneration = "legacy_config"
	InterfaceGenerationLinode       InterfaceGeneration = "linode"
)

// NetworkInterface is one network interface of a node: public, VPC or VLAN.
// +kubebuilder:validation:XValidation:rule="[has(self.public), has(self.vpc), has(self.vlan)].filter(x, x).size() == 1",message="each interface sets exactly one of public, vpc and vlan"
// +kubebuilder:validation:XValidation:rule="!has(self.firewallID) || !has(self.vlan)",message="a vlan interface has no firewall; set firewallID on a public or vpc interface"
type NetworkInterface struct {
	// Public is an interface on the public internet.
	// +optional
	Public *PublicInterface `json:"public,omitempty"`
	// VPC is an interface in a VPC subnet.
	// +optional
	VPC *VPCInterface `json:"vpc,omitempty"`
	// VLAN is an interface on a private VLAN.
	// +optional
	VLAN *VLANInterface `json:"vlan,omitempty"`
	// FirewallID is the Cloud Firewall of this interface (interfaceGeneration linode). A change
	// replaces the nodes.
	// +kubebuilder:validation:Minimum=1
	// +optional
	FirewallID *int `json:"firewallID,omitempty"`
}

// PublicInterface is a node's interface on the public internet.
type PublicInterface struct {
	// IPv6Ranges are routed IPv6 ranges of each node, by prefix length: "/64" or "/56".
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum="/64";"/56"
	// +optional
	IPv6Ranges []string `json:"ipv6Ranges,omitempty"`
}

// VPCInterface is a node's interface in a VPC subnet.
type VPCInterface struct {
	VPCConfiguration `json:",inline"`
	// IPv4Ranges are extra ranges of the subnet routed to each node, by prefix length ("/28")
	// or as a CIDR inside the subnet: pod addresses, for a CNI that routes them natively.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.matches('^/([0-9]|[12][0-9]|3[0-2])$') || (isCIDR(r) && cidr(r).ip().family() == 4))",message="ipv4Ranges entries are a prefix length such as /28 or an IPv4 CIDR such as 10.0.0.16/28"
	// +optional
	IPv4Ranges []string `json:"ipv4Ranges,omitempty"`
	// IPv6 gives each node IPv6 on the subnet, where the VPC has an IPv6 range.
	// +optional
	IPv6 *VPCIPv6 `json:"ipv6,omitempty"`
}

// VPCIPv6 are the IPv6 settings of a VPC interface.
// +kubebuilder:validation:XValidation:rule="(has(self.slaac) && self.slaac) || (has(self.range) && self.range)",message="ipv6 needs slaac or range"
type VPCIPv6 struct {
	// SLAAC gives each node an address of the subnet's IPv6 range by SLAAC.
	// +optional
	SLAAC *bool `json:"slaac,omitempty"`
	// Range routes a /64 of the subnet's IPv6 range to each node.
	// +optional
	Range *bool `json:"range,omitempty"`
	// Public makes the node's IPv6 reachable from the internet.
	// +optional
	Public *bool `json:"public,omitempty"`
}

// VLANInterface is a node's interface on a private VLAN.
type VLANInterface struct {
	// Label of the VLAN; it is created in the region when missing.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9-]+$`
	// +required
	Label string `json:"label"`
	// IPAMAddress is the node's address on the VLAN in CIDR form, e.g. "10.0.0.1/24". Since
	// every node of the class takes the same one, leave it unset unless the NodePool holds a
	// single node.
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="vlan.ipamAddress is an address in CIDR form, e.g. 10.0.0.1/24"
	// +optional
	IPAMAddress *string `json:"ipamAddress,omitempty"`
}

// DataDisk is an extra disk of each node.
// +kubebuilder:validation:XValidation:rule="!has(self.mountPath) || !has(self.filesystem) || self.filesystem != 'raw'",message="a raw data disk has no filesystem to mount: remove mountPath or choose ext4"
type DataDisk struct {
	// Label names the disk in Linode; labels tell a node's disks apart.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=48
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]+$`
	// +required
	Label string `json:"label"`
	// SizeMB is the size of the disk.
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeMB int32 `json:"sizeMB"`
	// Filesystem of the disk; raw leaves it unformatted (for local volumes). Defaults to ext4.
	// +kubebuilder:validation:Enum=ext4;ext3;raw
	// +optional
	Filesystem *string `json:"filesystem,omitempty"`
	// MountPath is where cloud-init mounts the disk, e.g. "/var/lib/containerd". Unset leaves it
	// unmounted.
	// +kubebuilder:validation:Pattern=`^/[^\s]*$`
	// +kubebuilder:validation:MaxLength=256
	// +optional
	MountPath *string `json:"mountPath,omitempty"`
}

// KubeletConfiguration mirrors the kubelet settings that change a node's allocatable resources.
// Karpenter uses them to compute what fits on a node before it exists.
// +kubebuilder:validation:XValidation:rule="!has(self.imageGCHighThresholdPercent) || !has(self.imageGCLowThresholdPercent) || self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent",message="imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"
// +kubebuilder:validation:XValidation:rule="!has(self.evictionSoft) || (has(self.evictionSoftGracePeriod) && self.evictionSoft.all(k, k in self.evictionSoftGracePeriod))",message="every evictionSoft signal needs an evictionSoftGracePeriod"
type KubeletConfiguration struct {
	// MaxPods caps the pods per node (110 when unset).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=250
	// +optional
	MaxPods *int32 `json:"maxPods,omitempty"`
	// PodsPerCore caps the pods per vCPU; the smaller of this and MaxPods wins.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PodsPerCore *int32 `json:"podsPerCore,omitempty"`
	// KubeReserved is reserved for Kubernetes daemons.
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu','memory','ephemeral-storage','pid'])",message="kubeReserved keys must be cpu, memory, ephemeral-storage or pid"
	// +optional
	KubeReserved map[string]ReservedQuantity `json:"kubeReserved,omitempty"`
	// SystemReserved is reserved for the operating system.
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu','memory','ephemeral-storage','pid'])",message="systemReserved keys must be cpu, memory, ephemeral-storage or pid"
	// +optional
	SystemReserved map[string]ReservedQuantity `json:"systemReserved,omitempty"`
	// EvictionHard are hard eviction thresholds, as quantities or percentages.
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])",message="evictionHard keys must be kubelet eviction signals such as memory.available"
	// +optional
	EvictionHard map[string]EvictionThreshold `json:"evictionHard,omitempty"`
	// EvictionSoft are soft eviction thresholds, as quantities or percentages.
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])",message="evictionSoft keys must be kubelet eviction signals such as memory.available"
	// +optional
	EvictionSoft map[string]EvictionThreshold `json:"evictionSoft,omitempty"`
	// EvictionSoftGracePeriod is how long each soft threshold must hold before eviction.
	// +kubebuilder:validation:MaxProperties=6
	// +optional
	EvictionSoftGracePeriod map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	// EvictionMaxPodGracePeriod caps pod termination grace during soft eviction, in seconds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	EvictionMaxPodGracePeriod *int32 `json:"evictionMaxPodGracePeriod,omitempty"`
	// ImageGCHighThresholdPercent is the disk usage that starts image garbage collection.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCHighThresholdPercent *int32 `json:"imageGCHighThresholdPercent,omitempty"`
	// ImageGCLowThresholdPercent is the disk usage image garbage collection frees down to.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCLowThresholdPercent *int32 `json:"imageGCLowThresholdPercent,omitempty"`
	// CPUCFSQuota enforces pods' CPU limits with CFS quota (the kubelet's default, true).
	// Instance mode; LKE configures its own kubelets.
	// +optional
	CPUCFSQuota *bool `json:"cpuCFSQuota,omitempty"`
	// ClusterDNS are the DNS server addresses the kubelet gives pods.
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="self.all(ip, isIP(ip))",message="clusterDNS entries must be IP addresses"
	// +optional
	ClusterDNS []string `json:"clusterDNS,omitempty"`
}

// LinodeNodeClassStatus is what the provider resolved from the spec, and whether it is usable.
type LinodeNodeClassStatus struct {
	// Conditions tell whether each part of the spec resolved; Ready rolls them up.
	// +optional
	Conditions []status.Condition `json:"conditions,omitempty"`
	// Image is the image that Image or ImageSelector resolved to.
	// +optional
	Image *ResolvedImage `json:"image,omitempty"`
	// Firewall is the firewall that FirewallID refers to.
	// +optional
	Firewall *ResolvedFirewall `json:"firewall,omitempty"`
	// Subnet is the VPC subnet that VPC resolved to.
	// +optional
	Subnet *ResolvedSubnet `json:"subnet,omitempty"`
	// PlacementGroup is the placement group that PlacementGroup resolved to.
	// +optional
	PlacementGroup *ResolvedPlacementGroup `json:"placementGroup,omitempty"`
	// KubernetesVersion is the Kubernetes version, "<major>.<minor>", that nodes launched with the
	// class run now (LKE mode): lkeK8sVersion, or else the LKE cluster's version, which the
	// controller re-reads every MAINTENANCE_POLL_INTERVAL. Nodes on another version have drifted
	// and are replaced.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// ResolvedImage is a Linode image.
type ResolvedImage struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
}

// ResolvedFirewall is a Linode Cloud Firewall.
type ResolvedFirewall struct {
	ID    int    `json:"id"`
	Label string `json:"label,omitempty"`
}

// ResolvedSubnet is a subnet of a Linode VPC.
type ResolvedSubnet struct {
	ID    int    `json:"id"`
	VPCID int    `json:"vpcID"`
	Label string `json:"label,omitempty"`
}

// ResolvedPlacementGroup is a Linode placement group.
type ResolvedPlacementGroup struct {
	ID     int    `json:"id"`
	Label  string `json:"label,omitempty"`
	Policy string `json:"policy,omitempty"`
}

// Condition types of a LinodeNodeClass; Ready is true when all of them are.
const (
	ConditionTypeFirewallReady       = "FirewallReady"
	ConditionTypeImageReady          = "ImageReady"
	ConditionTypeSubnetReady         = "SubnetReady"
	ConditionTypePlacementGroupReady = "PlacementGroupReady"
	// ConditionTypeMaintenancePolicyReady says whether the mode and region can give nodes the
	// maintenance policy the class asks for.
	ConditionTypeMaintenancePolicyReady = "MaintenancePolicyReady"
	// ConditionTypeValidationSucceeded covers settings checked against the cluster and the API
	// rather than resolved to an object: tier-only fields, region capabilities, a rejected launch.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ConditionTypeAPIAuthorized is false while the Linode API refuses the controller's token:
	// nothing can launch until it accepts one.
	ConditionTypeAPIAuthorized = "APIAuthorized"
)

// StatusConditions returns the class's conditions, with Ready depending on all the others.
func (in *LinodeNodeClass) StatusConditions(opts ...status.ForOption) status.ConditionSet {
	return status.NewReadyConditions(
		ConditionTypeFirewallReady,
		ConditionTypeImageReady,
		ConditionTypeSubnetReady,
		ConditionTypePlacementGroupReady,
		ConditionTypeMaintenancePolicyReady,
		ConditionTypeValidationSucceeded,
		ConditionTypeAPIAuthorized,
	).For(in, opts...)
}

// GetConditions implements status.Object.
func (in *LinodeNodeClass) GetConditions() []status.Condition { return in.Status.Conditions }

// SetConditions implements status.Object.
func (in *LinodeNodeClass) SetConditions(conditions []status.Condition) {
	in.Status.Conditions = conditions
}

// ReservedQuantity is a non-negative resource quantity such as "100m", "512Mi" or "100".
// +kubebuilder:validation:MaxLength=24
// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$`
type ReservedQuantity string

// EvictionThreshold is a kubelet eviction threshold: a percentage ("10%") or a non-negative
// quantity ("100Mi").
// +kubebuilder:validation:MaxLength=24
// +kubebuilder:validation:Pattern=`^([0-9]+([.][0-9]+)?%|[0-9]+([.][0-9]+)?(k|Ki|M|Mi|G|Gi|T|Ti)?)$`
type EvictionThreshold string
