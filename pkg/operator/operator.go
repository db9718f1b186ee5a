// Package operator assembles the controller: it checks the settings (ours and Karpenter core's)
// before core's operator sees them, asks the Linode API once whether they are right, then starts
// core's operator (leader election, probes, metrics) with the webhooks, and the Linode cloud
// provider and the provider's own controllers as soon as the API answers.
package operator

import (
	"context"
	"fmt"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/awslabs/operatorpkg/serrors"
	"github.com/go-logr/zapr"
	"github.com/linode/linodego"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/version"
)

// Run starts the controller from settings parsed by ParseSettings and blocks until SIGTERM or
// SIGINT. It returns an error, in words for the user, when the controller cannot start.
//
// The webhooks do not wait for the Linode API: the conversion webhook is how every client reads
// LinodeNodeClasses stored as v1alpha1, and the Node webhook is what keeps LKE nodes from joining
// without Karpenter's registration taint, so both serve on every replica whatever the API does.
// Only the settings the API can prove wrong on its first answer (the cluster, the region) stop
// the controller before it serves; the controllers that drive Linode start once the API answers.
func Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = log.IntoContext(ctx, serrors.NewLogger(zapr.NewLogger(logging.NewLogger(ctx, "controller"))))
	opts := options.FromContext(ctx)
	log.FromContext(ctx).Info("starting karpenter-provider-linode", "version", version.Version(), "commit", version.Commit(), "goVersion", runtime.Version(), "mode", opts.Mode)
	m, err := ModeNamed(opts.Mode)
	if err != nil {
		return err
	}
	for _, setting := range opts.AlphaSettings {
		log.FromContext(ctx).Info("read a setting of the alpha provider under its new name", "setting", setting)
	}

	credentials, err := Credentials(opts)
	if err != nil {
		return err
	}
	clientOptions := ClientOptions(opts)
	clientOptions.Credentials = credentials
	api, err := linode.NewClient(clientOptions)
	if err != nil {
		return err
	}
	api.SetLogger(restyLogger{log: log.FromContext(ctx).WithName("linode"), credentials: credentials})
	stopProbes, err := ServeStartupProbes(coreoptions.FromContext(ctx).HealthProbePort)
	if err != nil {
		return err
	}
	target, err := firstCheck(ctx, api, opts, m, credentials)
	if err := stopProbes(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Stopped during the first check: a normal shutdown.
		return nil
	}
	if err != nil {
		return err
	}

	// Core's operator reads the settings again (they parse, ParseSettings checked them) and
	// binds the probe and metrics ports.
	coreCtx, core := coreoperator.NewOperator()
	coreCtx, cancel := context.WithCancel(coreCtx)
	defer cancel()
	// A controller registered while the manager stops can hang the shutdown: controller-runtime's
	// Add holds a runnable group's lock while it hands the runnable to the group's loop, and the
	// loop waits for the same lock once the stop has asked for it. So the signal stops the
	// manager only between registrations, never during one.
	registration := &sync.Mutex{}
	context.AfterFunc(ctx, func() {
		registration.Lock()
		defer registration.Unlock()
		cancel()
	})
	if err := checkCRDs(core.GetRESTMapper(), opts.SystemNamespace); err != nil {
		return err
	}
	if err := watchCredentials(core, api, credentials); err != nil {
		return err
	}
	var modeWebhooks []Webhook
	if !opts.DisableWebhook {
		modeWebhooks = m.Webhooks(core.GetClient())
	}
	webhookControllers, err := serveWebhooks(core, opts, modeWebhooks)
	if err != nil {
		return err
	}
	core.WithControllers(coreCtx, webhookControllers...)
	if err := core.Add(&linodeControllers{coreCtx: coreCtx, registration: registration, core: core, api: api, credentials: credentials, mode: m, target: target}); err != nil {
		return err
	}
	// Core's Start panics on the manager's error; a ConfigError found once the API answers ends
	// the controller with its message instead.
	return core.Manager.Start(coreCtx)
}

