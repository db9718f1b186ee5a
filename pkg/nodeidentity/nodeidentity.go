// Package nodeidentity is the node identity component of instance mode (cmd/node-identity): the
// process, with a ServiceAccount of its own, that keeps the bootstrap token key, issues each
// NodeClaim's bootstrap token and decides the node client certificates the tokens ask for
// (package bootstraptoken). It holds what makes a kubelet a node, so that the controller's
// ServiceAccount, which Karpenter core needs wide rights for, cannot: a thief of that token can
// neither approve a certificate, nor read the key, nor write a Secret of kube-system.
//
// It talks to the Kubernetes API alone: no Linode token, no webhook, no port but its metrics and
// probes.
package nodeidentity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/awslabs/operatorpkg/serrors"
	"github.com/go-logr/zapr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	_ "sigs.k8s.io/karpenter/pkg/apis/v1" // NodeClaims, in client-go's scheme.
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/utils/env"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
)

// Options are the component's settings, from flags or the environment variables the chart sets.
type Options struct {
	// Namespace holds the key's Secret and the leader election lease: the release's.
	Namespace string
	// KeySecretName is the Secret the key is kept in, which the chart mounts into the controller.
	KeySecretName string
	// LeaderElection runs the controllers on one replica at a time.
	LeaderElection bool
	// LeaderElectionName is the lease of the leader election.
	LeaderElectionName string
	// MetricsPort serves /metrics, HealthProbePort /healthz and /readyz.
	MetricsPort, HealthProbePort int
	// LogLevel is debug, info or error.
	LogLevel string
}

// ErrHelp is returned by ParseOptions for --help, once the help is printed.
var ErrHelp = flag.ErrHelp

// ParseOptions reads the settings from args over the environment, and reports every bad one.
func ParseOptions(args []string, output io.Writer) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("node-identity", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.Namespace, "system-namespace", env.WithDefaultString("SYSTEM_NAMESPACE", "kube-system"), "[SYSTEM_NAMESPACE] Namespace of the release: the key's Secret and the leader election lease are there.")
	fs.StringVar(&o.KeySecretName, "bootstrap-token-key-secret", env.WithDefaultString("BOOTSTRAP_TOKEN_KEY_SECRET", "karpenter-bootstrap-token-key"), "[BOOTSTRAP_TOKEN_KEY_SECRET] Secret the key of the bootstrap tokens is kept in.")
	fs.BoolVar(&o.LeaderElection, "leader-elect", !env.WithDefaultBool("DISABLE_LEADER_ELECTION", false), "Run the controllers on one replica at a time ([DISABLE_LEADER_ELECTION]=true turns it off).")
	fs.StringVar(&o.LeaderElectionName, "leader-election-name", env.WithDefaultString("LEADER_ELECTION_NAME", "karpenter-node-identity"), "[LEADER_ELECTION_NAME] Lease of the leader election, in the release's namespace.")
	fs.IntVar(&o.MetricsPort, "metrics-port", env.WithDefaultInt("METRICS_PORT", 8080), "[METRICS_PORT] Port of /metrics.")
	fs.IntVar(&o.HealthProbePort, "health-probe-port", env.WithDefaultInt("HEALTH_PROBE_PORT", 8081), "[HEALTH_PROBE_PORT] Port of /healthz and /readyz.")
	fs.StringVar(&o.LogLevel, "log-level", env.WithDefaultString("LOG_LEVEL", "info"), "[LOG_LEVEL] debug, info or error.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var problems []string
	if o.Namespace == "" {
		problems = append(problems, "SYSTEM_NAMESPACE is empty: set it to the release's namespace (the chart sets it from the pod's)")
	}
	if o.KeySecretName == "" {
		problems = append(problems, "BOOTSTRAP_TOKEN_KEY_SECRET is empty: name the Secret the chart mounts into the controller")
	}
	for name, port := range map[string]int{"METRICS_PORT": o.MetricsPort, "HEALTH_PROBE_PORT": o.HealthProbePort} {
		if port < 1 || port > 65535 {
			problems = append(problems, fmt.Sprintf("%s %d is not a port", name, port))
		}
	}
	if o.LogLevel != "debug" && o.LogLevel != "info" && o.LogLevel != "error" {
		problems = append(problems, fmt.Sprintf("LOG_LEVEL %q is not valid: use debug, info or error (helm: logLevel)", o.LogLevel))
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return o, nil
}

// Run creates the key if there is none, then issues tokens and decides certificate requests until
// ctx is done, connecting with config.
func Run(ctx context.Context, config *rest.Config, opts *Options) error {
	ctx = coreoptions.ToContext(ctx, &coreoptions.Options{LogLevel: opts.LogLevel, LogOutputPaths: "stdout", LogErrorOutputPaths: "stderr"})
	logger := serrors.NewLogger(zapr.NewLogger(logging.NewLogger(ctx, "node-identity")))
	log.SetLogger(logger)
	ctx = log.IntoContext(ctx, logger)
	m, err := manager.New(config, manager.Options{
		Scheme:                  scheme.Scheme,
		Logger:                  logger,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        opts.LeaderElectionName,
		LeaderElectionNamespace: opts.Namespace,
		// The lease is given up as the process stops, so a new leader takes over at once.
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: net.JoinHostPort("", strconv.Itoa(opts.MetricsPort))},
		HealthProbeBindAddress:        net.JoinHostPort("", strconv.Itoa(opts.HealthProbePort)),
	})
	if err != nil {
		return fmt.Errorf("connecting to the API server: %w", err)
	}
	keyRef := types.NamespacedName{Namespace: opts.Namespace, Name: opts.KeySecretName}
	if err := Register(ctx, m, keyRef); err != nil {
		return err
	}
	if err := m.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := m.AddReadyzCheck("cache", func(req *http.Request) error {
		if !m.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("the cache has not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	logger.Info("issuing bootstrap tokens and deciding node certificate requests", "key", keyRef.String(), "leader-election", opts.LeaderElection)
	return m.Start(ctx)
}

// Register makes sure of the key in the Secret keyRef, creating it if there is none, and adds the
// token controller and the certificate approver to m. Every replica makes sure of the key as it
// starts: the controller's pods mount it, and launch no node without it.
func Register(ctx context.Context, m manager.Manager, keyRef types.NamespacedName) error {
	issuer := bootstraptoken.NewIssuer(m.GetClient(), m.GetAPIReader(), keyRef, clock.RealClock{})
	if _, err := issuer.Key(ctx); err != nil {
		return err
	}
	recorder := events.NewRecorder(m.GetEventRecorderFor("karpenter-node-identity")) //nolint:staticcheck // SA1019: core's events.Recorder takes the legacy recorder
	if err := bootstraptoken.NewController(m.GetClient(), issuer).Register(ctx, m); err != nil {
		return err
	}
	return bootstraptoken.NewApprover(m.GetClient(), m.GetAPIReader(), issuer, recorder).Register(ctx, m)
}
