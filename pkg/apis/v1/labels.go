package v1

import (
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
)

// Labels that describe a Linode plan. They are registered as well known so that NodePools and
// pods can select on them ("dedicated CPU, 8+ vCPU, no GPU") and Karpenter core narrows the
// plans it considers instead of rejecting the requirement as unknown.
const (
	LabelInstanceClass      = apis.Group + "/instance-class"       // plan class: standard, dedicated, highmem, premium, gpu, nanode, ...
	LabelInstanceCPU        = apis.Group + "/instance-cpu"         // vCPUs
	LabelInstanceMemory     = apis.Group + "/instance-memory"      // memory in MiB
	LabelInstanceDisk       = apis.Group + "/instance-disk"        // disk in MiB
	LabelInstanceGPUCount   = apis.Group + "/instance-gpu-count"   // GPUs
	LabelInstanceGPUName    = apis.Group + "/instance-gpu-name"    // GPU model, for GPU plans
	LabelInstanceGeneration = apis.Group + "/instance-generation"  // plan generation from the id prefix: g6 -> 6
	LabelInstanceNetworkOut = apis.Group + "/instance-network-out" // outbound bandwidth in Mbit/s
	LabelInstanceTransfer   = apis.Group + "/instance-transfer"    // monthly transfer quota in GB
)

// LabelNodeClaim names, on an LKE node, the NodeClaim its pool was launched for. LKE puts a pool's
// labels on its nodes as they register, so the Node webhook can find the NodeClaim of a joining
// node in the Kubernetes cache alone.
const LabelNodeClaim = apis.Group + "/nodeclaim"

// Annotations the provider writes on NodeClaims and NodeClasses.
const (
	// AnnotationNodeClassHash records the hash of the LinodeNodeClass spec a node was launched
	// with; a different hash later means the node has drifted.
	AnnotationNodeClassHash = apis.Group + "/linodenodeclass-hash"
	// AnnotationNodeClassHashVersion changes when the hashing itself changes, so that an upgrade
	// of the provider does not make every node look drifted.
	AnnotationNodeClassHashVersion = apis.Group + "/linodenodeclass-hash-version"
	// AnnotationMaintenanceWindow records, on the NodeClaim of a node whose Linode has host
	// maintenance that takes it down starting within the maintenance lead time, when that
	// maintenance starts (RFC 3339). Such a NodeClaim has drifted: core replaces the node first.
	AnnotationMaintenanceWindow = apis.Group + "/maintenance-window"
	// AnnotationMaintenanceType is that maintenance's type, as Linode names it (power_off_on,
	// reboot, cold_migration).
	AnnotationMaintenanceType = apis.Group + "/maintenance-type"
)

// AnnotationSizingPolicy on a NodePool says whether the provider's sizing policy narrows the
// plans offered to it for its pending pods (docs/instance-types.md): SizingPolicyDisabled offers
// it every plan its requirements allow, as Karpenter core does on its own; SizingPolicyEnabled,
// or no annotation, follows the controller's SIZING_POLICY setting. The controller logs any other
// value and keeps the setting.
const AnnotationSizingPolicy = apis.Group + "/sizing-policy"

// Values of AnnotationSizingPolicy and of the SIZING_POLICY setting.
const (
	SizingPolicyEnabled  = "enabled"
	SizingPolicyDisabled = "disabled"
)

// NodeClassHashVersion is the current value of AnnotationNodeClassHashVersion. v2 hashes only the
// fields of the running mode (v1 hashed the whole spec); the NodeClass hash controller re-stamps
// NodeClaims of an older version, so that an upgrade replaces no node.
const NodeClassHashVersion = "v2"

// TerminationFinalizer keeps a LinodeNodeClass until no NodeClaim uses it.
const TerminationFinalizer = apis.Group + "/termination"

func init() {
	karpv1.RestrictedLabelDomains.Insert(apis.Group)
	karpv1.WellKnownLabels.Insert(
		LabelInstanceClass,
		LabelInstanceCPU,
		LabelInstanceMemory,
		LabelInstanceDisk,
		LabelInstanceGPUCount,
		LabelInstanceGPUName,
		LabelInstanceGeneration,
		LabelInstanceNetworkOut,
		LabelInstanceTransfer,
	)
}
