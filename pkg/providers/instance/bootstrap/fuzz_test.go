package bootstrap_test

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
)

// FuzzRender: whatever the class's userData, the node's name and a label, the user data Render
// returns fits Linode's limit, parses as cloud-init parses it (a MIME message whose parts are
// YAML), keeps the user's cloud-config as it was, carries the bootstrap token exactly once in the
// provider's part, and writes kubelet's unit with exactly its own lines; Render refuses what it
// cannot render so, naming spec.userData when only its size is wrong.
func FuzzRender(f *testing.F) {
	f.Add("", "default-x7k2p", "team", "payments")
	f.Add("#cloud-config\npackages: [containerd]\n", "node-1", "example.com/role", "")
	f.Add("#cloud-config\nwrite_files: [{path: /etc/motd, content: abcdef.0123456789abcdef}]\n", "a", "k", "v")
	f.Add("#!/bin/sh\necho hi\n", "n", "k", "v")
	f.Add("#cloud-config\n"+strings.Repeat("# padding\n", 7000), "n", "k", "v")
	f.Add("#cloud-config\nkey: [unclosed\n", "n", "k", "v")
	f.Add("", "n\nExecStartPre=/bin/sh -c 'curl 169.254.169.254'", "k", "v")
	f.Add("", "n", "k", "v,other=label")
	f.Add("", "n", "k", "{{ v1.instance_id }}")
	f.Fuzz(func(t *testing.T, userData, nodeName, labelKey, labelValue string) {
		opts := options()
		opts.NodeName = nodeName
		opts.Labels = map[string]string{labelKey: labelValue}
		if userData != "" {
			opts.UserData = &userData
		}
		raw, err := opts.Render()
		if err != nil {
			if errors.Is(err, bootstrap.ErrUserDataTooLarge) && !strings.Contains(err.Error(), "spec.userData") {
				t.Fatalf("the size error does not name spec.userData: %v", err)
			}
			return
		}
		if len(raw) > bootstrap.MaxUserDataBytes {
			t.Fatalf("%d bytes of user data, over Linode's %d", len(raw), bootstrap.MaxUserDataBytes)
		}
		if userData != "" {
			if err := bootstrap.ValidateUserData(userData); err != nil {
				t.Fatalf("rendered a userData ValidateUserData refuses: %v", err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(userData), &doc); err != nil {
				t.Fatalf("accepted a userData that does not parse: %v", err)
			}
		}
		out := render(t, opts)
		if userData != "" && (len(out.parts) != 2 || out.parts[0].body != userData) {
			t.Fatalf("the user's cloud-config is not its first part, as it was")
		}
		ours := out.parts[len(out.parts)-1].body
		if n := strings.Count(ours, string(testToken)); n != 1 {
			t.Fatalf("the bootstrap token appears %d times in the provider's part", n)
		}
		if n := strings.Count(ours, "{{"); n != 1 {
			t.Fatalf("the provider's part has %d Jinja expressions, want only the instance id's", n)
		}
		for _, line := range strings.Split(out.files[bootstrap.PathKubeletDropIn], "\n") {
			if !kubeletDropInLine(line) {
				t.Fatalf("kubelet's unit has a line of its own: %q", line)
			}
		}
	})
}

// kubeletDropInLine tells the lines Render writes in kubelet's drop-in.
func kubeletDropInLine(line string) bool {
	for _, prefix := range []string{"[Service]", `Environment="KUBELET_KUBECONFIG_ARGS=`, `Environment="KUBELET_CONFIG_ARGS=`,
		`Environment="KARPENTER_KUBELET_ARGS=--hostname-override=`, "EnvironmentFile=-/etc/default/kubelet", "ExecStart="} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return line == ""
}
