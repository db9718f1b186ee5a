package v1

import (
	"fmt"

	"github.com/mitchellh/hashstructure/v2"
	"github.com/samber/lo"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// Hash is the hash of the NodeClass's spec, as it applies in mode m, that AnnotationNodeClassHash
// records on each NodeClaim. A node whose recorded hash differs from its NodeClass's current one
// was launched from another spec and has drifted. Only the fields of mode m count (specFields):
// editing a field the mode ignores replaces no node. Tags and list-valued settings hash as sets,
// so reordering them is no change, and unset fields do not count, so that a release adding a
// field to the spec does not make every node drift.
func (in *LinodeNodeClass) Hash(m mode.Mode) string {
	return fmt.Sprint(lo.Must(hashstructure.Hash(specInMode(in.Spec, m), hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	})))
}
