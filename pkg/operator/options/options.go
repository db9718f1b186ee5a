// Package options holds the provider's settings. Like Karpenter core's, they come from flags or
// environment variables, are parsed once at start-up and travel in the context.
package options

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/utils/env"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// ConfigError is a setting the Linode API shows to be wrong (a refused token, an unknown cluster
// or region): retrying cannot help, so the controller exits with the message, which names the
// setting and says what to do.
type ConfigError struct {
	Message string
}

func (e *ConfigError) Error() string { return e.Message }

// Bounds of GARBAGE_COLLECTION_GRACE_PERIOD. The default is twice core's five-minute launch
// timeout; a node's NodeClaim tag keeps it owned while its launch runs, so the grace period only
// has to outlast the Kubernetes cache, and tests shorten it to seconds.
const (
	DefaultGarbageCollectionGracePeriod = 10 * time.Minute
	MinGarbageCollectionGracePeriod     = 10 * time.Second
)

// DefaultBootstrapTokenKeyFile is where the chart mounts the bootstrap token key.
const DefaultBootstrapTokenKeyFile = "/var/run/secrets/karpenter.k8s.linode/bootstrap-token-key/key"

// Options are the provider's settings.
type Options struct {
	// ClusterName is the label of the LKE cluster (LKE mode). Instance mode does not need it: its
	// Linodes carry the cluster's identity (the kube-system namespace's UID), which no rename
	// changes.
	ClusterName string
	// Token is the Linode API token. It is never logged.
	Token string
	// TokenFile is a file holding the Linode API token (a mounted Secret), re-read when it
	// changes; it replaces Token.
	TokenFile string
	// Region overrides the region discovered from the LKE cluster; instance mode requires it.
	Region string
	// Mode is lke or instance.
	Mode mode.Mode
	// APIURL is the Linode API root, e.g. https://api.linode.com or the emulator's URL.
	APIURL string
	// APIVersion is v4, or v4beta for LKE Enterprise clusters.
	APIVersion string
	// ClientTimeoutSeconds bounds each Linode API request.
	ClientTimeoutSeconds int
	// APIRateLimits change the budgets the client paces its requests to from Linode's published
	// limits: class=requests/window, comma-separated (linode.ParseBudgets).
	APIRateLimits string
	// ClusterEndpoint is the Kubernetes API server URL nodes join (instance mode); empty in LKE
	// mode, where LKE configures the kubelets.
	ClusterEndpoint string
	// HypervisorMemoryPercent is the share of a plan's memory the hypervisor and guest kernel
	// keep, so never reaches the kubelet.
	HypervisorMemoryPercent float64
	// CatalogueRefreshInterval is how often plans, prices and regions are re-read.
	CatalogueRefreshInterval time.Duration
	// SizingPolicy is SizingPolicyEnabled or SizingPolicyDisabled: whether the sizing policy
	// narrows the plans offered to NodePools for their pending pods, or every NodePool is offered
	// every plan, as Karpenter core does on its own.
	SizingPolicy string
	// SizingLargeFleetNodes is the NodePool node count above which the sizing policy trades
	// price for fewer nodes in the fleet it plans for the NodePool's pending pods.
	SizingLargeFleetNodes int
	// SizingTolerancePercent is how much dearer, in percent of the cheapest fleet, a fleet with
	// fewer nodes may be when the cheapest one would give the NodePool more than
	// SizingLargeFleetNodes nodes.
	SizingTolerancePercent float64
	// SizingTimeBudget is how long the sizing policy may simulate a NodePool's fleet before it
	// offers the NodePool every plan instead; 0 for no limit.
	SizingTimeBudget time.Duration
	// GarbageCollectionGracePeriod is how long a Linode the provider launched may have no
	// NodeClaim before it is deleted.
	GarbageCollectionGracePeriod time.Duration
	// DisableWebhook turns off the Node mutating webhook. The webhook server, its certificate and
	// the LinodeNodeClass conversion webhook stay on: the CRD's v1alpha1 needs them.
	DisableWebhook bool
	// WebhookPort is the port the webhook server listens on.
	WebhookPort int
	// WebhookServiceName is the Service in front of the webhook: its certificate names it.
	WebhookServiceName string
	// WebhookCertSecretName is the Secret, in SystemNamespace, holding the webhook's certificate.
	WebhookCertSecretName string
	// BootstrapTokenKeyFile is the key instance mode's bootstrap tokens' secrets derive from, as
	// the chart mounts it from the Secret the node identity component keeps it in.
	BootstrapTokenKeyFile string
	// WebhookConfigurationName is the MutatingWebhookConfiguration whose caBundle trusts it.
	WebhookConfigurationName string
	// SystemNamespace is the controller's namespace, where the webhook certificate is kept.
	SystemNamespace string
	// MaintenanceLeadTime is how long before Linode host maintenance that takes a node down
	// (power off/on, reboot, cold migration) the node is replaced.
	MaintenanceLeadTime time.Duration
	// MaintenancePollInterval is how often Linode's account events are read (the maintenance list less often),
	// and in LKE mode the cluster's Kubernetes version.
	MaintenancePollInterval time.Duration

	// AlphaSettings say which settings came from the alpha provider's environment variables, to
	// be logged at start-up with the names that replace them.
	AlphaSettings []string

	// malformedEnvironment names environment variables whose values could not be parsed. Core's
	// helpers fall back to the default for those, which would hide a typo; Validate reports them.
	malformedEnvironment []error
}

