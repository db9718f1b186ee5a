package operator

import (
	"crypto/tls"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"

	"github.com/awslabs/operatorpkg/controller"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// serveNodeWebhook starts the Node webhook's HTTPS server on every replica, with the certificate
// the returned manager issues and rotates. The webhook is only for LKE mode: there kubelets
// register without Karpenter's taints, and the webhook adds them.
func serveNodeWebhook(core *coreoperator.Operator, opts *options.Options, nodes node.NodeLister, clusterID int) (controller.Controller, error) {
	certificates := certificate.NewManager(core.GetClient(), core.GetAPIReader(), certificate.Target{
		Namespace:                opts.SystemNamespace,
		SecretName:               opts.WebhookCertSecretName,
		ServiceName:              opts.WebhookServiceName,
		WebhookConfigurationName: opts.WebhookConfigurationName,
	})
	server := webhook.NewServer(webhook.Options{Port: opts.WebhookPort, TLSOpts: []func(*tls.Config){certificates.ConfigureTLS}})
	node.NewWebhook(core.GetClient(), nodes, clusterID).Register(server)
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
