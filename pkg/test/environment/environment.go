// Package environment starts a real Kubernetes control plane for tests: kube-apiserver and etcd
// through controller-runtime's envtest, with Karpenter core's CRDs and ours installed, and, when a
// test asks for them, kube-scheduler, kube-controller-manager and kwok against the same apiserver.
// The binaries come from hack/build-k8s-binaries.sh (see BinaryDir).
package environment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/awslabs/operatorpkg/object"
	"github.com/awslabs/operatorpkg/option"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/apis/crds"
)

// CRDs are every CustomResourceDefinition the provider needs: Karpenter core's and ours.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return append(coreapis.CRDs[:len(coreapis.CRDs):len(coreapis.CRDs)],
		object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crds.LinodeNodeClass))
}

// Options say which components to run besides kube-apiserver and etcd.
type Options struct {
	scheduler         bool
	controllerManager bool
	kwokSelector      string
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
// nodes Ready and runs (and deletes) their pods.
func WithKwok(nodeLabelSelector string) option.Function[Options] {
	return func(o *Options) { o.kwokSelector = nodeLabelSelector }
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
	processes  []*process
	binDir     string
	workingDir string
}

// New starts the control plane. Stop it with Stop.
func New(opts ...option.Function[Options]) (*Environment, error) {
	o := option.Resolve(opts...)
	binDir, err := BinaryDir()
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
	env := &Environment{
		Environment: coretest.NewEnvironment(append([]option.Function[coretest.EnvironmentOptions]{coretest.WithCRDs(CRDs()...)}, o.core...)...),
		LogDir:      workingDir,
		binDir:      binDir,
		workingDir:  workingDir,
	}
	if err := env.start(o); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return env, nil
}

func (e *Environment) start(o *Options) error {
	admin, err := e.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating an admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	e.KubeconfigPath = filepath.Join(e.workingDir, "kubeconfig")
	if err := os.WriteFile(e.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	if o.scheduler {
		if err := e.run("kube-scheduler", "--kubeconfig="+e.KubeconfigPath, "--leader-elect=false", "--secure-port=0"); err != nil {
			return err
		}
	}
	if o.controllerManager {
		if err := e.run("kube-controller-manager", "--kubeconfig="+e.KubeconfigPath, "--leader-elect=false",
			"--secure-port=0", "--use-service-account-credentials=false",
			"--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,daemonset-controller,job-controller"); err != nil {
			return err
		}
	}
	if o.kwokSelector != "" {
		stages := filepath.Join(e.binDir, "kwok-stages")
		args := []string{"--kubeconfig=" + e.KubeconfigPath, "--manage-all-nodes=false",
			"--manage-nodes-with-label-selector=" + o.kwokSelector, "--node-lease-duration-seconds=40"}
		for _, stage := range []string{"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete", "pod-delete"} {
			args = append(args, "--config="+filepath.Join(stages, stage+".yaml"))
		}
		if err := e.run("kwok", args...); err != nil {
			return err
		}
	}
	// A component with a bad flag or no access exits at once; catch that here rather than as a
	// test that waits for pods that are never scheduled.
	time.Sleep(300 * time.Millisecond)
	for _, p := range e.processes {
		if err := p.checkRunning(); err != nil {
			return err
		}
	}
	return nil
}

func (e *Environment) run(name string, args ...string) error {
	p, err := startProcess(e.binDir, e.LogDir, name, args...)
	if err != nil {
		return err
	}
	e.processes = append(e.processes, p)
	return nil
}

// Stop stops every component, then the apiserver and etcd, and removes the working directory.
func (e *Environment) Stop() error {
	var errs []error
	for i := len(e.processes) - 1; i >= 0; i-- {
		errs = append(errs, e.processes[i].stop(5*time.Second))
	}
	errs = append(errs, e.Environment.Stop())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w (component logs kept in %s)", err, e.LogDir)
	}
	return os.RemoveAll(e.workingDir)
}
