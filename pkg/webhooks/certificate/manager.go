package certificate

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"github.com/samber/lo"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Defaults: a CA that outlives ten serving certificates, each renewed a month before it expires,
// and a resync that restores a caBundle someone overwrote within a minute.
const (
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultServingValidity = 365 * 24 * time.Hour
	DefaultRenewBefore     = 30 * 24 * time.Hour
	DefaultResyncInterval  = time.Minute
)

// Target names the objects the manager keeps: the Secret holding the certificate and the Service
// whose DNS names it serves (both in Namespace), and the webhook configurations whose caBundle
// must trust it.
type Target struct {
	Namespace   string
	SecretName  string
	ServiceName string
	// WebhookConfigurationName is the MutatingWebhookConfiguration of the admission webhooks the
	// server answers; empty when it answers none.
	WebhookConfigurationName string
	// CustomResourceDefinitionNames are the CRDs whose conversion webhook the server answers.
	CustomResourceDefinitionNames []string
}

// Options tune the manager.
type Options struct {
	CAValidity      time.Duration
	ServingValidity time.Duration
	RenewBefore     time.Duration
	ResyncInterval  time.Duration
	// ExtraHosts are served besides the Service's DNS names, e.g. 127.0.0.1 for a webhook the
	// apiserver reaches by URL.
	ExtraHosts []string
	Clock      clock.Clock
}

// WithValidity sets how long a new CA and a new serving certificate are valid.
func WithValidity(ca, serving time.Duration) option.Function[Options] {
	return func(o *Options) { o.CAValidity, o.ServingValidity = ca, serving }
}

// WithRenewBefore sets how long before it expires a serving certificate is replaced; it must be
// shorter than the serving certificate's validity.
func WithRenewBefore(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.RenewBefore = d }
}

// WithResyncInterval sets how often the Secret and the caBundle are checked.
func WithResyncInterval(d time.Duration) option.Function[Options] {
	return func(o *Options) { o.ResyncInterval = d }
}

// WithExtraHosts adds DNS names or IP addresses to those the certificate serves.
func WithExtraHosts(hosts ...string) option.Function[Options] {
	return func(o *Options) { o.ExtraHosts = append(o.ExtraHosts, hosts...) }
}

// WithClock sets the clock that dates certificates.
func WithClock(clk clock.Clock) option.Function[Options] {
	return func(o *Options) { o.Clock = clk }
}

// Manager keeps the webhook's serving certificate in a Secret, the caBundle trusting it, and the
// certificate the webhook server presents.
type Manager struct {
	kubeClient client.Client
	apiReader  client.Reader
	target     Target
	hosts      []string
	opts       Options
	serving    atomic.Pointer[tls.Certificate]
}

// NewManager returns a manager of target's certificate. kubeClient writes; apiReader reads
// without a cache (the manager's APIReader), since the controller may read Secrets in its own
// namespace only and a cached read would watch them in every namespace.
func NewManager(kubeClient client.Client, apiReader client.Reader, target Target, opts ...option.Function[Options]) *Manager {
	resolved := option.Resolve(append([]option.Function[Options]{
		WithValidity(DefaultCAValidity, DefaultServingValidity),
		WithRenewBefore(DefaultRenewBefore),
		WithResyncInterval(DefaultResyncInterval),
		WithClock(clock.RealClock{}),
	}, opts...)...)
	service, namespace := target.ServiceName, target.Namespace
	hosts := append([]string{
		service + "." + namespace + ".svc",
		service,
		service + "." + namespace,
		service + "." + namespace + ".svc.cluster.local",
	}, resolved.ExtraHosts...)
	return &Manager{kubeClient: kubeClient, apiReader: apiReader, target: target, hosts: hosts, opts: *resolved}
}

// Register runs the manager on every replica, leader or not: each one serves the webhook.
func (m *Manager) Register(_ context.Context, mgr manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(mgr).
		Named("webhooks.certificate").
		WithOptions(controller.Options{NeedLeaderElection: lo.ToPtr(false)}).
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(m))
}

// ConfigureTLS makes a TLS server present the managed certificate; pass it to the webhook
// server's TLSOpts.
func (m *Manager) ConfigureTLS(config *tls.Config) {
	config.GetCertificate = m.GetCertificate
}

// GetCertificate returns the certificate to serve. Until the first reconcile it fails, and the
// apiserver applies the webhook's failure policy.
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := m.serving.Load(); cert != nil {
		return cert, nil
	}
	return nil, errors.New("the webhook's serving certificate is not loaded yet")
}

// Reconcile makes sure the Secret holds a certificate good for a while yet, that the caBundle
// trusts it, and serves it.
func (m *Manager) Reconcile(ctx context.Context) (reconciler.Result, error) {
	current, err := m.ensureSecret(ctx)
	if err != nil {
		return reconciler.Result{}, err
	}
	if err := m.ensureWebhookConfigurationCABundle(ctx, current.raw[KeyCABundle]); err != nil {
		return reconciler.Result{}, err
	}
	for _, name := range m.target.CustomResourceDefinitionNames {
		if err := m.ensureConversionCABundle(ctx, name, current.raw[KeyCABundle]); err != nil {
			return reconciler.Result{}, err
		}
	}
	cert, err := tls.X509KeyPair(current.raw[KeyServingCert], current.raw[KeyServingKey])
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("loading the serving certificate: %w", err)
	}
	m.serving.Store(&cert)
	untilRenewal := current.serving.NotAfter.Add(-m.opts.RenewBefore).Sub(m.opts.Clock.Now())
	return reconciler.Result{RequeueAfter: max(min(m.opts.ResyncInterval, untilRenewal), time.Second)}, nil
}

