package bootstrap_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/samber/lo"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/test/examples"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// cloudConfigSchema is cloud-init's own schema of #cloud-config (JSON Schema draft 4), from
// ../shared beside the repository. Without it the test is skipped, saying how to get it, except in
// CI, where it fails.
func cloudConfigSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(shared.Dir(shared.CloudInit), "schema-cloud-config-v1.json")
	data, err := os.ReadFile(path)
	if err != nil {
		missing := fmt.Sprintf("cloud-init's schema %s is missing: apt-get download cloud-init, then dpkg-deb -x it and copy usr/lib/python3/dist-packages/cloudinit/config/schemas/schema-cloud-config-v1.json there (%v)", filepath.Clean(path), err)
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft4)
	if err := compiler.AddResource("schema-cloud-config-v1.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := compiler.Compile("schema-cloud-config-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// cloudInitParts are the user data's parts as cloud-init handles them: the provider's Jinja
// template rendered for a Linode, each a #cloud-config document.
func cloudInitParts(t *testing.T, opts bootstrap.Options) []map[string]any {
	t.Helper()
	var docs []map[string]any
	for _, p := range render(t, opts).parts {
		body := p.body
		if p.contentType == bootstrap.ContentTypeJinja {
			body = renderJinja(t, body)
		}
		if !strings.HasPrefix(body, "#cloud-config\n") {
			t.Fatalf("a %s part is not a cloud-config document: %.40q", p.contentType, body)
		}
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("a %s part is not YAML: %v", p.contentType, err)
		}
		docs = append(docs, doc)
	}
	return docs
}

// renderJinja renders the provider's part as cloud-init does: without its "## template: jinja"
// header, v1.instance_id from the instance's metadata in place. Any other Jinja delimiter would be
// interpreted by cloud-init and change the document, so there must be none.
func renderJinja(t *testing.T, template string) string {
	t.Helper()
	body, found := strings.CutPrefix(template, "## template: jinja\n")
	if !found {
		t.Fatalf("the Jinja part lacks cloud-init's header: %.40q", template)
	}
	body = strings.ReplaceAll(body, bootstrap.InstanceIDTemplate, "98765432")
	for _, delimiter := range []string{"{{", "{%", "{#"} {
		if strings.Contains(body, delimiter) {
			t.Fatalf("the provider's template holds %q, which cloud-init's Jinja would interpret", delimiter)
		}
	}
	return body
}

// mergeParts merges the parts in order as cloud-init does for the mergers the provider's part asks
// for, list(append)+dict(no_replace,recurse_list): a key the document so far lacks is added, lists
// under the same key are appended to, maps merged key by key, and any other value stays as the
// earlier part set it. The user's part, the first, has no merge_how.
func mergeParts(t *testing.T, docs []map[string]any) map[string]any {
	t.Helper()
	merged := map[string]any{}
	for i, doc := range docs {
		if i > 0 && fmt.Sprint(doc["merge_how"]) != "[map[name:list settings:[append]] map[name:dict settings:[no_replace recurse_list]]]" {
			t.Fatalf("part %d merges with %v, not what the merge here does", i, doc["merge_how"])
		}
		merged = mergeNoReplace(merged, doc)
	}
	return merged
}

func mergeNoReplace(earlier, later map[string]any) map[string]any {
	out := map[string]any{}
	for key, value := range earlier {
		out[key] = value
	}
	for key, value := range later {
		current, present := out[key]
		switch {
		case !present:
			out[key] = value
		case isMap(current) && isMap(value):
			out[key] = mergeNoReplace(current.(map[string]any), value.(map[string]any))
		case isList(current) && isList(value):
			out[key] = append(slices.Clone(current.([]any)), value.([]any)...)
		}
	}
	return out
}

func isMap(v any) bool  { _, ok := v.(map[string]any); return ok }
func isList(v any) bool { _, ok := v.([]any); return ok }

