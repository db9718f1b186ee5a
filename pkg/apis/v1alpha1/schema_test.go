package v1alpha1_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/operatorpkg/object"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/linode/karpenter-provider-linode/pkg/apis/crds"
	"github.com/linode/karpenter-provider-linode/pkg/test/alpharelease"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// refusals are the messages of the CEL rules that v1alpha1 adds to the alpha CRD's: each
// refuses, at apply time, an alpha setting that Linode cannot act on.
var refusals = []string{
	"ipv6Options sets the IPv6 of the VPC interface, which only vpcID gives a node: set vpcID, or remove ipv6Options",
	"ipv6Options.isPublicIPv6 makes public the IPv6 that enableSLAAC or enableRanges gives: set one of them",
	"dataDisks need osDisk.size: the boot disk otherwise takes the plan's whole storage and leaves none for them",
	"dataDisks filesystems are ext4, ext3 or raw: Karpenter formats data disks for cloud-init to mount, and swap_size gives the swap disk",
	"dataDisks diskID cannot be set: Karpenter creates each node's disks, and a disk id names a disk of one Linode",
	"dataDisks hold at most 6 disks: a Linode boots with 8 devices, and the boot and swap disks take two",
	"osDisk.filesystem can only be ext4: Linode makes the boot disk from the image, as ext4",
	"osDisk.diskID cannot be set: Karpenter creates each node's disks, and a disk id names a disk of one Linode",
}

// TestV1Alpha1IsTheAlphaSchema: the v1alpha1 version we serve accepts and refuses what the alpha
// provider's CRD did (the same OpenAPI schema and CEL rules; descriptions aside), but for the
// refusals, and lists the same columns.
func TestV1Alpha1IsTheAlphaSchema(t *testing.T) {
	shared.Require(t, shared.SeedCompat)
	alpha, err := alpharelease.CRD()
	if err != nil {
		t.Fatal(err)
	}
	ours := object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crds.LinodeNodeClass)
	want, got := version(t, alpha, "v1alpha1"), version(t, ours, "v1alpha1")
	if w, g := withoutDescriptions(t, want.Schema, nil), withoutDescriptions(t, got.Schema, refusals); w != g {
		t.Errorf("the v1alpha1 schema differs from the alpha CRD's:\nalpha: %s\nours:  %s", w, g)
	}
	if !equality.Semantic.DeepEqual(want.AdditionalPrinterColumns, got.AdditionalPrinterColumns) {
		t.Errorf("printer columns = %+v, the alpha CRD's are %+v", got.AdditionalPrinterColumns, want.AdditionalPrinterColumns)
	}
	if !equality.Semantic.DeepEqual(want.Subresources, got.Subresources) {
		t.Errorf("subresources = %+v, the alpha CRD's are %+v", got.Subresources, want.Subresources)
	}
	for _, name := range alpha.Spec.Names.ShortNames {
		if !slices.Contains(ours.Spec.Names.ShortNames, name) {
			t.Errorf("short name %q of the alpha CRD is gone: kubectl get %s would fail", name, name)
		}
	}
	if ours.Spec.Names.Kind != alpha.Spec.Names.Kind || ours.Spec.Names.Plural != alpha.Spec.Names.Plural || ours.Spec.Scope != alpha.Spec.Scope {
		t.Errorf("names or scope changed: %+v %s, the alpha CRD's are %+v %s", ours.Spec.Names, ours.Spec.Scope, alpha.Spec.Names, alpha.Spec.Scope)
	}
}

// TestV1Alpha1IsServedDeprecatedBesideV1: v1 stores every object; v1alpha1 is served with a
// warning that names v1.
func TestV1Alpha1IsServedDeprecatedBesideV1(t *testing.T) {
	ours := object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crds.LinodeNodeClass)
	alpha, v1 := version(t, ours, "v1alpha1"), version(t, ours, "v1")
	if !v1.Served || !v1.Storage || v1.Deprecated {
		t.Errorf("v1: served %v, storage %v, deprecated %v; want served, stored, not deprecated", v1.Served, v1.Storage, v1.Deprecated)
	}
	if !alpha.Served || alpha.Storage || !alpha.Deprecated {
		t.Errorf("v1alpha1: served %v, storage %v, deprecated %v; want served, not stored, deprecated", alpha.Served, alpha.Storage, alpha.Deprecated)
	}
	if alpha.DeprecationWarning == nil || !strings.Contains(*alpha.DeprecationWarning, "karpenter.k8s.linode/v1 ") {
		t.Errorf("deprecation warning %v does not name karpenter.k8s.linode/v1", alpha.DeprecationWarning)
	}
}

func version(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	t.Helper()
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	t.Fatalf("CRD %s has no version %s", crd.Name, name)
	return nil
}

// withoutDescriptions is the schema as JSON without its descriptions, which are documentation,
// and without the CEL rules of the messages given, each of which it must hold.
func withoutDescriptions(t *testing.T, schema *apiextensionsv1.CustomResourceValidation, rules []string) string {
	t.Helper()
	data, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	var found []string
	var strip func(any)
	strip = func(node any) {
		switch n := node.(type) {
		case map[string]any:
			delete(n, "description")
			if validations, ok := n["x-kubernetes-validations"].([]any); ok {
				kept := slices.DeleteFunc(validations, func(v any) bool {
					message, _ := v.(map[string]any)["message"].(string)
					if slices.Contains(rules, message) {
						found = append(found, message)
						return true
					}
					return false
				})
				if len(kept) == 0 {
					delete(n, "x-kubernetes-validations")
				} else {
					n["x-kubernetes-validations"] = kept
				}
			}
			for _, child := range n {
				strip(child)
			}
		case []any:
			for _, child := range n {
				strip(child)
			}
		}
	}
	strip(tree)
	for _, rule := range rules {
		if !slices.Contains(found, rule) {
			t.Errorf("the schema lacks the CEL rule %q", rule)
		}
	}
	data, err = json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