// Defaults of the sizing policy's trade-off between price and node count.
const (
	DefaultSizingLargeFleetNodes  = 100
	DefaultSizingTolerancePercent = 25
	// DefaultSizingTimeBudget is far above what the usual mixes take (tens of milliseconds for
	// thousands of pods in dozens of shapes on a busy machine), and short enough that core's
	// provisioning round, which waits for the answer, is not held up long by pods of thousands
	// of shapes.
	DefaultSizingTimeBudget = 250 * time.Millisecond
)

// Defaults of the maintenance settings: replacements start two hours ahead; events read every
// minute and the maintenance list every 5 minutes (lead time / 24) are 0.6% of Linode's budget for
// paginated GETs.
const (
	DefaultMaintenanceLeadTime     = 2 * time.Hour
	DefaultMaintenancePollInterval = time.Minute
	// minMaintenancePollInterval keeps the controller's share of the paginated-GET budget (200 a
	// minute) at 12% or less.
	minMaintenancePollInterval = 5 * time.Second
)

// Injectables lists the provider's option sets for Karpenter core's injection.
var Injectables = []coreoptions.Injectable{&Options{}}

// AddFlags registers the settings; each flag also reads the environment variable named in its help.
func (o *Options) AddFlags(fs *coreoptions.FlagSet) {
	fs.StringVar(&o.ClusterName, "cluster-name", env.WithDefaultString("CLUSTER_NAME", ""), "[CLUSTER_NAME] Label of the LKE cluster to manage (required in LKE mode).")
	fs.StringVar(&o.Token, "linode-token", env.WithDefaultString("LINODE_TOKEN", ""), "[LINODE_TOKEN] Linode API token with read/write access to Kubernetes and Linodes (required). Prefer the environment variable: flags are visible in the process list.")
	fs.StringVar(&o.TokenFile, "linode-token-file", env.WithDefaultString("LINODE_TOKEN_FILE", ""), "[LINODE_TOKEN_FILE] File holding the Linode API token, e.g. a mounted Secret; a token changed in it is used without a restart. Replaces LINODE_TOKEN.")
	fs.StringVar(&o.Region, "linode-region", env.WithDefaultString("LINODE_REGION", ""), "[LINODE_REGION] Region to launch in (instance mode); LKE mode launches in the LKE cluster's region and refuses another.")
	fs.StringVar((*string)(&o.Mode), "karpenter-mode", env.WithDefaultString("KARPENTER_MODE", string(mode.LKE)), "[KARPENTER_MODE] lke (node pools of an LKE cluster) or instance (plain Linodes).")
	fs.StringVar(&o.APIURL, "linode-url", env.WithDefaultString("LINODE_URL", "https://api.linode.com"), "[LINODE_URL] Linode API root URL, without the version.")
	fs.StringVar(&o.APIVersion, "linode-api-version", env.WithDefaultString("LINODE_API_VERSION", "v4"), "[LINODE_API_VERSION] v4, or v4beta for LKE Enterprise clusters.")
	o.malformedEnvironment, o.AlphaSettings = nil, nil
	fs.IntVar(&o.ClientTimeoutSeconds, "linode-client-timeout", o.intFromEnv("LINODE_CLIENT_TIMEOUT", 30), "[LINODE_CLIENT_TIMEOUT] Seconds a Linode API request may take.")
	fs.StringVar(&o.APIRateLimits, "linode-api-rate-limits", env.WithDefaultString("LINODE_API_RATE_LIMITS", ""), "[LINODE_API_RATE_LIMITS] Rate limits the controller paces its Linode API requests to, where they differ from Linode's published ones (linode_create=20/15s, list=200/1m, other=1600/1m): class=requests/window, comma-separated, of the classes linode_create, linode_delete, lke_pool_create, lke_pool_delete, list, other; 0 requests leaves a class unpaced.")
	fs.StringVar(&o.ClusterEndpoint, "cluster-endpoint", env.WithDefaultString("CLUSTER_ENDPOINT", ""), "[CLUSTER_ENDPOINT] https URL of the Kubernetes API server that nodes join (instance mode).")
	fs.Float64Var(&o.HypervisorMemoryPercent, "hypervisor-memory-percent", o.hypervisorMemoryPercentFromEnv(2.5), "[HYPERVISOR_MEMORY_PERCENT] Share of a plan's memory not visible to the node, in percent (the alpha provider's VM_MEMORY_OVERHEAD_PERCENT, as a fraction, is read too).")
	fs.StringVar(&o.SizingPolicy, "sizing-policy", env.WithDefaultString("SIZING_POLICY", v1.SizingPolicyEnabled), "[SIZING_POLICY] enabled: offer each NodePool the plans that make the cheapest fleet for its pending pods; disabled: offer every plan, as Karpenter core does on its own. A NodePool annotated "+v1.AnnotationSizingPolicy+"=disabled is offered every plan either way.")
	fs.IntVar(&o.SizingLargeFleetNodes, "sizing-large-fleet-nodes", o.intFromEnv("SIZING_LARGE_FLEET_NODES", DefaultSizingLargeFleetNodes), "[SIZING_LARGE_FLEET_NODES] When the cheapest fleet for a NodePool's pending pods would give the NodePool more nodes than this, the fleet with the fewest nodes within SIZING_TOLERANCE_PERCENT of its price, and costing no more than the nodes it saves, is launched instead.")
	fs.Float64Var(&o.SizingTolerancePercent, "sizing-tolerance-percent", o.floatFromEnv("SIZING_TOLERANCE_PERCENT", DefaultSizingTolerancePercent), "[SIZING_TOLERANCE_PERCENT] How much dearer, in percent of the cheapest fleet, a fleet with fewer nodes may be when the cheapest would give the NodePool more than SIZING_LARGE_FLEET_NODES nodes.")
	fs.DurationVar(&o.SizingTimeBudget, "sizing-time-budget", o.durationFromEnv("SIZING_TIME_BUDGET", DefaultSizingTimeBudget), "[SIZING_TIME_BUDGET] How long the sizing policy may simulate the fleet for a NodePool's pending pods before it offers the NodePool every plan instead, as Karpenter core does on its own, and says so in an event on the NodePool and the karpenter_linode_sizing_time_budget_exceeded_total metric; it then offers every plan without sizing while the pending pods keep at least half as many shapes, for a minute that doubles with each overrun in a row, up to 16; 0 sets no limit.")
	fs.DurationVar(&o.CatalogueRefreshInterval, "catalogue-refresh-interval", o.durationFromEnv("CATALOGUE_REFRESH_INTERVAL", 12*time.Hour), "[CATALOGUE_REFRESH_INTERVAL] How often plans, prices and regions are re-read.")
	fs.DurationVar(&o.GarbageCollectionGracePeriod, "garbage-collection-grace-period", o.durationFromEnv("GARBAGE_COLLECTION_GRACE_PERIOD", DefaultGarbageCollectionGracePeriod), "[GARBAGE_COLLECTION_GRACE_PERIOD] How long a node the provider launched may have no NodeClaim before it is deleted.")
	fs.BoolVar(&o.DisableWebhook, "disable-webhook", o.boolFromEnv("DISABLE_WEBHOOK", false), "[DISABLE_WEBHOOK] Do not serve the Node mutating webhook (the LinodeNodeClass conversion webhook is always served).")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.intFromEnv("WEBHOOK_PORT", 8443), "[WEBHOOK_PORT] Port of the HTTPS server of the Node mutating webhook and the LinodeNodeClass conversion webhook.")
	fs.StringVar(&o.WebhookServiceName, "webhook-service", env.WithDefaultString("WEBHOOK_SERVICE", "karpenter-webhook"), "[WEBHOOK_SERVICE] Name of the webhook's Service, which its serving certificate names.")
	fs.StringVar(&o.WebhookCertSecretName, "webhook-cert-secret", env.WithDefaultString("WEBHOOK_CERT_SECRET", "karpenter-cert"), "[WEBHOOK_CERT_SECRET] Secret the controller keeps the webhook's serving certificate in.")
	fs.StringVar(&o.BootstrapTokenKeyFile, "bootstrap-token-key-file", env.WithDefaultString("BOOTSTRAP_TOKEN_KEY_FILE", DefaultBootstrapTokenKeyFile), "[BOOTSTRAP_TOKEN_KEY_FILE] File holding the key instance mode's bootstrap tokens derive from, mounted from the Secret the node identity component keeps it in.")
	fs.StringVar(&o.WebhookConfigurationName, "webhook-configuration", env.WithDefaultString("WEBHOOK_CONFIGURATION", "karpenter"), "[WEBHOOK_CONFIGURATION] MutatingWebhookConfiguration whose caBundle the controller keeps.")
	fs.StringVar(&o.SystemNamespace, "system-namespace", env.WithDefaultString("SYSTEM_NAMESPACE", "kube-system"), "[SYSTEM_NAMESPACE] Namespace the controller runs in.")
	fs.DurationVar(&o.MaintenanceLeadTime, "maintenance-lead-time", o.durationFromEnv("MAINTENANCE_LEAD_TIME", DefaultMaintenanceLeadTime), "[MAINTENANCE_LEAD_TIME] How long before Linode host maintenance that takes a node down (power off/on, reboot, cold migration) the node is replaced.")
	fs.DurationVar(&o.MaintenancePollInterval, "maintenance-poll-interval", o.durationFromEnv("MAINTENANCE_POLL_INTERVAL", DefaultMaintenancePollInterval), "[MAINTENANCE_POLL_INTERVAL] How often Linode's account events are read, one of Linode's 200 paginated GETs a minute per poll (the maintenance list is read every MAINTENANCE_LEAD_TIME/24, never more often), and in LKE mode the cluster's Kubernetes version.")
	o.refuseAlphaOnlySettings()
}