// linodeControllers start Karpenter core's controllers and the provider's once the Linode API
// answers the start-up check, on every replica: the manager runs the leader's share only on the
// leader.
type linodeControllers struct {
	coreCtx context.Context
	// registration is held while the controllers register, and by the shutdown while it
	// cancels coreCtx.
	registration *sync.Mutex
	core         *coreoperator.Operator
	api          linode.API
	credentials  *linode.Credentials
	mode         Mode
	// target is what the first check found; nil when it could not tell.
	target Target
}

// NeedLeaderElection is false: every replica builds the controllers, as it serves the webhooks.
func (l *linodeControllers) NeedLeaderElection() bool { return false }

// Start waits for the Linode API, unless the first check found the target, then registers the
// controllers with the running manager. A setting the API proves wrong stops the controller.
func (l *linodeControllers) Start(ctx context.Context) error {
	target := l.target
	if target == nil {
		var err error
		target, err = WaitForLinode(ctx, l.api, options.FromContext(l.coreCtx), l.mode, l.credentials, DefaultBackoff)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
	}
	log.FromContext(ctx).Info("found the Linode side of the cluster", "mode", target.Mode(), "region", target.Region(), "cluster", target.String())
	controllers, err := NewControllers(l.coreCtx, l.core, l.api, l.credentials, target)
	if err != nil {
		return err
	}
	l.registration.Lock()
	defer l.registration.Unlock()
	if l.coreCtx.Err() != nil {
		return nil
	}
	for _, c := range controllers {
		if err := c.Register(l.coreCtx, l.core.Manager); err != nil {
			return fmt.Errorf("starting the controllers: %w", err)
		}
	}
	return nil
}

// ClientOptions are the Linode client's settings for opts, but for the credentials.
func ClientOptions(opts *options.Options) linode.ClientOptions {
	client := linode.DefaultClientOptions()
	client.URL = opts.APIURL
	client.Version = opts.APIVersion
	if opts.ClientTimeoutSeconds > 0 {
		client.Timeout = time.Duration(opts.ClientTimeoutSeconds) * time.Second
	}
	// Validate has parsed them.
	if budgets, err := linode.ParseBudgets(opts.APIRateLimits); err == nil {
		client.Budgets = budgets
	}
	return client
}

// Credentials hold the token the settings name: the file's, re-read when it changes, or the
// variable's.
func Credentials(opts *options.Options) (*linode.Credentials, error) {
	if opts.TokenFile != "" {
		return linode.CredentialsFromFile(opts.TokenFile)
	}
	return linode.StaticCredentials(opts.Token), nil
}

// watchCredentials re-reads a token file so that a rotated token is used without a restart, and
// while the API refuses the token asks it again with the first page of Linodes, which every
// mode's token may read. A refused token is reported by the NodeClasses' APIAuthorized
// condition, their events and karpenter_linode_api_token_refused, never by readiness: readiness
// is what keeps the webhooks in their Service, and they need no token.
func watchCredentials(core *coreoperator.Operator, api linode.API, credentials *linode.Credentials) error {
	probe := func(ctx context.Context) error {
		_, err := api.ListInstances(ctx, &linodego.ListOptions{PageOptions: &linodego.PageOptions{Page: 1}})
		return err
	}
	return core.Add(manager.RunnableFunc(func(ctx context.Context) error {
		credentials.Watch(ctx, linode.DefaultTokenCheckInterval, probe)
		return nil
	}))
}

// requiredCRDs are the resources the controller cannot run without; without them core's
// readiness check fails with no word about the fix.
var requiredCRDs = []schema.GroupVersionKind{
	{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"},
	{Group: "karpenter.sh", Version: "v1", Kind: "NodeClaim"},
	{Group: "karpenter.k8s.linode", Version: "v1", Kind: "LinodeNodeClass"},
}

func checkCRDs(mapper meta.RESTMapper, namespace string) error {
	var missing []string
	for _, gvk := range requiredCRDs {
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			missing = append(missing, gvk.Kind)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the cluster has no %v CustomResourceDefinitions: install them first (helm upgrade --install karpenter-crd charts/karpenter-crd --namespace %s)",
			missing, namespace)
	}
	return nil
}
