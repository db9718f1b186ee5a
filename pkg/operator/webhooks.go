package operator

import (
	"fmt"

	coreoperator "sigs.k8s.io/karpenter/pkg/operator"

	"github.com/awslabs/operatorpkg/controller"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
)

// serveWebhooks starts the webhook server on every replica, serving the webhooks with the
// certificate the returned manager issues and rotates.
func serveWebhooks(core *coreoperator.Operator, opts *options.Options, hooks []Webhook) (controller.Controller, error) {
	certificates := certificate.NewManager(core.GetClient(), core.GetAPIReader(), certificate.Target{
		Namespace:                opts.SystemNamespace,
		SecretName:               opts.WebhookCertSecretName,
		ServiceName:              opts.WebhookServiceName,
		WebhookConfigurationName: opts.WebhookConfigurationName,
	})
	server := webhooks.NewServer("", opts.WebhookPort, certificates.ConfigureTLS)
	for _, w := range hooks {
		w.Register(server)
	}
	if err := core.Add(server); err != nil {
		return nil, fmt.Errorf("adding the webhook server: %w", err)
	}
	// Ready only once the server answers TLS with the issued certificate: before that, the
	// apiserver's calls would fail (and, with failurePolicy Ignore, admit nodes untainted).
	if err := core.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
		return nil, err
	}
	return certificates, nil
}
