package v1alpha1

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// UnmappedFields lists the v1alpha1 fields that nodeClass carries in AnnotationV1Alpha1Fields
// and that v1 has no place for, as paths such as "spec.osDisk.diskID": they have no effect on
// the nodes. A field carried only because it reads back in another form is not listed, nor is
// one whose carried value no longer matches the spec, nor one that asks for what Linode does
// anyway (honoured).
func UnmappedFields(nodeClass *v1.LinodeNodeClass) []string {
	fields := carriedFields(nodeClass.Annotations[AnnotationV1Alpha1Fields])
	if len(fields) == 0 {
		return nil
	}
	// The fields the v1alpha1 view puts back are the ones still in force.
	view := specFromV1(&nodeClass.Spec)
	restore(&view, fields, specToV1, &nodeClass.Spec)
	restored, err := jsonFields(&view)
	if err != nil {
		return nil
	}
	spec := map[string]any{}
	for name, value := range fields {
		var decoded any
		if bytes.Equal(restored[name], value) && json.Unmarshal(value, &decoded) == nil {
			spec[name] = decoded
		}
	}
	honoured(spec)
	return unmappedPaths("spec", spec, spec, convertJSON(spec))
}

// honoured removes from spec, the alpha spec in JSON form, the settings that need no v1 field
// because every node has them: Linode makes a node's boot disk from its image as ext4.
func honoured(spec map[string]any) {
	if disk, ok := spec["osDisk"].(map[string]any); ok && disk["filesystem"] == "ext4" {
		delete(disk, "filesystem")
	}
}

// unmappedPaths returns the paths under node (a part of spec) whose removal leaves spec's v1
// form unchanged, at the highest level where that holds.
func unmappedPaths(prefix string, spec, node map[string]any, converted *v1.LinodeNodeClassSpec) []string {
	var paths []string
	for _, name := range slices.Sorted(maps.Keys(node)) {
		value := node[name]
		delete(node, name)
		unused := equality.Semantic.DeepEqual(convertJSON(spec), converted)
		node[name] = value
		if unused {
			paths = append(paths, prefix+"."+name)
			continue
		}
		if nested, ok := value.(map[string]any); ok {
			paths = append(paths, unmappedPaths(prefix+"."+name, spec, nested, converted)...)
		}
	}
	return paths
}

// convertJSON converts a v1alpha1 spec in JSON form to v1; nil if it is not one.
func convertJSON(spec map[string]any) *v1.LinodeNodeClassSpec {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	var alpha LinodeNodeClassSpec
	if err := json.Unmarshal(data, &alpha); err != nil {
		return nil
	}
	converted := specToV1(&alpha)
	return &converted
}
