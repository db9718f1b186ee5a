package operator

import (
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/alphafields"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/storageversion"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
)

func init() {
	// The certificate manager and the storage version migration read and patch the
	// LinodeNodeClass CRD.
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme.Scheme))
}

// serveWebhooks starts the webhook server on every replica, with the certificate the returned
// manager issues and rotates, before and whatever the Linode API answers. It always serves the LinodeNodeClass conversion webhook, in both
// modes and whatever DISABLE_WEBHOOK says: no client can read a class stored as v1alpha1 without
// it. It also serves the mode's own webhooks (LKE mode's Node webhook), which DISABLE_WEBHOOK
// leaves out. The other controllers returned finish the upgrade from v1alpha1: the storage version
// migration, which starts once the conversion webhook answers, and the report of alpha fields v1
// cannot apply.
func serveWebhooks(core *coreoperator.Operator, opts *options.Options, modeWebhooks []Webhook) ([]controller.Controller, error) {
	target := certificate.Target{
		Namespace:                     opts.SystemNamespace,
		SecretName:                    opts.WebhookCertSecretName,
		ServiceName:                   opts.WebhookServiceName,
		CustomResourceDefinitionNames: []string{conversion.CustomResourceDefinitionName},
	}
	if len(modeWebhooks) > 0 {
		target.WebhookConfigurationName = opts.WebhookConfigurationName
	}
	certificates := certificate.NewManager(core.GetClient(), core.GetAPIReader(), target)
	server := webhooks.NewServer("", opts.WebhookPort, certificates.ConfigureTLS)
	if err := conversion.Register(server); err != nil {
		return nil, fmt.Errorf("registering the conversion webhook: %w", err)
	}
	for _, w := range modeWebhooks {
		w.Register(server)
	}
	if err := core.Add(server); err != nil {
		return nil, fmt.Errorf("adding the webhook server: %w", err)
	}
	// Ready only once the server answers TLS with the issued certificate: before that, the
	// apiserver's calls would fail (and, with failurePolicy Ignore, admit nodes untainted). This,
	// and core's cache and CRD checks, are all readiness depends on: it is what puts the replica
	// in the webhook's Service.
	serving := server.StartedChecker()
	if err := core.AddReadyzCheck("webhook", serving); err != nil {
		return nil, err
	}
	return []controller.Controller{
		certificates,
		storageversion.NewController(core.GetClient(), core.GetAPIReader(), conversion.CustomResourceDefinitionName, func() error { return serving(nil) }),
		alphafields.NewController(core.GetClient(), core.EventRecorder),
	}, nil
}