// validate checks a cloud-config document against cloud-init's schema.
func validate(schema *jsonschema.Schema, doc map[string]any) error {
	encoded, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	asJSON, err := yaml.YAMLToJSON(encoded)
	if err != nil {
		return err
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(asJSON))
	if err != nil {
		return err
	}
	return schema.Validate(instance)
}

// TestUserDataIsValidCloudConfig takes apart the user data of the nodes a user starts with (no
// userData, examples/instance.yaml's, a userData that also writes files, runs commands and mounts a
// disk, and the vpc-nat class of docs/instance-mode.md's data disk) as cloud-init would, and checks each
// #cloud-config part and their merge against cloud-init's own schema.
func TestUserDataIsValidCloudConfig(t *testing.T) {
	schema := cloudConfigSchema(t)
	example, _, err := examples.File("instance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := examples.DocsNodeClass("docs/instance-mode.md", "vpc-nat")
	if err != nil {
		t.Fatal(err)
	}
	overlapping := `#cloud-config
packages: [containerd]
package_update: true
bootcmd:
  - [sh, -c, "echo early"]
mounts:
  - [/dev/sdh, /srv/cache, ext4, "defaults,nofail", "0", "2"]
write_files:
  - path: /etc/containerd/config.toml
    permissions: "0644"
    content: |
      version = 2
runcmd:
  - [systemctl, restart, containerd]
  - echo installed
`
	for _, tc := range []struct {
		name     string
		userData *string
		mounts   []bootstrap.Mount
		kubelet  *v1.KubeletConfiguration
	}{
		{name: "without userData"},
		{name: "examples/instance.yaml", userData: example.Spec.UserData},
		{name: "a userData that writes files, runs commands and mounts a disk", userData: &overlapping},
		{name: "the vpc-nat class of docs/instance-mode.md", userData: example.Spec.UserData, kubelet: readme.Spec.Kubelet,
			mounts: lo.Map(readme.Spec.DataDisks, func(disk v1.DataDisk, i int) bootstrap.Mount {
				return bootstrap.Mount{Device: fmt.Sprintf("/dev/sd%c", 'c'+i), Path: *disk.MountPath, Filesystem: *disk.Filesystem}
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := options()
			opts.UserData, opts.Mounts, opts.Kubelet = tc.userData, tc.mounts, tc.kubelet
			docs := cloudInitParts(t, opts)
			for i, doc := range docs {
				if err := validate(schema, doc); err != nil {
					t.Errorf("part %d of the user data is not valid cloud-config: %v", i, err)
				}
			}
			merged := mergeParts(t, docs)
			if err := validate(schema, merged); err != nil {
				t.Errorf("the merged cloud-config is not valid: %v", err)
			}
			if tc.userData == nil {
				return
			}
			// The user's entries come first, then the provider's: the software the user installs
			// is there before kubelet restarts.
			for _, key := range []string{"runcmd", "write_files"} {
				users, _ := docs[0][key].([]any)
				all, _ := merged[key].([]any)
				if len(users) > 0 && (len(all) <= len(users) || fmt.Sprint(all[:len(users)]) != fmt.Sprint(users)) {
					t.Errorf("merged %s %v do not start with the user's %v and go on with the provider's", key, all, users)
				}
			}
		})
	}
}

// TestCloudConfigSchemaRefusesWhatCloudInitRefuses: the check above can fail. A part cloud-init's
// schema refuses (a write_files entry with a key cloud-init does not know) is reported.
func TestCloudConfigSchemaRefusesWhatCloudInitRefuses(t *testing.T) {
	schema := cloudConfigSchema(t)
	opts := options()
	opts.UserData = lo.ToPtr("#cloud-config\nwrite_files:\n  - path: /etc/motd\n    mode: \"0644\"\n")
	docs := cloudInitParts(t, opts)
	if err := validate(schema, docs[0]); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("a write_files entry with mode: %v, want the schema's refusal naming it", err)
	}
	if err := validate(schema, mergeParts(t, docs)); err == nil {
		t.Fatal("the merge of a refused part passed")
	}
}