// Parse parses the flags and validates the result, naming each bad setting and what to do.
func (o *Options) Parse(fs *coreoptions.FlagSet, args ...string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		return fmt.Errorf("parsing flags: %w", err)
	}
	return o.Validate()
}

// Validate checks every setting and reports all problems at once, one line each.
func (o *Options) Validate() error {
	errs := append([]error(nil), o.malformedEnvironment...)
	if o.ClusterName == "" && o.Mode != mode.Instance {
		errs = append(errs, errors.New("CLUSTER_NAME is not set: set it to the label of your LKE cluster (helm: --set settings.clusterName=...)"))
	}
	switch {
	case o.Token == "" && o.TokenFile == "":
		errs = append(errs, errors.New("LINODE_TOKEN is not set: create a personal access token with Kubernetes and Linodes read/write scopes (helm: --set apiToken=... or --set existingSecret=...)"))
	case o.Token != "" && o.TokenFile != "":
		errs = append(errs, errors.New("LINODE_TOKEN and LINODE_TOKEN_FILE are both set: keep only LINODE_TOKEN_FILE, the file the chart mounts from the token's Secret"))
	case o.TokenFile != "":
		if _, err := linode.CredentialsFromFile(o.TokenFile); err != nil {
			errs = append(errs, fmt.Errorf("LINODE_TOKEN_FILE: %w (helm: apiToken or existingSecret)", err))
		}
	}
	switch o.Mode {
	case mode.LKE:
	case mode.Instance:
		if o.Region == "" {
			errs = append(errs, errors.New("LINODE_REGION is not set: instance mode has no LKE cluster to discover it from; set it, e.g. us-ord"))
		}
	default:
		errs = append(errs, fmt.Errorf("KARPENTER_MODE %q is not valid: use lke or instance", o.Mode))
	}
	if err := linode.CheckAPIURL(o.APIURL); err != nil {
		errs = append(errs, fmt.Errorf("LINODE_URL %w", err))
	} else if u, _ := url.Parse(o.APIURL); strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v4") || strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v4beta") {
		errs = append(errs, fmt.Errorf("LINODE_URL %q includes the API version: drop it and set LINODE_API_VERSION instead", o.APIURL))
	}
	if o.APIVersion != "v4" && o.APIVersion != "v4beta" {
		errs = append(errs, fmt.Errorf("LINODE_API_VERSION %q is not valid: use v4, or v4beta for LKE Enterprise", o.APIVersion))
	}
	if !(o.HypervisorMemoryPercent >= 0 && o.HypervisorMemoryPercent < 50) {
		errs = append(errs, fmt.Errorf("HYPERVISOR_MEMORY_PERCENT %v is not valid: use a percentage from 0 to 50", o.HypervisorMemoryPercent))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("WEBHOOK_PORT %d is not a port: use 1-65535 (helm: webhook.port)", o.WebhookPort))
	}
	if o.SizingPolicy != v1.SizingPolicyEnabled && o.SizingPolicy != v1.SizingPolicyDisabled {
		errs = append(errs, fmt.Errorf("SIZING_POLICY %q is not valid: use %s or %s (helm: settings.sizing.policy)", o.SizingPolicy, v1.SizingPolicyEnabled, v1.SizingPolicyDisabled))
	}
	if o.SizingLargeFleetNodes < 0 {
		errs = append(errs, fmt.Errorf("SIZING_LARGE_FLEET_NODES %d is not valid: use a node count, 0 or more (helm: settings.sizing.largeFleetNodes)", o.SizingLargeFleetNodes))
	}
	if !(o.SizingTolerancePercent >= 0 && o.SizingTolerancePercent <= 100) {
		errs = append(errs, fmt.Errorf("SIZING_TOLERANCE_PERCENT %v is not valid: use a percentage from 0 (always the cheapest fleet) to 100 (helm: settings.sizing.tolerancePercent)", o.SizingTolerancePercent))
	}
	if o.SizingTimeBudget < 0 {
		errs = append(errs, fmt.Errorf("SIZING_TIME_BUDGET %v is not valid: use a duration, 0 for no limit (helm: settings.sizing.timeBudget)", o.SizingTimeBudget))
	}
	if o.ClientTimeoutSeconds < 1 {
		errs = append(errs, fmt.Errorf("LINODE_CLIENT_TIMEOUT %d is not valid: use a number of seconds, at least 1", o.ClientTimeoutSeconds))
	}
	if _, err := linode.ParseBudgets(o.APIRateLimits); err != nil {
		errs = append(errs, fmt.Errorf("LINODE_API_RATE_LIMITS: %w (helm: settings.apiRateLimits)", err))
	}
	if err := validateClusterEndpoint(o.ClusterEndpoint); err != nil {
		errs = append(errs, err)
	}
	if o.GarbageCollectionGracePeriod < MinGarbageCollectionGracePeriod {
		errs = append(errs, fmt.Errorf("GARBAGE_COLLECTION_GRACE_PERIOD %v is too short: use at least %v, longer than the Kubernetes cache takes to show a new NodeClaim", o.GarbageCollectionGracePeriod, MinGarbageCollectionGracePeriod))
	}
	if o.CatalogueRefreshInterval < time.Minute {
		errs = append(errs, fmt.Errorf("CATALOGUE_REFRESH_INTERVAL %v is too short: use at least 1m (Linode rate-limits listings)", o.CatalogueRefreshInterval))
	}
	if o.MaintenancePollInterval < minMaintenancePollInterval {
		errs = append(errs, fmt.Errorf("MAINTENANCE_POLL_INTERVAL %v is too short: use at least %v; each poll takes one or two of Linode's 200 paginated GETs a minute (helm: settings.maintenance.pollInterval)",
			o.MaintenancePollInterval, minMaintenancePollInterval))
	}
	if o.MaintenanceLeadTime <= o.MaintenancePollInterval {
		errs = append(errs, fmt.Errorf("MAINTENANCE_LEAD_TIME %v is not longer than MAINTENANCE_POLL_INTERVAL %v: maintenance could start between two polls, before its node is replaced; use a longer lead time, e.g. 2h (helm: settings.maintenance.leadTime)",
			o.MaintenanceLeadTime, o.MaintenancePollInterval))
	}
	return errors.Join(errs...)
}

