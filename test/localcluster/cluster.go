// Package localcluster runs the whole system on one machine, without a Linode account: etcd,
// kube-apiserver, kube-scheduler, kube-controller-manager and kwok (the binaries from
// hack/build-k8s-binaries.sh), the Linode API emulator with an LKE cluster seeded, a node
// simulator that registers a Node for every Linode the emulator boots (package nodesim), and the
// provider's controller as a process configured the way the Helm chart configures it, running as
// the chart's ServiceAccount with the chart's RBAC.
//
// The demo (test/cmd/demo), the end-to-end tests (test/e2e) and test/cmd/localcluster, which leaves a
// cluster running for kubectl, all start it with Start.
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// Modes of the controller (its KARPENTER_MODE).
const (
	ModeLKE      = "lke"
	ModeInstance = "instance"
)

// Options describe the cluster to run. The zero value of a field means its default.
type Options struct {
	// ClusterName is the label of the seeded LKE cluster and the controller's CLUSTER_NAME ("demo").
	ClusterName string
	// Region of the LKE cluster and the nodes ("us-ord").
	Region string
	// Tier is the LKE tier, standard or enterprise ("standard"); enterprise uses API v4beta.
	Tier string
	// Mode is the controller's mode, lke or instance ("lke"), or ModeKwokProvider.
	Mode string
	// DelayScale multiplies the emulator's delays (LKE node to Linode 10 s, provisioning 60 s,
	// booting 90 s); 0.03 makes a node boot in about 5 s.
	DelayScale float64
	// ControllerBinary is the controller to run; when empty, cmd/controller is built into WorkDir.
	ControllerBinary string
	// ControllerEnv adds to or overrides the controller's environment (e.g. BATCH_IDLE_DURATION=500ms).
	ControllerEnv []string
	// WorkDir holds the kubeconfig, the component logs and the controller binary; a new temporary
	// directory when empty.
	WorkDir string
	// Progress hears about each step as it happens, and about each exit and restart of a replica
	// of the controller, from another goroutine; nil for silence.
	Progress func(step string)
	// PlanCapacity says how many more Linodes of each plan the region can launch, for plans
	// Linode sells in limited numbers (the emulator starts those at zero, as the API's
	// availability list does). It is set before the controller starts, because the controller
	// reads plan availability when it reads the catalogue.
	PlanCapacity map[string]int
	// ControllerReplicas is how many controller processes run (1). More than one run as the
	// chart's Deployment runs its replicas: leader election on, with the chart's lease, each
	// replica with ports of its own and its own endpoint of the webhook Service.
	ControllerReplicas int
	// EmulatorOptions change the Linode API emulator's defaults, e.g. a longer request log for a
	// scenario that counts many thousands of requests.
	EmulatorOptions []emulator.Option
	// Emulator, when set, is a Linode API emulator already serving, one Linode account that this
	// cluster shares with others and with whatever else the account holds; the cluster neither
	// starts nor closes it, and DelayScale and EmulatorOptions are its creator's. The cluster
	// adds its LKE cluster to it (LKE mode, its label ClusterName: unique per account), and its
	// node simulator, consistency check and leak count take only the cluster's own Linodes and
	// pools (Owns).
	Emulator *emulator.Emulator
	// LinodeURL is where the controller reaches the Linode API (its LINODE_URL), the emulator's
	// URL when empty: e.g. a proxy that tells this controller's requests from another's.
	LinodeURL string
}

// kwokNodes are the Nodes kwok acts as the kubelet of: those nodesim registers.
var kwokNodes = component.KwokNodes{AnnotationSelector: nodesim.KwokAnnotationSelector, DownAnnotationSelector: nodesim.KwokDownAnnotationSelector}

// DefaultDelayScale makes a Linode go from create to running in about 5 s (160 s on Linode).
const DefaultDelayScale = 0.03

// HypervisorMemoryPercent is told to both the controller and the node simulator, so that the
// memory Karpenter expects on a node is the memory the node reports.
const HypervisorMemoryPercent = 2.5

