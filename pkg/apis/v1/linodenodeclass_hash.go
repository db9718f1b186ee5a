package v1

import (
	"fmt"

	"github.com/mitchellh/hashstructure/v2"
	"github.com/samber/lo"
)

// Hash is the hash of the NodeClass's spec that AnnotationNodeClassHash records on each
// NodeClaim. A node whose recorded hash differs from its NodeClass's current one was launched
// from another spec and has drifted. Tags and list-valued settings hash as sets, so reordering
// them is no change, and unset fields do not count, so that a release adding a field to the
// spec does not make every node drift.
func (in *LinodeNodeClass) Hash() string {
	return fmt.Sprint(lo.Must(hashstructure.Hash(in.Spec, hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	})))
}
