package localcluster

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
)

// ModeKwokProvider runs Karpenter core's own kwok provider (sigs.k8s.io/karpenter/kwok, the
// reference provider core measures itself with) in place of this project's controller, as a
// baseline for benchmarks. Options.ControllerBinary must be that provider, built with
// BuildKwokProvider. It creates its Nodes itself, annotated kwok.x-k8s.io/node=fake, the
// annotation the cluster's kwok already acts as the kubelet of; the emulator is left idle.
const ModeKwokProvider = "kwok-provider"

// BuildKwokProvider builds core's kwok provider, from the module cache of the Karpenter version
// in go.mod, into path. Like BuildController, it runs the go command inside this module.
func BuildKwokProvider(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", path, "sigs.k8s.io/karpenter/kwok")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building core's kwok provider: %w\n%s", err, out)
	}
	return nil
}

// modeCRDs are the CustomResourceDefinitions a mode needs besides core's and ours.
func modeCRDs(mode string) []*apiextensionsv1.CustomResourceDefinition {
	if mode == ModeKwokProvider {
		return kwokapis.CRDs
	}
	return nil
}

// KwokNodeClass is a node class of core's kwok provider whose Nodes register registrationDelay
// after their NodeClaim launches (whole seconds, as its CRD requires).
func KwokNodeClass(name string, registrationDelay time.Duration) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kwokapis.Group + "/v1alpha1",
		"kind":       "KWOKNodeClass",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"nodeRegistrationDelay": strconv.Itoa(int(registrationDelay.Round(time.Second).Seconds())) + "s",
		},
	}}
}

// KwokLabelInstanceCPU is the label of core's kwok instance types that gives their vCPUs.
const KwokLabelInstanceCPU = kwokapis.Group + "/instance-cpu"
