package localcluster

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// Names the Helm chart gives the webhook's objects (a release called karpenter in kube-system).
const (
	webhookNamespace     = "kube-system"
	webhookService       = "karpenter-webhook"
	webhookConfiguration = "karpenter"
)

// registerNodeWebhook installs the Node webhook as the chart does, except for where the
// apiserver finds it: with no Pods or Service network here, the Service is an ExternalName for
// localhost at the controller's webhook port. The apiserver still checks the certificate against
// the Service's DNS name, so the controller's own certificate, and its caBundle, work unchanged.
func (c *Cluster) registerNodeWebhook(ctx context.Context, port int32) error {
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: webhookService, Namespace: webhookNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https-webhook", Port: port}},
		},
	}
	if err := c.Kube.Create(ctx, service); err != nil {
		return fmt.Errorf("creating the webhook's Service: %w", err)
	}
	configuration := node.Configuration(webhookConfiguration, admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Namespace: webhookNamespace, Name: webhookService, Path: ptr.To("/mutate-node"), Port: ptr.To(port),
		},
	})
	if err := c.Kube.Create(ctx, configuration); err != nil {
		return fmt.Errorf("creating the MutatingWebhookConfiguration: %w", err)
	}
	return nil
}

// webhookEnv configures the controller's webhook as the chart does.
func webhookEnv(port int32) []string {
	return []string{
		fmt.Sprintf("WEBHOOK_PORT=%d", port),
		"WEBHOOK_SERVICE=" + webhookService,
		"WEBHOOK_CONFIGURATION=" + webhookConfiguration,
		"SYSTEM_NAMESPACE=" + webhookNamespace,
	}
}
