package environment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// NodeBootstrap is a control plane that nodes join as they join a kubeadm cluster, for tests of
// instance mode: kube-apiserver authenticating bootstrap tokens and the cluster CA's client
// certificates, kube-controller-manager approving and signing node client certificates, and the
// RBAC the provider's Helm chart grants its bootstrap tokens' group; kwok then plays the kubelets
// of Linux nodes once they registered, making them Ready and removing the pods a drain evicts.
type NodeBootstrap struct {
	envtest.Environment
	// Client is an admin client.
	Client client.Client
	// CA is the cluster CA, which signs the nodes' client certificates.
	CA *component.ClusterCA
	// LogDir holds kube-controller-manager's log.
	LogDir    string
	processes []*component.Process
	// stopApprover stops the manager StartApprover started, and waits for it.
	stopApprover func() error
}

// NewNodeBootstrap starts the control plane. Stop it with Stop.
func NewNodeBootstrap(ctx context.Context) (*NodeBootstrap, error) {
	binDir, err := component.BinaryDir()
	if err != nil {
		return nil, err
	}
	logDir, err := os.MkdirTemp("", "karpenter-linode-bootstrap-env-")
	if err != nil {
		return nil, err
	}
	env := &NodeBootstrap{Environment: envtest.Environment{BinaryAssetsDirectory: binDir, CRDs: component.CRDs()}, LogDir: logDir}
	if err := env.start(ctx, binDir); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return env, nil
}

func (e *NodeBootstrap) start(ctx context.Context, binDir string) error {
	var err error
	if e.CA, err = component.ConfigureNodeBootstrap(&e.Environment); err != nil {
		return err
	}
	if _, err := e.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
		return err
	}
	kubeconfig := filepath.Join(e.LogDir, "kubeconfig")
	if err := component.WriteAdminKubeconfig(&e.ControlPlane, kubeconfig); err != nil {
		return err
	}
	for _, binding := range bootstraptoken.ClusterRoleBindings() {
		if err := e.Client.Create(ctx, binding); err != nil {
			return fmt.Errorf("granting the bootstrap group %s: %w", binding.RoleRef.Name, err)
		}
	}
	e.processes, err = component.StartAll(e.LogDir,
		// Tests place pods by hand, so no workload controller may claim them.
		component.KubeControllerManager(binDir, kubeconfig, component.WithCSRSigning(e.CA),
			component.WithoutControllers("daemonset-controller", "deployment-controller", "replicaset-controller", "job-controller")),
		component.Kwok(binDir, kubeconfig, component.KwokNodes{LabelSelector: corev1.LabelOSStable + "=linux", DownAnnotationSelector: "kwok.x-k8s.io/status=custom"}))
	return err
}

// Endpoint is the API server's URL, as nodes reach it.
func (e *NodeBootstrap) Endpoint() string { return e.Config.Host }

// ServingCA is the CA that verifies the API server's certificate, which nodes must trust.
func (e *NodeBootstrap) ServingCA() []byte { return e.Config.CAData }

// StartApprover runs the provider's approver of node certificate requests, as the controller
// runs it in instance mode, connecting with config: without it, or the controller, no node the
// provider's tokens bootstrap gets a certificate. Stop stops it.
func (e *NodeBootstrap) StartApprover(ctx context.Context, config *rest.Config) error {
	m, err := manager.New(config, manager.Options{Scheme: e.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	recorder := events.NewRecorder(m.GetEventRecorderFor("karpenter")) //nolint:staticcheck // SA1019: core's events.Recorder takes the legacy recorder
	if err := bootstraptoken.NewApprover(m.GetClient(), m.GetAPIReader(), recorder).Register(ctx, m); err != nil {
		return err
	}
	managerCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Start(managerCtx) }()
	e.stopApprover = func() error { cancel(); return <-done }
	return nil
}

// Stop stops the approver, kube-controller-manager, the apiserver and etcd, and removes the log
// directory.
func (e *NodeBootstrap) Stop() error {
	var stopped error
	if e.stopApprover != nil {
		stopped = e.stopApprover()
	}
	if err := errors.Join(stopped, component.StopAll(e.processes, 5*time.Second), e.Environment.Stop()); err != nil {
		return fmt.Errorf("%w (component logs kept in %s)", err, e.LogDir)
	}
	return os.RemoveAll(e.LogDir)
}
