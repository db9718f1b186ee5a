package v1alpha1

import (
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LinodeNodeClass is the alpha provider's LinodeNodeClass. It is deprecated: use
// karpenter.k8s.linode/v1, which stores every object.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=linodenodeclasses,scope=Cluster,categories=karpenter,shortName={linodenc,lnc,lncs}
// +kubebuilder:subresource:status
// +kubebuilder:deprecatedversion:warning="karpenter.k8s.linode/v1alpha1 LinodeNodeClass is deprecated; use karpenter.k8s.linode/v1 (docs/migrating.md)"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Role",type="string",JSONPath=".spec.role",priority=1
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

// LinodeNodeClassSpec is the alpha spec. Every optional field is a pointer, so that a field set
// to its zero value reads back as written. The CEL rules beyond the alpha CRD's refuse what
// Linode cannot do, rather than store a field that would not act (docs/migrating.md).
// +kubebuilder:validation:XValidation:rule="!has(self.ipv6Options) || has(self.vpcID)",message="ipv6Options sets the IPv6 of the VPC interface, which only vpcID gives a node: set vpcID, or remove ipv6Options"
// +kubebuilder:validation:XValidation:rule="!has(self.dataDisks) || has(self.osDisk)",message="dataDisks need osDisk.size: the boot disk otherwise takes the plan's whole storage and leaves none for them"
type LinodeNodeClassSpec struct {
	// AuthorizedKeys are SSH public keys for root (instance mode). v1: authorizedKeys.
	// +listType=set
	// +optional
	AuthorizedKeys []string `json:"authorizedKeys,omitempty"`
	// AuthorizedUsers are Linode users whose SSH keys are installed (instance mode). v1: authorizedUsers.
	// +listType=set
	// +optional
	AuthorizedUsers []string `json:"authorizedUsers,omitempty"`
	// BackupsEnabled turns on Linode Backups (instance mode). v1: backupsEnabled.
	// +optional
	BackupsEnabled *bool `json:"backupsEnabled,omitempty"`
	// Configuration chooses the kernel (instance mode). v1: kernel.
	// +optional
	Configuration *InstanceConfiguration `json:"configuration,omitempty"`
	// DataDisks are extra disks (instance mode). v1: dataDisks, in device order, labelled by
	// device when they have no label.
	// +kubebuilder:validation:XValidation:rule="[?self.?sdb.?filesystem, ?self.?sdc.?filesystem, ?self.?sdd.?filesystem, ?self.?sde.?filesystem, ?self.?sdf.?filesystem, ?self.?sdg.?filesystem, ?self.?sdh.?filesystem].all(f, f in ['ext4', 'ext3', 'raw'])",message="dataDisks filesystems are ext4, ext3 or raw: Karpenter formats data disks for cloud-init to mount, and swap_size gives the swap disk"
	// +kubebuilder:validation:XValidation:rule="[has(self.sdb), has(self.sdc), has(self.sdd), has(self.sde), has(self.sdf), has(self.sdg), has(self.sdh)].filter(d, d).size() <= 6",message="dataDisks hold at most 6 disks: a Linode boots with 8 devices, and the boot and swap disks take two"
	// +kubebuilder:validation:XValidation:rule="[?self.?sdb.?diskID, ?self.?sdc.?diskID, ?self.?sdd.?diskID, ?self.?sde.?diskID, ?self.?sdf.?diskID, ?self.?sdg.?diskID, ?self.?sdh.?diskID].size() == 0",message="dataDisks diskID cannot be set: Karpenter creates each node's disks, and a disk id names a disk of one Linode"
	// +optional
	DataDisks *InstanceDisks `json:"dataDisks,omitempty"`
	// DiskEncryption is Linode's local disk encryption. v1: diskEncryption.
	// +kubebuilder:validation:Enum=enabled;disabled
	// +optional
	DiskEncryption *string `json:"diskEncryption,omitempty"`
	// FirewallID is the Cloud Firewall of every node. v1: firewallID.
	// +optional
	FirewallID *int `json:"firewallID,omitempty"`
	// Image is the image of each node (instance mode). v1: image.
	// +optional
	Image *string `json:"image,omitempty"`
	// IPv6Options asks for IPv6 on the VPC interface of vpcID (instance mode). v1:
	// interfaces[].vpc.ipv6.
	// +optional
	IPv6Options *IPv6Options `json:"ipv6Options,omitempty"`
	// Kubelet tunes the kubelet. v1: kubelet.
	// +kubebuilder:validation:XValidation:message="evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod",rule="has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)):true"
	// +kubebuilder:validation:XValidation:message="evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft",rule="has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod.all(e, (e in self.evictionSoft)):true"
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`
	// LKEK8sVersion pins the node pools' Kubernetes version (LKE Enterprise). v1: lkeK8sVersion.
	// +optional
	LKEK8sVersion *string `json:"lkeK8sVersion,omitempty"`
	// OSDisk is the boot disk (instance mode). v1: rootDiskSizeMB, from its size, and
	// rootDiskLabel.
	// +kubebuilder:validation:XValidation:rule="!has(self.filesystem) || self.filesystem == 'ext4'",message="osDisk.filesystem can only be ext4: Linode makes the boot disk from the image, as ext4"
	// +kubebuilder:validation:XValidation:rule="!has(self.diskID)",message="osDisk.diskID cannot be set: Karpenter creates each node's disks, and a disk id names a disk of one Linode"
	// +optional
	OSDisk *InstanceDisk `json:"osDisk,omitempty"`
	// PlacementGroup is the placement group of every node (instance mode). v1: placementGroup.
	// +optional
	PlacementGroup *PlacementGroup `json:"placementGroup,omitempty"`
	// SwapSize is the swap disk in MiB (instance mode). v1: swapSizeMB.
	// +optional
	SwapSize *int `json:"swap_size,omitempty"`
	// Tags are Linode tags of every node. v1: tags.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// VPCID is the VPC of the nodes (instance mode); it must have a single subnet. v1: vpc.vpcID,
	// or interfaces[].vpc.vpcID with ipv6Options.
	// +optional
	VPCID *int `json:"vpcID,omitempty"`
}

// PlacementGroup names an existing placement group.
type PlacementGroup struct {
	// ID of the placement group.
	// +required
	ID int `json:"id"`
	// CompliantOnly launches only while the group stays compliant. v1: requireCompliance.
	// +optional
	CompliantOnly *bool `json:"compliant_only,omitempty"`
}

// IPv6Options are the IPv6 settings of a Linode's VPC interface; each is immutable once set.
// +kubebuilder:validation:XValidation:rule="!(has(self.isPublicIPv6) && self.isPublicIPv6) || (has(self.enableSLAAC) && self.enableSLAAC) || (has(self.enableRanges) && self.enableRanges)",message="ipv6Options.isPublicIPv6 makes public the IPv6 that enableSLAAC or enableRanges gives: set one of them"
type IPv6Options struct {
	// EnableSLAAC lets the Linode configure its own IPv6 address.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="Value is immutable"
	// +optional
	EnableSLAAC *bool `json:"enableSLAAC,omitempty"`
	// EnableRanges allocates an IPv6 range.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="Value is immutable"
	// +optional
	EnableRanges *bool `json:"enableRanges,omitempty"`
	// IsPublicIPv6 makes the range publicly routable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="Value is immutable"
	// +optional
	IsPublicIPv6 *bool `json:"isPublicIPv6,omitempty"`
}

// InstanceDisks are the extra disks of a Linode, by device.
type InstanceDisks struct {
	// +optional
	SDB *InstanceDisk `json:"sdb,omitempty"`
	// +optional
	SDC *InstanceDisk `json:"sdc,omitempty"`
	// +optional
	SDD *InstanceDisk `json:"sdd,omitempty"`
	// +optional
	SDE *InstanceDisk `json:"sde,omitempty"`
	// +optional
	SDF *InstanceDisk `json:"sdf,omitempty"`
	// +optional
	SDG *InstanceDisk `json:"sdg,omitempty"`
	// +optional
	SDH *InstanceDisk `json:"sdh,omitempty"`
}

// InstanceDisk is one disk of a Linode.
type InstanceDisk struct {
	// DiskID is the id Linode gave the disk.
	// +optional
	DiskID *int `json:"diskID,omitempty"`
	// Size of the disk, e.g. "20Gi". It reads back in canonical form ("20480Mi" as "20Gi").
	// +required
	Size resource.Quantity `json:"size"`
	// Label of the disk.
	// +optional
	Label *string `json:"label,omitempty"`
	// Filesystem of the disk.
	// +kubebuilder:validation:Enum=raw;swap;ext3;ext4;initrd
	// +optional
	Filesystem *string `json:"filesystem,omitempty"`
}

// InstanceConfiguration is the boot configuration of a Linode.
type InstanceConfiguration struct {
	// Kernel to boot, e.g. linode/latest-64bit.
	// +optional
	Kernel *string `json:"kernel,omitempty"`
}

// KubeletConfiguration is the alpha kubelet configuration. Its maps hold strings, as the alpha
// schema does: durations stay as written too.
type KubeletConfiguration struct {
	// +optional
	ClusterDNS []string `json:"clusterDNS,omitempty"`
	// +kubebuilder:validation:Minimum:=0
	// +optional
	MaxPods *int32 `json:"maxPods,omitempty"`
	// +kubebuilder:validation:Minimum:=0
	// +optional
	PodsPerCore *int32 `json:"podsPerCore,omitempty"`
	// +kubebuilder:validation:XValidation:message="valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']",rule="self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')"
	// +kubebuilder:validation:XValidation:message="systemReserved value cannot be a negative resource quantity",rule="self.all(x, !self[x].startsWith('-'))"
	// +optional
	SystemReserved map[string]string `json:"systemReserved,omitempty"`
	// +kubebuilder:validation:XValidation:message="valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']",rule="self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')"
	// +kubebuilder:validation:XValidation:message="kubeReserved value cannot be a negative resource quantity",rule="self.all(x, !self[x].startsWith('-'))"
	// +optional
	KubeReserved map[string]string `json:"kubeReserved,omitempty"`
	// +kubebuilder:validation:XValidation:message="valid keys for evictionHard are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionHard map[string]string `json:"evictionHard,omitempty"`
	// +kubebuilder:validation:XValidation:message="valid keys for evictionSoft are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionSoft map[string]string `json:"evictionSoft,omitempty"`
	// +kubebuilder:validation:XValidation:message="valid keys for evictionSoftGracePeriod are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionSoftGracePeriod map[string]string `json:"evictionSoftGracePeriod,omitempty"`
	// +optional
	EvictionMaxPodGracePeriod *int32 `json:"evictionMaxPodGracePeriod,omitempty"`
	// CPUCFSQuota enforces CPU limits with CFS quota. v1: kubelet.cpuCFSQuota.
	// +optional
	CPUCFSQuota *bool `json:"cpuCFSQuota,omitempty"`
}

// LinodeNodeClassStatus is the alpha status. The v1 controller writes the v1 status; this view
// shows its conditions and its resolved image.
type LinodeNodeClassStatus struct {
	// LinodeImages are the images resolved for the class.
	// +optional
	LinodeImages []LinodeImage `json:"linodeImages,omitempty"`
	// Conditions tell whether the class is usable.
	// +optional
	Conditions []status.Condition `json:"conditions,omitempty"`
}

// LinodeImage is a resolved image.
type LinodeImage struct {
	// +required
	ID string `json:"id"`
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// +optional
	Label string `json:"label,omitempty"`
	// +optional
	Requirements []corev1.NodeSelectorRequirement `json:"requirements,omitempty"`
}
