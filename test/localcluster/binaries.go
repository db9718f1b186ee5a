package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// EnsureBinaries builds the Kubernetes binaries a local cluster runs, and kubectl for the person
// at the keyboard, when any is missing (several minutes on a new machine; make test builds all
// but kubectl), writing the build script's progress to w. It points KUBEBUILDER_ASSETS at them.
// It runs hack/build-k8s-binaries.sh, so it must run from the repository root.
func EnsureBinaries(ctx context.Context, w io.Writer) error {
	if dir, err := component.BinaryDir(); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "kubectl")); err == nil {
			return nil
		}
	}
	fmt.Fprintln(w, "Building the Kubernetes binaries from the Go module proxy (once; several minutes on a new machine)...")
	cmd := exec.CommandContext(ctx, "hack/build-k8s-binaries.sh")
	cmd.Stderr = w
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running hack/build-k8s-binaries.sh (run from the repository root): %w", err)
	}
	// The script prints the binaries' directory on its last line.
	var lastLine string
	for scanner := bufio.NewScanner(out); scanner.Scan(); {
		lastLine = scanner.Text()
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("building the Kubernetes binaries: %w", err)
	}
	return os.Setenv("KUBEBUILDER_ASSETS", strings.TrimSpace(lastLine))
}
