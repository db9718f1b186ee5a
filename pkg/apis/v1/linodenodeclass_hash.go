package v1

import (
	"fmt"
	"reflect"

	"github.com/mitchellh/hashstructure/v2"
	"github.com/samber/lo"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// Hash is the hash of the NodeClass's spec, as it applies in mode m, that AnnotationNodeClassHash
// records on each NodeClaim. A node whose recorded hash differs from its NodeClass's current one
// was launched from another spec and has drifted. Only the fields of mode m count (specFields):
// editing a field the mode ignores replaces no node, nor does a launch policy that a running node
// does not hold (placementGroup.requireCompliance). Tags and list-valued settings hash as sets,
// so reordering them is no change, but for the order of interfaces, which decides a node's
// default route. Unset fields do not count, so that a release adding a field to the spec does
// not make every node drift.
func (in *LinodeNodeClass) Hash(m mode.Mode) string {
	spec := hashedSpec(in.Spec, m)
	hash := lo.Must(hashstructure.Hash(spec, hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	}))
	if len(spec.Interfaces) > 1 {
		hash = lo.Must(hashstructure.Hash(struct {
			Spec  uint64
			Order []string
		}{hash, lo.Map(spec.Interfaces, func(i NetworkInterface, _ int) string { return i.kind() })}, hashstructure.FormatV2, nil))
	}
	return fmt.Sprint(hash)
}

// hashedSpec is the part of spec that a node launched in mode m holds.
func hashedSpec(spec LinodeNodeClassSpec, m mode.Mode) LinodeNodeClassSpec {
	spec = specInMode(spec, m)
	if spec.PlacementGroup != nil {
		spec.PlacementGroup = new(*spec.PlacementGroup)
		spec.PlacementGroup.RequireCompliance = nil
	}
	// LKE configures its own kubelets: the quota is an instance-mode setting.
	if spec.Kubelet != nil && m != mode.Instance {
		spec.Kubelet = new(*spec.Kubelet)
		spec.Kubelet.CPUCFSQuota = nil
		if reflect.DeepEqual(*spec.Kubelet, KubeletConfiguration{}) {
			spec.Kubelet = nil
		}
	}
	return spec
}

// kind names the interface's kind, and the VLAN of a VLAN interface: what tells the interfaces
// of one class apart.
func (i NetworkInterface) kind() string {
	switch {
	case i.Public != nil:
		return "public"
	case i.VPC != nil:
		return "vpc"
	case i.VLAN != nil:
		return "vlan/" + i.VLAN.Label
	}
	return ""
}
