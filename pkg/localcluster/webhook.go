package localcluster

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// Names the Helm chart gives the webhook's objects (a release called karpenter in kube-system).
const (
	webhookNamespace     = "kube-system"
	webhookService       = "karpenter-webhook"
	webhookConfiguration = "karpenter"
)

// registerWebhooks installs the controller's webhooks as the charts do: the LinodeNodeClass
// CRD's conversion webhook always, the Node webhook in LKE mode. Only where the apiserver finds
// them differs: with no Pods or Service network here, the Service is an ExternalName for
// localhost at the controller's webhook port. The apiserver still checks the certificate against
// the Service's DNS name, so the controller's own certificate, and the caBundles it keeps, work
// unchanged.
func (c *Cluster) registerWebhooks(ctx context.Context, port int32, nodeWebhook bool) error {
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: webhookService, Namespace: webhookNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: webhookHost,
			Ports:        []corev1.ServicePort{{Name: "https-webhook", Port: port}},
		},
	}
	if err := c.Kube.Create(ctx, service); err != nil {
		return fmt.Errorf("creating the webhook's Service: %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Kube.Get(ctx, client.ObjectKey{Name: conversion.CustomResourceDefinitionName}, crd); err != nil {
		return err
	}
	stored := crd.DeepCopy()
	crd.Spec.Conversion = conversion.Conversion(apiextensionsv1.WebhookClientConfig{
		Service: &apiextensionsv1.ServiceReference{Namespace: webhookNamespace, Name: webhookService, Path: ptr.To(conversion.Path), Port: ptr.To(port)},
	})
	if err := c.Kube.Patch(ctx, crd, client.MergeFrom(stored)); err != nil {
		return fmt.Errorf("pointing the LinodeNodeClass CRD at the conversion webhook: %w", err)
	}
	if !nodeWebhook {
		return nil
	}
	configuration := node.Configuration(webhookConfiguration, admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Namespace: webhookNamespace, Name: webhookService, Path: ptr.To(node.Path), Port: ptr.To(port),
		},
	})
	if err := c.Kube.Create(ctx, configuration); err != nil {
		return fmt.Errorf("creating the MutatingWebhookConfiguration: %w", err)
	}
	return nil
}

// webhookEnv configures the controller's webhook server as the chart does.
func webhookEnv(port int32) []string {
	return []string{
		fmt.Sprintf("WEBHOOK_PORT=%d", port),
		"WEBHOOK_SERVICE=" + webhookService,
		"WEBHOOK_CONFIGURATION=" + webhookConfiguration,
		"SYSTEM_NAMESPACE=" + webhookNamespace,
	}
}

// webhookHost is where the webhook's Service points: the controller runs on this machine.
const webhookHost = "localhost"

// unreachableWebhookHost is a name that never resolves (RFC 2606), for SetWebhookReachable.
const unreachableWebhookHost = "webhook-down.invalid"

// SetWebhookReachable points the webhook's Service at the controller (true) or at a host that
// does not resolve (false), so that kube-apiserver cannot reach the webhooks while the
// controller itself runs on, as when its Service or network path is broken.
func (c *Cluster) SetWebhookReachable(ctx context.Context, reachable bool) error {
	service := &corev1.Service{}
	if err := c.Kube.Get(ctx, client.ObjectKey{Namespace: webhookNamespace, Name: webhookService}, service); err != nil {
		return err
	}
	stored := service.DeepCopy()
	service.Spec.ExternalName = unreachableWebhookHost
	if reachable {
		service.Spec.ExternalName = webhookHost
	}
	return c.Kube.Patch(ctx, service, client.MergeFrom(stored))
}
