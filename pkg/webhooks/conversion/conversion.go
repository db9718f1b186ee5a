// Package conversion serves the LinodeNodeClass CRD's conversion webhook: kube-apiserver calls it
// to read and write v1alpha1 LinodeNodeClasses, which it stores as v1. The conversions themselves
// are the types' own (pkg/apis/v1alpha1, with v1 as the hub), run by controller-runtime's
// conversion handler on the controller's webhook server, behind the certificate that
// pkg/webhooks/certificate issues and that the CRD's caBundle trusts.
//
// Every replica serves it, in both modes and whether or not the Node webhook is on: while the
// CRD serves v1alpha1, no client (the controller's own informers included) can list
// LinodeNodeClasses stored as v1alpha1 without it.
package conversion

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/apis/v1alpha1"
)

// Path is where the webhook server serves conversions; the CRD's conversion webhook calls it.
const Path = "/convert"

// CustomResourceDefinitionName is the CRD whose versions the webhook converts.
const CustomResourceDefinitionName = "linodenodeclasses.karpenter.k8s.linode"

// Register serves the conversion webhook at Path.
func Register(server webhook.Server) error {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	server.Register(Path, crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry()))
	return nil
}

// Conversion is the CRD's spec.conversion that sends conversions to the webhook, as the CRD
// chart sets it; clientConfig says where the webhook is served, and its caBundle is left to the
// certificate manager.
func Conversion(clientConfig apiextensionsv1.WebhookClientConfig) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &clientConfig,
			ConversionReviewVersions: []string{"v1"},
		},
	}
}
