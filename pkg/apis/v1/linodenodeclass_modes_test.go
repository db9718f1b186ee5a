package v1

import (
	"reflect"
	"slices"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// A field added to the spec must say which modes it applies in: the drift hash and the
// not-applicable conditions read it from specFields.
func TestEverySpecFieldSaysWhichModesItAppliesIn(t *testing.T) {
	spec := reflect.TypeFor[LinodeNodeClassSpec]()
	var fields []string
	for i := range spec.NumField() {
		fields = append(fields, jsonName(spec.Field(i)))
	}
	var listed []string
	for _, field := range specFields {
		listed = append(listed, field.name)
		if len(field.modes) == 0 {
			t.Errorf("specFields: %s applies in no mode", field.name)
		}
		for _, m := range field.modes {
			if !slices.Contains(mode.All, m) {
				t.Errorf("specFields: %s names the unknown mode %q", field.name, m)
			}
		}
	}
	if !slices.Equal(fields, listed) {
		t.Errorf("specFields lists %v, want the spec's fields in their order: %v", listed, fields)
	}
}

func TestNotApplicableConditions(t *testing.T) {
	for _, tc := range []struct {
		mode mode.Mode
		want []NotApplicableCondition
	}{
		{mode: mode.LKE, want: []NotApplicableCondition{
			{Type: ConditionTypeImageReady, Fields: []string{"image", "imageSelector"}, Modes: []mode.Mode{mode.Instance}},
			{Type: ConditionTypeSubnetReady, Fields: []string{"vpc", "interfaces"}, Modes: []mode.Mode{mode.Instance}},
			{Type: ConditionTypePlacementGroupReady, Fields: []string{"placementGroup"}, Modes: []mode.Mode{mode.Instance}},
		}},
		{mode: mode.Instance, want: []NotApplicableCondition{}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			if got := NotApplicableConditions(tc.mode); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("NotApplicableConditions(%s) = %+v, want %+v", tc.mode, got, tc.want)
			}
		})
	}
}
