package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var env *environment.Environment

// The apply-time tests run against a real kube-apiserver, which enforces the v1alpha1 schema on
// what v1alpha1 clients write.
func TestMain(m *testing.M) {
	var err error
	if env, err = environment.New(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// applyAlpha creates a v1alpha1 LinodeNodeClass with the spec, given as YAML.
func applyAlpha(t *testing.T, spec string) error {
	t.Helper()
	var object map[string]any
	manifest := "apiVersion: karpenter.k8s.linode/v1alpha1\nkind: LinodeNodeClass\nmetadata: {generateName: alpha-}\nspec:\n" + spec
	if err := yaml.Unmarshal([]byte(manifest), &object); err != nil {
		t.Fatal(err)
	}
	return env.Client.Create(context.Background(), &unstructured.Unstructured{Object: object})
}

// TestAlphaFieldsLinodeCannotActOnAreRefused: every alpha field either converts to a v1 field
// that acts or is refused when written, saying why.
func TestAlphaFieldsLinodeCannotActOnAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		// wantInError are fragments the apiserver's message must contain.
		wantInError []string
	}{
		{"a boot disk of another filesystem", "  osDisk: {size: 20Gi, filesystem: ext3}",
			[]string{"spec.osDisk", "osDisk.filesystem can only be ext4: Linode makes the boot disk from the image"}},
		{"a boot disk id", "  osDisk: {size: 20Gi, diskID: 12}",
			[]string{"spec.osDisk", "osDisk.diskID cannot be set"}},
		{"a swap data disk", "  osDisk: {size: 20Gi}\n  dataDisks: {sdc: {size: 1Gi, filesystem: swap}}",
			[]string{"spec.dataDisks", "dataDisks filesystems are ext4, ext3 or raw", "swap_size gives the swap disk"}},
		{"a data disk id", "  osDisk: {size: 20Gi}\n  dataDisks: {sdh: {size: 1Gi, diskID: 4}}",
			[]string{"spec.dataDisks", "dataDisks diskID cannot be set"}},
		{"seven data disks", "  osDisk: {size: 20Gi}\n  dataDisks: {sdb: {size: 1Gi}, sdc: {size: 1Gi}, sdd: {size: 1Gi}, sde: {size: 1Gi}, sdf: {size: 1Gi}, sdg: {size: 1Gi}, sdh: {size: 1Gi}}",
			[]string{"spec.dataDisks", "dataDisks hold at most 6 disks"}},
		{"data disks without a boot disk size", "  dataDisks: {sdb: {size: 10Gi}}",
			[]string{"spec", "dataDisks need osDisk.size"}},
		{"IPv6 without a VPC", "  ipv6Options: {enableSLAAC: true}",
			[]string{"spec", "ipv6Options sets the IPv6 of the VPC interface, which only vpcID gives a node"}},
		{"public IPv6 of nothing", "  vpcID: 3\n  ipv6Options: {isPublicIPv6: true, enableRanges: false}",
			[]string{"spec.ipv6Options", "isPublicIPv6 makes public the IPv6 that enableSLAAC or enableRanges gives"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := applyAlpha(t, tc.spec)
			if err == nil {
				t.Fatal("the apiserver accepted an alpha setting that Linode cannot act on")
			}
			for _, want := range tc.wantInError {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestAlphaFieldsThatActAreAccepted(t *testing.T) {
	for name, spec := range map[string]string{
		"an ext4 boot disk with a label": "  osDisk: {size: 20Gi, filesystem: ext4, label: root}",
		"data disks": "  osDisk: {size: 20Gi}\n  dataDisks:\n    sdb: {size: 10Gi, label: data, filesystem: ext4}\n" +
			"    sdc: {size: 5Gi, filesystem: raw}\n    sdd: {size: 1Gi}",
		"a VPC with IPv6":              "  vpcID: 3\n  ipv6Options: {enableSLAAC: true, enableRanges: true, isPublicIPv6: true}",
		"a VPC without IPv6":           "  vpcID: 3\n  ipv6Options: {enableSLAAC: false}",
		"a kernel, CFS quota, a group": "  configuration: {kernel: linode/grub2}\n  kubelet: {cpuCFSQuota: false}\n  placementGroup: {id: 7, compliant_only: true}",
	} {
		t.Run(name, func(t *testing.T) {
			if err := applyAlpha(t, spec); err != nil {
				t.Fatalf("an alpha setting that converts to v1 was refused: %v", err)
			}
		})
	}
}
