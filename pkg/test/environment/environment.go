// Package environment starts a real Kubernetes control plane for tests: kube-apiserver and etcd
// through controller-runtime's envtest, with Karpenter core's CRDs and ours installed, and, when a
// test asks for them, kube-scheduler, kube-controller-manager and kwok against the same apiserver.
// The binaries come from hack/build-k8s-binaries.sh (see component.BinaryDir).
package environment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/awslabs/operatorpkg/option"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// Options say which components to run besides kube-apiserver and etcd.
type Options struct {
	scheduler         bool
	controllerManager bool
	kwokSelector      string
	nodeClassCRD      *apiextensionsv1.CustomResourceDefinition
	core              []option.Function[coretest.EnvironmentOptions]
}

// WithScheduler runs kube-scheduler, so pods get bound to nodes.
func WithScheduler() option.Function[Options] {
	return func(o *Options) { o.scheduler = true }
}

// WithControllerManager runs kube-controller-manager's workload controllers, so Deployments
// become ReplicaSets and pods, and owned objects are garbage-collected.
func WithControllerManager() option.Function[Options] {
	return func(o *Options) { o.controllerManager = true }
}

// WithKwok runs kwok as the kubelet of every node matching the label selector: it keeps those
// nodes Ready and runs (and deletes) their pods, except the status of nodes annotated
// kwok.x-k8s.io/status=custom (kwok's convention for a kubelet that is down).
func WithKwok(nodeLabelSelector string) option.Function[Options] {
	return func(o *Options) { o.kwokSelector = nodeLabelSelector }
}

// WithLinodeNodeClassCRD installs crd in place of the project's LinodeNodeClass CRD, e.g. the
// alpha provider's, to test an upgrade from it.
func WithLinodeNodeClassCRD(crd *apiextensionsv1.CustomResourceDefinition) option.Function[Options] {
	return func(o *Options) { o.nodeClassCRD = crd }
}

// WithCoreOptions passes options to Karpenter core's test environment, e.g. field indexers.
func WithCoreOptions(opts ...option.Function[coretest.EnvironmentOptions]) option.Function[Options] {
	return func(o *Options) { o.core = append(o.core, opts...) }
}

// Environment is a running control plane.
type Environment struct {
	*coretest.Environment
	// KubeconfigPath is an admin kubeconfig for the apiserver, for components and for kubectl.
	KubeconfigPath string
	// LogDir holds each component's log.
	LogDir     string
	processes  []*component.Process
	binDir     string
	workingDir string
}

// New starts the control plane. Stop it with Stop.
func New(opts ...option.Function[Options]) (*Environment, error) {
	o := option.Resolve(opts...)
	binDir, err := component.BinaryDir()
	if err != nil {
		return nil, err
	}
	// envtest and Karpenter core's environment both find the binaries through this variable.
	if err := os.Setenv("KUBEBUILDER_ASSETS", binDir); err != nil {
		return nil, err
	}
	workingDir, err := os.MkdirTemp("", "karpenter-linode-env-")
	if err != nil {
		return nil, err
	}
	crds := component.CRDs()
	if o.nodeClassCRD != nil {
		crds = slices.DeleteFunc(crds, func(crd *apiextensionsv1.CustomResourceDefinition) bool { return crd.Name == o.nodeClassCRD.Name })
		crds = append(crds, o.nodeClassCRD)
	}
	env := &Environment{
		Environment: coretest.NewEnvironment(append([]option.Function[coretest.EnvironmentOptions]{coretest.WithCRDs(crds...)}, o.core...)...),
		LogDir:      workingDir,
		binDir:      binDir,
		workingDir:  workingDir,
	}
	if syncing, ok := env.Client.(*coretest.CacheSyncingClient); ok {
		env.Client = bindingSyncingClient{syncing}
	}
	if err := env.start(o); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return env, nil
}

func (e *Environment) start(o *Options) error {
	e.KubeconfigPath = filepath.Join(e.workingDir, "kubeconfig")
	if err := component.WriteAdminKubeconfig(&e.ControlPlane, e.KubeconfigPath); err != nil {
		return err
	}
	binDir := e.binDir
	var specs []component.Spec
	if o.scheduler {
		specs = append(specs, component.KubeScheduler(binDir, e.KubeconfigPath))
	}
	if o.controllerManager {
		specs = append(specs, component.KubeControllerManager(binDir, e.KubeconfigPath))
	}
	if o.kwokSelector != "" {
		specs = append(specs, component.Kwok(binDir, e.KubeconfigPath, component.KwokNodes{
			LabelSelector: o.kwokSelector, DownAnnotationSelector: "kwok.x-k8s.io/status=custom",
		}))
	}
	var err error
	e.processes, err = component.StartAll(e.LogDir, specs...)
	return err
}

// Stop stops every component, then the apiserver and etcd, and removes the working directory.
func (e *Environment) Stop() error {
	if err := errors.Join(component.StopAll(e.processes, 5*time.Second), e.Environment.Stop()); err != nil {
		return fmt.Errorf("%w (component logs kept in %s)", err, e.LogDir)
	}
	return os.RemoveAll(e.workingDir)
}
