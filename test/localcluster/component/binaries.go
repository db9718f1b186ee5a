package component

import (
	"fmt"
	"os"
	"path/filepath"
)

// KubernetesVersion is the version of the control-plane binaries hack/build-k8s-binaries.sh builds.
const KubernetesVersion = "v1.36.1"

// BinaryDir returns the directory holding kube-apiserver, etcd, kube-scheduler,
// kube-controller-manager and kwok: $KUBEBUILDER_ASSETS when set (envtest's own convention),
// else the cache directory the build script uses by default.
func BinaryDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cacheRoot := os.Getenv("XDG_CACHE_HOME")
		if cacheRoot == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("locating the Kubernetes binaries: %w", err)
			}
			cacheRoot = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cacheRoot, "karpenter-provider-linode", "k8s-"+KubernetesVersion)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s not found in %s: build the Kubernetes binaries with `make k8s-binaries` "+
				"(or point KUBEBUILDER_ASSETS at a directory that has them)", name, dir)
		}
	}
	return dir, nil
}