func (o *Options) defaults() {
	if o.ClusterName == "" {
		o.ClusterName = "demo"
	}
	if o.Region == "" {
		o.Region = "us-ord"
	}
	if o.Tier == "" {
		o.Tier = "standard"
	}
	if o.Mode == "" {
		o.Mode = ModeLKE
	}
	if o.DelayScale == 0 {
		o.DelayScale = DefaultDelayScale
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.ControllerReplicas < 1 {
		o.ControllerReplicas = 1
	}
}

// Cluster is a running local cluster.
type Cluster struct {
	// Kube is a client of the cluster, with Karpenter's and the provider's types registered.
	Kube client.Client
	// KubeconfigPath is an admin kubeconfig, for kubectl.
	KubeconfigPath string
	// ControllerKubeconfigPath is the controller's kubeconfig: a token of the chart's
	// ServiceAccount, refreshed before it expires (the admin kubeconfig for ModeKwokProvider).
	ControllerKubeconfigPath string
	// LogDir holds each component's log, the controller's included.
	LogDir string
	// Emulator is the Linode API the controller talks to.
	Emulator *emulator.Emulator
	// LKEClusterID is the seeded LKE cluster's id (0 in instance mode).
	LKEClusterID int
	// Nodes is the node simulator; OnEvent tells when it registers or removes a Node.
	Nodes *nodesim.Simulator
	// Kubectl is the kubectl built with the other binaries.
	Kubectl string

	opts         Options
	controlPlane *envtest.Environment
	components   []*component.Process
	// controllerManager configures kube-controller-manager, for its restarts.
	controllerManager []component.ControllerManagerOption
	// controllerBinary stays the same when the controller restarts.
	controllerBinary string
	// replicas are the controller's processes; the first is the one the single-replica methods
	// (RestartController, KillController, ControllerMetricsURL) act on.
	replicas []*controllerReplica
	// envMu guards opts.ControllerEnv, which RestartReplica changes while a replica may be
	// starting again on its own.
	envMu sync.Mutex
	// restartBackoff spaces the restarts of each replica that exits, by its name.
	restartBackoff *flowcontrol.Backoff
	// supervising ends, at Stop, the goroutines (supervisors) that start exited replicas again.
	supervising     context.Context
	stopSupervising context.CancelFunc
	supervisors     sync.WaitGroup
	// stopWebhook stops keeping the replicas' webhook endpoints on their readiness.
	stopWebhook context.CancelFunc
	webhookDone chan struct{}
	stopNodes   context.CancelFunc
	nodesDone   chan struct{}
	// stopTokenRefresh stop the refreshes of the ServiceAccount tokens, tokenRefreshes.
	stopTokenRefresh []context.CancelFunc
	tokenRefreshes   sync.WaitGroup
	// controllerUser is the user name the controller runs as (its ServiceAccount's), for the
	// throttling of its requests.
	controllerUser string
	// serviceAccountUsers are the user names of the controller and the node identity component,
	// whose requests ControllerRefusals reads from the audit log from auditOffset on.
	serviceAccountUsers []string
	auditOffset         int64
	// linodeRefusalsSeen is how many of the emulator's refused requests LinodeRefusals has read.
	linodeRefusalsSeen int
	ownWorkDir         bool
	// keepLogs keeps the logs of a directory of the cluster's own when it stops.
	keepLogs bool
	// ownershipTag marks the cluster's Linodes in an account it shares (instance mode).
	ownershipTag string
}

// Start starts every component and the controller and waits until the controller is ready.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	opts.defaults()
	c := &Cluster{opts: opts, LogDir: opts.WorkDir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if c.LogDir == "" {
		if c.LogDir, err = os.MkdirTemp("", "karpenter-linode-cluster-"); err != nil {
			return nil, err
		}
		c.ownWorkDir = true
	} else if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
		return nil, err
	}
	binDir, err := component.BinaryDir()
	if err != nil {
		return nil, err
	}
	c.Kubectl = filepath.Join(binDir, "kubectl")
	controllerBinary := opts.ControllerBinary
	if controllerBinary == "" {
		opts.Progress("building the controller (cmd/controller)")
		controllerBinary = filepath.Join(c.LogDir, "controller")
		if err := BuildController(ctx, controllerBinary); err != nil {
			return nil, err
		}
	}

	opts.Progress("starting etcd and kube-apiserver " + component.KubernetesVersion)
	c.controlPlane = &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: append(component.CRDs(), modeCRDs(opts.Mode)...)},
	}
	// Certificates in a directory of our own survive a restart of kube-apiserver
	// (RestartAPIServer), so the kubeconfigs stay valid; envtest's own would be removed. A work
	// directory used before holds those of a cluster that is gone: envtest would serve them
	// without knowing their CA, and panic.
	certDir := filepath.Join(c.LogDir, "kube-apiserver")
	if err := os.RemoveAll(certDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	c.controlPlane.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	if err := c.configureAudit(c.controlPlane.ControlPlane.APIServer); err != nil {
		return nil, err
	}
	// Webhooks are called at a ready endpoint of their Service, as the webhook Service has no
	// cluster IP that anything routes here (registerWebhooks).
	c.controlPlane.ControlPlane.APIServer.Configure().Set("enable-aggregator-routing", "true")
	var clusterCA *component.ClusterCA
	if opts.Mode == ModeInstance {
		if clusterCA, err = component.ConfigureNodeBootstrap(c.controlPlane); err != nil {
			return nil, err
		}
	}
	restConfig, err := c.controlPlane.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	if c.Kube, err = client.New(restConfig, client.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, err
	}
	c.KubeconfigPath = filepath.Join(c.LogDir, "kubeconfig")
	if err := component.WriteAdminKubeconfig(&c.controlPlane.ControlPlane, c.KubeconfigPath); err != nil {
		return nil, err
	}
	if opts.Mode == ModeInstance {
		opts.Progress("setting the cluster up for nodes that join by TLS bootstrap, as kubeadm does")
		if err := c.setUpNodeBootstrap(ctx, restConfig.Host, restConfig.CAData); err != nil {
			return nil, err
		}
	}

	if opts.Mode == ModeLKE {
		opts.Progress(fmt.Sprintf("starting the Linode API emulator with LKE cluster %q in %s (boot delays x%g)", opts.ClusterName, opts.Region, opts.DelayScale))
	} else {
		opts.Progress(fmt.Sprintf("starting the Linode API emulator, region %s (boot delays x%g)", opts.Region, opts.DelayScale))
	}
	c.Emulator = opts.Emulator
	if c.Emulator == nil {
		c.Emulator = emulator.New(append([]emulator.Option{emulator.WithDelayScale(opts.DelayScale)}, opts.EmulatorOptions...)...)
	}
	if opts.Mode == ModeLKE {
		if c.LKEClusterID, err = c.Emulator.AddLKECluster(opts.ClusterName, opts.Region, opts.Tier); err != nil {
			return nil, err
		}
	}
	simKube, err := client.New(nodesim.ClientConfig(restConfig), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	c.Nodes = nodesim.New(simKube, c.Emulator, nodesim.ResourceModel{HypervisorMemoryPercent: HypervisorMemoryPercent, MaxPods: 110})
	if opts.Emulator != nil {
		if err := c.shareAccount(ctx); err != nil {
			return nil, err
		}
	}
	for plan, count := range opts.PlanCapacity {
		c.Emulator.SetCapacity(opts.Region, plan, count)
	}
	if opts.Emulator == nil {
		if err := c.Emulator.Start(); err != nil {
			return nil, err
		}
	}
	nodesCtx, stopNodes := context.WithCancel(log.IntoContext(context.Background(), c.fileLogger("node-simulator.log")))
	c.stopNodes, c.nodesDone = stopNodes, make(chan struct{})
	go func() { c.Nodes.Run(nodesCtx); close(c.nodesDone) }()

	opts.Progress("starting kube-scheduler, kube-controller-manager and kwok (the simulated kubelets)")
	var controllerManager []component.ControllerManagerOption
	if clusterCA != nil {
		controllerManager = append(controllerManager, component.WithCSRSigning(clusterCA))
	}
	c.controllerManager = controllerManager
	if c.components, err = component.StartAll(c.LogDir,
		component.KubeScheduler(binDir, c.KubeconfigPath),
		component.KubeControllerManager(binDir, c.KubeconfigPath, controllerManager...),
		component.Kwok(binDir, c.KubeconfigPath, kwokNodes),
	); err != nil {
		return nil, err
	}

	if opts.ControllerReplicas == 1 {
		opts.Progress("starting the controller")
	} else {
		opts.Progress(fmt.Sprintf("starting the controller's %d replicas, with leader election", opts.ControllerReplicas))
	}
	c.controllerBinary = controllerBinary
	c.restartBackoff = flowcontrol.NewBackOff(restartInitialDelay, restartMaxDelay)
	c.supervising, c.stopSupervising = context.WithCancel(context.Background())
	for i := range opts.ControllerReplicas {
		replica, err := newControllerReplica(i)
		if err != nil {
			return nil, err
		}
		c.replicas = append(c.replicas, replica)
	}
	// Core's kwok provider is not this chart's controller: it keeps the admin kubeconfig.
	c.ControllerKubeconfigPath = c.KubeconfigPath
	if opts.Mode != ModeKwokProvider {
		if err := c.registerWebhooks(ctx, c.webhookPort(), opts.Mode == ModeLKE); err != nil {
			return nil, err
		}
		serviceAccounts, err := c.installChartRBAC(ctx)
		if err != nil {
			return nil, err
		}
		c.ControllerKubeconfigPath = filepath.Join(c.LogDir, "controller-kubeconfig")
		controllerUser, err := c.runAsServiceAccount(ctx, restConfig, serviceAccounts[controllerServiceAccount], c.ControllerKubeconfigPath)
		if err != nil {
			return nil, err
		}
		c.controllerUser = controllerUser
		c.serviceAccountUsers = append(c.serviceAccountUsers, controllerUser)
		if opts.Mode == ModeInstance {
			opts.Progress("starting the node identity component, which issues the nodes' bootstrap tokens and approves their certificates")
			if err := c.startNodeIdentity(ctx, restConfig, serviceAccounts[nodeIdentityServiceAccount], controllerBinary); err != nil {
				return nil, err
			}
		}
		webhookCtx, stopWebhook := context.WithCancel(log.IntoContext(context.Background(), c.fileLogger("webhook-endpoint.log")))
		c.stopWebhook, c.webhookDone = stopWebhook, make(chan struct{})
		var endpoints sync.WaitGroup
		for _, replica := range c.replicas {
			endpoints.Go(func() { replica.webhook.run(webhookCtx) })
		}
		go func() { endpoints.Wait(); close(c.webhookDone) }()
	}
	for _, replica := range c.replicas {
		if err := c.startReplica(ctx, replica); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// RestartOptions say how RestartController stops the controller and how it starts it again.
type RestartOptions struct {
	// Crash kills the controller at once, as an OOM kill or a lost node would, instead of letting
	// it shut down.
	Crash bool
	// Env, when not nil, replaces Options.ControllerEnv from this start on.
	Env []string
}

// RestartController stops the controller (its first replica) and starts it again with the same
// binary and ports, waiting until it is ready, as a new pod of its Deployment: the back-off of
// earlier exits is forgotten. Its log continues in the same file.
func (c *Cluster) RestartController(ctx context.Context, opts RestartOptions) error {
	return c.RestartReplica(ctx, 0, opts)
}

// RestartReplica is RestartController for the controller's replica i, which may have exited or
// been killed and be waiting for its back-off.
func (c *Cluster) RestartReplica(ctx context.Context, i int, opts RestartOptions) error {
	replica := c.replicas[i]
	replica.starting.Lock()
	defer replica.starting.Unlock()
	replica.mu.Lock()
	run := replica.run
	run.stopping = true
	replica.exitsInARow = 0
	replica.mu.Unlock()
	c.restartBackoff.Reset(replica.name)
	var err error
	if opts.Crash {
		err = run.process.Kill()
	} else {
		err = run.process.Stop(10 * time.Second)
	}
	if err != nil {
		return err
	}
	if opts.Env != nil {
		c.envMu.Lock()
		c.opts.ControllerEnv = opts.Env
		c.envMu.Unlock()
	}
	return c.startReplica(ctx, replica)
}

// RestartAPIServer stops kube-apiserver (killing it if it has not shut down within 20 s), leaves
// it down for downtime, and starts it again on the same port with the same certificates, as an
// upgrade or a crash of the control plane would; etcd and every client keep running. It returns
// once kube-apiserver answers again.
func (c *Cluster) RestartAPIServer(downtime time.Duration) error {
	apiServer := c.controlPlane.ControlPlane.GetAPIServer()
	// envtest kills kube-apiserver when it has not shut down within StopTimeout, and says so as
	// an error: either way it is down once nothing listens on its port.
	stopErr := apiServer.Stop()
	address := apiServer.HostPort() // its secure port, the only one it serves
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", address, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("stopping kube-apiserver: it still listens on %s: %w", address, stopErr)
		}
	}
	time.Sleep(downtime)
	if err := apiServer.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// webhookPort is the webhook Service's port, the first replica's webhook port.
func (c *Cluster) webhookPort() int32 { return c.replicas[0].webhookPort() }

// ControllerMetricsURL is the controller's (its first replica's) Prometheus endpoint (its
// METRICS_PORT), where a benchmark reads its heap and CPU time.
func (c *Cluster) ControllerMetricsURL() string { return c.replicas[0].metricsURL() }

// fileLogger writes a part of the cluster's errors to a log file of its own, name.
func (c *Cluster) fileLogger(name string) logr.Logger {
	f, err := os.Create(filepath.Join(c.LogDir, name))
	if err != nil {
		return logr.Discard()
	}
	return logr.FromSlogHandler(slog.NewTextHandler(f, nil))
}

// startReplica runs a controller replica with the settings the Helm chart would give it, as the
// chart's ServiceAccount, and waits for its readiness probe, and for its webhook endpoint to say
// it is ready; a supervisor starts it again should it exit unasked (superviseRun). One replica
// runs without leader election; more run with it, as the chart's Deployment configures them: the
// lease in the release's namespace, under core's default name (the one the chart's Role lets the
// ServiceAccount update), with core's timings.
func (c *Cluster) startReplica(ctx context.Context, replica *controllerReplica) error {
	ports := replica.ports
	env := []string{
		"KUBECONFIG=" + c.ControllerKubeconfigPath,
		"CLUSTER_NAME=" + c.opts.ClusterName,
		"KARPENTER_MODE=" + c.opts.Mode,
		"LINODE_TOKEN_FILE=" + c.tokenFile(),
		"LINODE_URL=" + c.linodeURL(),
		"LINODE_API_VERSION=" + c.apiVersion(),
		"HYPERVISOR_MEMORY_PERCENT=" + strconv.FormatFloat(HypervisorMemoryPercent, 'f', -1, 64),
		"METRICS_PORT=" + strconv.Itoa(ports[0]),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(ports[1]),
		"LOG_LEVEL=info",
	}
	if len(c.replicas) == 1 {
		env = append(env, "DISABLE_LEADER_ELECTION=true")
	} else {
		env = append(env, "LEADER_ELECTION_NAMESPACE="+webhookNamespace)
	}
	// The webhook server answers the LinodeNodeClass conversion webhook in both modes, and the
	// Node webhook in LKE mode only: it gives LKE nodes the taints LKE cannot register them with,
	// and instance-mode kubelets register with them already.
	switch c.opts.Mode {
	case ModeLKE:
		env = append(env, webhookEnv(replica.webhookPort())...)
	case ModeKwokProvider:
		env = append(env, "LINODE_REGION="+c.opts.Region, "DISABLE_WEBHOOK=true", "SYSTEM_NAMESPACE="+webhookNamespace)
	default:
		env = append(env, webhookEnv(replica.webhookPort())...)
		env = append(env, "LINODE_REGION="+c.opts.Region, "DISABLE_WEBHOOK=true", "BOOTSTRAP_TOKEN_KEY_FILE="+c.bootstrapTokenKeyFile())
	}
	c.envMu.Lock()
	env = append(env, c.opts.ControllerEnv...)
	c.envMu.Unlock()
	if _, err := os.Stat(c.tokenFile()); os.IsNotExist(err) {
		if err := c.SetControllerToken(c.Emulator.Token()); err != nil {
			return err
		}
	}
	logOffset := logSize(c.replicaLog(replica))
	process, err := component.Start(component.Spec{Name: replica.name, Path: c.controllerBinary, Env: env}, c.LogDir)
	if err != nil {
		return err
	}
	run := &replicaRun{process: process, started: time.Now(), logOffset: logOffset}
	replica.mu.Lock()
	replica.run = run
	replica.mu.Unlock()
	c.supervisors.Add(1)
	go c.superviseRun(replica, run)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if err := process.CheckRunning(); err != nil {
			return err
		}
		if resp, err := http.Get(replica.readyzURL()); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (replica.webhook == nil || replica.webhook.isReady()) {
				replica.mu.Lock()
				run.ready = true
				replica.mu.Unlock()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %s was not ready within 2 minutes; the end of its log:\n%s", replica.name, component.Tail(process.LogPath(), 3000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// apiVersion is the Linode API version of the cluster's tier.
func (c *Cluster) apiVersion() string {
	if c.opts.Tier == "enterprise" {
		return "v4beta"
	}
	return "v4"
}

// tokenFile is the controller's LINODE_TOKEN_FILE, which the chart mounts from the token's Secret.
func (c *Cluster) tokenFile() string { return filepath.Join(c.LogDir, "linode-token") }

// SetControllerToken replaces the token in the controller's token file, as the kubelet updates a
// mounted Secret (an atomic swap); the running controller uses it without a restart. With the
// emulator's SetToken and RevokeToken it plays a token rotated or revoked on Linode's side.
func (c *Cluster) SetControllerToken(token string) error {
	next := c.tokenFile() + ".next"
	if err := os.WriteFile(next, []byte(token), 0o600); err != nil {
		return err
	}
	return os.Rename(next, c.tokenFile())
}

// KillController is KillReplica for the controller's first replica.
func (c *Cluster) KillController() error { return c.KillReplica(0) }

// ControllerRunning reports, with the end of its log, a replica of the controller that showed
// itself broken: it crashed, exited before it was ready, or exits again and again. A replica
// that lost the leader election and exited, or that KillReplica killed, is not reported: it
// comes back after the back-off, as the kubelet brings back the container of the chart's
// Deployment.
func (c *Cluster) ControllerRunning() error {
	var errs []error
	for i := range c.replicas {
		errs = append(errs, c.ReplicaRunning(i))
	}
	return errors.Join(errs...)
}

// ReplicaRunning is ControllerRunning for the controller's replica i.
func (c *Cluster) ReplicaRunning(i int) error {
	replica := c.replicas[i]
	replica.mu.Lock()
	defer replica.mu.Unlock()
	return replica.failure
}

// ControllerLog is the path of the controller's (its first replica's) log.
func (c *Cluster) ControllerLog() string { return filepath.Join(c.LogDir, "controller.log") }

// CheckHealthy reports a component that has exited, or a replica of the controller that
// ControllerRunning reports.
func (c *Cluster) CheckHealthy() error {
	var errs []error
	for _, p := range c.components {
		errs = append(errs, p.CheckRunning())
	}
	return errors.Join(append(errs, c.ControllerRunning())...)
}

// Stop stops the controller first, so it launches nothing more, then everything else. The work
// directory is removed only if Start created it and everything stopped cleanly.
func (c *Cluster) Stop() error {
	if c.stopSupervising != nil {
		c.stopSupervising()
		c.supervisors.Wait()
	}
	var errs []error
	for _, replica := range c.replicas {
		replica.mu.Lock()
		run := replica.run
		if run != nil {
			run.stopping = true
		}
		replica.mu.Unlock()
		if run != nil {
			errs = append(errs, run.process.Stop(10*time.Second))
		}
	}
	for _, stop := range c.stopTokenRefresh {
		stop()
	}
	c.tokenRefreshes.Wait()
	errs = append(errs, component.StopAll(c.components, 5*time.Second))
	if c.stopWebhook != nil {
		c.stopWebhook()
		<-c.webhookDone
	}
	if c.stopNodes != nil {
		c.stopNodes()
		<-c.nodesDone
	}
	if c.Emulator != nil && c.opts.Emulator == nil {
		errs = append(errs, c.Emulator.Close())
	}
	if c.controlPlane != nil {
		errs = append(errs, c.controlPlane.Stop())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w (logs kept in %s)", err, c.LogDir)
	}
	if c.ownWorkDir && !c.keepLogs {
		return os.RemoveAll(c.LogDir)
	}
	return nil
}

// KeepLogs keeps the cluster's logs when it stops, for a run that failed on it.
func (c *Cluster) KeepLogs() { c.keepLogs = true }

// BuildController builds cmd/controller into path, and instance mode's node identity component
// (cmd/node-identity) beside it, where Start looks for it. It runs the go command from the working
// directory, which must be inside this module (as it is for make, go test and go run).
func BuildController(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"github.com/linode/karpenter-provider-linode/cmd/controller", "github.com/linode/karpenter-provider-linode/cmd/node-identity")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the controller: %w\n%s", err, out)
	}
	if built := filepath.Join(dir, "controller"); built != path {
		return os.Rename(built, path)
	}
	return nil
}

// Ports below Linux's ephemeral range (32768-60999): a port the kernel hands out for ":0" is in
// that range, and so is the local port of every outgoing connection, so one found free there can
// be taken by a connection (thousands of them to kube-apiserver) before the controller binds it.
const (
	lowestPort = 20000
	portSpan   = 12000
)

var (
	portsMu sync.Mutex
	// portsGiven are the ports this process handed out, never handed out twice.
	portsGiven = map[int]bool{}
)

// freePorts finds n ports no process listens on, on any address, below the ephemeral range.
func freePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 10*portSpan {
			return nil, fmt.Errorf("found %d of %d free ports in %d-%d", len(ports), n, lowestPort, lowestPort+portSpan-1)
		}
		port := lowestPort + rand.IntN(portSpan) //nolint:gosec // A port number, not a secret.
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// ConsoleProgress prints each step with the time since start, for Options.Progress.
func ConsoleProgress(w io.Writer, start time.Time) func(string) {
	return func(step string) {
		fmt.Fprintf(w, "[%6.1fs] %s\n", time.Since(start).Seconds(), step)
	}
}

// Region is the region of the seeded LKE cluster and of the nodes.
func (c *Cluster) Region() string { return c.opts.Region }

// ErrAwaitTimedOut is returned by Await when the condition did not hold in time.
var ErrAwaitTimedOut = errors.New("timed out")

// Await polls cond every interval until it reports true and says how long that took. It gives up
// with ErrAwaitTimedOut after timeout, and at once when a component or the controller has died,
// since nothing would change after that. cond's errors stop the wait, except those that come
// from the timeout cutting cond short.
func (c *Cluster) Await(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		done, err := cond(ctx)
		if err != nil && ctx.Err() == nil {
			return time.Since(start), err
		}
		if done {
			return time.Since(start), nil
		}
		if err := c.CheckHealthy(); err != nil {
			return time.Since(start), err
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("%w after %v", ErrAwaitTimedOut, timeout)
		case <-time.After(interval):
		}
	}
}