// floatFromEnv reads a number from the environment, noting a malformed value for Validate.
func (o *Options) floatFromEnv(key string, def float64) float64 {
	value, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("%s %q is not a number: use a percentage such as 2.5", key, value))
		return def
	}
	return f
}

// intFromEnv reads an integer from the environment, noting a malformed value for Validate.
func (o *Options) intFromEnv(key string, def int) int {
	value, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	i, err := strconv.Atoi(value)
	if err != nil {
		o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("%s %q is not a whole number", key, value))
		return def
	}
	return i
}

// boolFromEnv reads true or false from the environment, noting a malformed value for Validate.
func (o *Options) boolFromEnv(key string, def bool) bool {
	value, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(value)
	if err != nil {
		o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("%s %q is not a boolean: use true or false", key, value))
		return def
	}
	return b
}

// durationFromEnv reads a duration from the environment, noting a malformed value for Validate.
func (o *Options) durationFromEnv(key string, def time.Duration) time.Duration {
	value, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("%s %q is not a duration: use a number with a unit, such as 12h or 30m", key, value))
		return def
	}
	return d
}

// ToContext stores the options in ctx.
func (o *Options) ToContext(ctx context.Context) context.Context { return ToContext(ctx, o) }

type optionsKey struct{}

// ToContext returns a context carrying opts.
func ToContext(ctx context.Context, opts *Options) context.Context {
	return context.WithValue(ctx, optionsKey{}, opts)
}

// FromContext returns the options stored in ctx; it panics if there are none, a wiring bug.
func FromContext(ctx context.Context) *Options {
	opts, ok := ctx.Value(optionsKey{}).(*Options)
	if !ok {
		panic("provider options missing from context")
	}
	return opts
}