// ensureSecret returns the Secret's certificate, after issuing a new one if it is missing or not
// fit to serve until the next renewal point.
func (m *Manager) ensureSecret(ctx context.Context) (*bundle, error) {
	key := types.NamespacedName{Namespace: m.target.Namespace, Name: m.target.SecretName}
	now := m.opts.Clock.Now()
	secret := &corev1.Secret{}
	if err := m.apiReader.Get(ctx, key, secret); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}
		return m.createSecret(ctx, key, now)
	}
	previous, reason := parseBundle(secret.Data)
	if reason == nil {
		if reason = previous.servesFor(m.hosts, now, now.Add(m.opts.RenewBefore)); reason == nil {
			return previous, nil
		}
	}
	renewed, err := issue(previous, m.hosts, now, m.opts.CAValidity, m.opts.ServingValidity)
	if err != nil {
		return nil, err
	}
	secret.Data = renewed.raw
	// The resource version read above makes a concurrent renewal by another replica a conflict:
	// the work queue retries, and this replica adopts the winner's certificate.
	if err := m.kubeClient.Update(ctx, secret); err != nil {
		return nil, fmt.Errorf("renewing the certificate in Secret %s: %w", key, err)
	}
	log.FromContext(ctx).Info("renewed the webhook's serving certificate", "Secret", key, "reason", reason, "expires", renewed.serving.NotAfter)
	return renewed, nil
}

func (m *Manager) createSecret(ctx context.Context, key types.NamespacedName, now time.Time) (*bundle, error) {
	created, err := issue(nil, m.hosts, now, m.opts.CAValidity, m.opts.ServingValidity)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Type:       corev1.SecretTypeTLS,
		Data:       created.raw,
	}
	if err := m.kubeClient.Create(ctx, secret); err != nil {
		// Another replica created it first; the retry adopts its certificate.
		return nil, fmt.Errorf("creating Secret %s: %w", key, err)
	}
	log.FromContext(ctx).Info("issued the webhook's serving certificate", "Secret", key, "expires", created.serving.NotAfter)
	return created, nil
}

// ensureWebhookConfigurationCABundle makes every webhook of the configuration trust caBundle.
func (m *Manager) ensureWebhookConfigurationCABundle(ctx context.Context, caBundle []byte) error {
	if m.target.WebhookConfigurationName == "" {
		return nil
	}
	configuration := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := m.apiReader.Get(ctx, types.NamespacedName{Name: m.target.WebhookConfigurationName}, configuration); err != nil {
		if apierrors.IsNotFound(err) {
			// Nothing calls the webhook yet; the next resync patches the configuration once it exists.
			log.FromContext(ctx).V(1).Info("webhook configuration not found", "MutatingWebhookConfiguration", m.target.WebhookConfigurationName)
			return nil
		}
		return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", m.target.WebhookConfigurationName, err)
	}
	stored := configuration.DeepCopy()
	changed := false
	for i := range configuration.Webhooks {
		if !bytes.Equal(configuration.Webhooks[i].ClientConfig.CABundle, caBundle) {
			configuration.Webhooks[i].ClientConfig.CABundle = caBundle
			changed = true
		}
	}
	if !changed {
		return nil
	}
	// A merge patch replaces the whole webhooks list, so it must not overwrite a concurrent change.
	if err := m.kubeClient.Patch(ctx, configuration, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the caBundle of MutatingWebhookConfiguration %s: %w", m.target.WebhookConfigurationName, err)
	}
	log.FromContext(ctx).Info("updated the webhook's caBundle", "MutatingWebhookConfiguration", m.target.WebhookConfigurationName)
	return nil
}

// ensureConversionCABundle makes the conversion webhook of the CRD trust caBundle.
func (m *Manager) ensureConversionCABundle(ctx context.Context, name string, caBundle []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.apiReader.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("CustomResourceDefinition not found", "CustomResourceDefinition", name)
			return nil
		}
		return fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err)
	}
	conversion := crd.Spec.Conversion
	if conversion == nil || conversion.Strategy != apiextensionsv1.WebhookConverter || conversion.Webhook == nil || conversion.Webhook.ClientConfig == nil {
		// Installed without the conversion webhook (as the tests' control planes do): the
		// apiserver calls nothing, so there is nothing to trust.
		log.FromContext(ctx).V(1).Info("CustomResourceDefinition has no conversion webhook", "CustomResourceDefinition", name)
		return nil
	}
	if bytes.Equal(conversion.Webhook.ClientConfig.CABundle, caBundle) {
		return nil
	}
	stored := crd.DeepCopy()
	conversion.Webhook.ClientConfig.CABundle = caBundle
	if err := m.kubeClient.Patch(ctx, crd, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the conversion webhook's caBundle of CustomResourceDefinition %s: %w", name, err)
	}
	log.FromContext(ctx).Info("updated the conversion webhook's caBundle", "CustomResourceDefinition", name)
	return nil
}
