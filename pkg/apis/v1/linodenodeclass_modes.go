package v1

import (
	"reflect"
	"slices"
	"strings"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// specField is a field of LinodeNodeClassSpec, the modes it applies in, and the status condition
// that reports whether it resolved, if one does.
type specField struct {
	// name is the field's name in the API, its JSON name.
	name      string
	modes     []mode.Mode
	condition string
}

var (
	everyMode    = mode.All
	lkeOnly      = []mode.Mode{mode.LKE}
	instanceOnly = []mode.Mode{mode.Instance}
)

// specFields says which fields of the spec apply in which mode. It is the one answer to that
// question: the drift hash covers only the fields of the running mode, so that editing an
// instance-mode field replaces no LKE node, and the NodeClass controller reports the conditions
// of the other modes' fields as not applicable. Every field of the spec is listed (a test checks).
var specFields = []specField{
	{name: "tags", modes: everyMode},
	{name: "firewallID", modes: everyMode, condition: ConditionTypeFirewallReady},
	{name: "diskEncryption", modes: everyMode},
	// LKE runs its own kubelet; Karpenter still computes a node's allocatable from these settings.
	{name: "kubelet", modes: everyMode},
	{name: "lkeK8sVersion", modes: lkeOnly},
	{name: "updateStrategy", modes: lkeOnly},
	// LKE chooses the image, disks, network interfaces and access of a pool's nodes.
	{name: "image", modes: instanceOnly, condition: ConditionTypeImageReady},
	{name: "imageSelector", modes: instanceOnly, condition: ConditionTypeImageReady},
	{name: "authorizedKeys", modes: instanceOnly},
	{name: "authorizedUsers", modes: instanceOnly},
	{name: "rootDiskSizeMB", modes: instanceOnly},
	{name: "swapSizeMB", modes: instanceOnly},
	{name: "vpc", modes: instanceOnly, condition: ConditionTypeSubnetReady},
	{name: "interfaceGeneration", modes: instanceOnly},
	{name: "interfaces", modes: instanceOnly, condition: ConditionTypeSubnetReady},
	{name: "dataDisks", modes: instanceOnly},
	{name: "rootDiskLabel", modes: instanceOnly},
	{name: "kernel", modes: instanceOnly},
	{name: "privateIP", modes: instanceOnly},
	{name: "placementGroup", modes: instanceOnly, condition: ConditionTypePlacementGroupReady},
	{name: "backupsEnabled", modes: instanceOnly},
	// LKE's node pools cannot choose a maintenance policy. MaintenancePolicyReady is not listed
	// here: LKE mode refuses a class that sets one rather than ignoring the field.
	{name: "maintenancePolicy", modes: instanceOnly},
	{name: "userData", modes: instanceOnly},
}

// specInMode is a copy of spec with the fields that do not apply in m unset.
func specInMode(spec LinodeNodeClassSpec, m mode.Mode) LinodeNodeClassSpec {
	fields := reflect.ValueOf(&spec).Elem()
	for i := range fields.NumField() {
		if !FieldAppliesIn(jsonName(fields.Type().Field(i)), m) {
			fields.Field(i).SetZero()
		}
	}
	return spec
}

func jsonName(field reflect.StructField) string {
	name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
	return name
}

// FieldAppliesIn reports whether the spec field named name applies in m. A field missing from
// the table applies everywhere: a change to it then replaces nodes rather than going unnoticed.
func FieldAppliesIn(name string, m mode.Mode) bool {
	i := slices.IndexFunc(specFields, func(f specField) bool { return f.name == name })
	return i < 0 || slices.Contains(specFields[i].modes, m)
}

// NotApplicableCondition is a status condition that reports only on fields the running mode
// ignores.
// +kubebuilder:object:generate=false
type NotApplicableCondition struct {
	Type string
	// Fields are the fields the condition reports on, by their API names.
	Fields []string
	// Modes are the modes those fields apply in.
	Modes []mode.Mode
}

// NotApplicableConditions are the conditions whose fields all apply only in other modes than m,
// in the order of the spec.
func NotApplicableConditions(m mode.Mode) []NotApplicableCondition {
	var conditions []NotApplicableCondition
	for _, field := range specFields {
		if field.condition == "" {
			continue
		}
		i := slices.IndexFunc(conditions, func(c NotApplicableCondition) bool { return c.Type == field.condition })
		if i < 0 {
			conditions = append(conditions, NotApplicableCondition{Type: field.condition})
			i = len(conditions) - 1
		}
		conditions[i].Fields = append(conditions[i].Fields, field.name)
		for _, other := range field.modes {
			if !slices.Contains(conditions[i].Modes, other) {
				conditions[i].Modes = append(conditions[i].Modes, other)
			}
		}
	}
	return slices.DeleteFunc(conditions, func(c NotApplicableCondition) bool { return slices.Contains(c.Modes, m) })
}
