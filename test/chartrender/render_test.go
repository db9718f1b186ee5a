package chartrender_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// In instance mode the bootstrap token key's volume is mounted inside the Linode token's: a
// path under both is the inner volume's, as in the container, whatever order the mounts are
// looked at in (a map's; hence the repeats).
func TestControllerEnvironmentFindsAFileInTheDeepestMount(t *testing.T) {
	objects, err := chartrender.Render("karpenter", map[string]any{
		"apiToken": "a-token", "region": "us-ord", "settings": map[string]any{"mode": "instance"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		root := t.TempDir()
		env, err := chartrender.ControllerEnvironment(objects, root)
		if err != nil {
			t.Fatal(err)
		}
		keyFile := env["BOOTSTRAP_TOKEN_KEY_FILE"]
		if filepath.Base(keyFile) != "key" {
			t.Fatalf("BOOTSTRAP_TOKEN_KEY_FILE is %q, not the key volume's file", keyFile)
		}
		// The key's volume is there, empty until the node identity component creates the Secret.
		if _, err := os.Stat(filepath.Dir(keyFile)); err != nil {
			t.Fatalf("BOOTSTRAP_TOKEN_KEY_FILE %q is not in a mounted volume: %v", keyFile, err)
		}
		token, err := os.ReadFile(env["LINODE_TOKEN_FILE"])
		if err != nil || string(token) != "a-token" {
			t.Fatalf("the Linode token's file %q holds %q (%v)", env["LINODE_TOKEN_FILE"], token, err)
		}
	}
}
