package environment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/nodeidentity"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
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
	// stopNodeIdentity stops the manager StartNodeIdentity started, and waits for it.
	stopNodeIdentity func() error
	// keyRef is the Secret the node identity component keeps its key in.
	keyRef types.NamespacedName
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

// StartNodeIdentity runs the node identity component (package nodeidentity), as instance mode's
// chart runs it, connecting with config and keeping the key in the Secret keyRef: without it no
// NodeClaim gets a token, and no node the tokens bootstrap gets a certificate. Stop stops it.
func (e *NodeBootstrap) StartNodeIdentity(ctx context.Context, config *rest.Config, keyRef types.NamespacedName) error {
	m, err := manager.New(config, manager.Options{Scheme: e.Client.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	if err := nodeidentity.Register(ctx, m, keyRef); err != nil {
		return err
	}
	e.keyRef = keyRef
	managerCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Start(managerCtx) }()
	e.stopNodeIdentity = func() error { cancel(); return <-done }
	return nil
}

// Key waits until the node identity component has created the key tokens derive from, and
// returns it.
func (e *NodeBootstrap) Key(ctx context.Context) (bootstraptoken.Key, error) {
	var key bootstraptoken.Key
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		secret := &corev1.Secret{}
		if err := e.Client.Get(ctx, e.keyRef, secret); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		key = secret.Data[bootstraptoken.KeySecretKey]
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the node identity component created no key in %s: %w", e.keyRef, err)
	}
	return key, nil
}

// Token waits until the node identity component has issued the NodeClaim's bootstrap token, and
// returns it as the controller would write it into the node's user data: derived from the key.
func (e *NodeBootstrap) Token(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error) {
	key, err := e.Key(ctx)
	if err != nil {
		return "", err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: bootstraptoken.Namespace, Name: key.SecretName(nodeClaim)}, &corev1.Secret{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return "", fmt.Errorf("the node identity component issued no token for NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return key.Token(nodeClaim), nil
}

// Stop stops the node identity component, kube-controller-manager, the apiserver and etcd, and removes the log
// directory.
func (e *NodeBootstrap) Stop() error {
	var stopped error
	if e.stopNodeIdentity != nil {
		stopped = e.stopNodeIdentity()
	}
	if err := errors.Join(stopped, component.StopAll(e.processes, 5*time.Second), e.Environment.Stop()); err != nil {
		return fmt.Errorf("%w (component logs kept in %s)", err, e.LogDir)
	}
	return os.RemoveAll(e.LogDir)
}
