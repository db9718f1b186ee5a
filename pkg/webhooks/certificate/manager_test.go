package certificate_test

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

var _ = Describe("Webhook certificate", func() {
	It("refuses TLS handshakes until it has a certificate", func() {
		_, err := replica().GetCertificate(nil)
		Expect(err).To(HaveOccurred())
	})

	It("issues a certificate for the Service, stores it and makes the webhook trust it", func() {
		m := replica()
		ExpectSingletonReconciled(ctx, m)
		stored := secret()
		Expect(stored.Type).To(Equal(corev1.SecretTypeTLS))
		Expect(caBundle()).To(Equal(stored.Data[certificate.KeyCABundle]))
		leaf := served(m)
		Expect(leaf.DNSNames).To(ContainElements(service, service+"."+namespace, serviceHost, serviceHost+".cluster.local"))
		expectTrusted(leaf, caBundle())
	})

	It("serves the same certificate from every replica", func() {
		replicas := []*certificate.Manager{replica(), replica(), replica()}
		var wg sync.WaitGroup
		for _, m := range replicas {
			wg.Go(func() {
				defer GinkgoRecover()
				// A replica that loses the race to create or renew the Secret fails once and adopts
				// the winner's certificate on its retry, as the work queue would make it.
				Eventually(func() error { _, err := m.Reconcile(ctx); return err }).Should(Succeed())
			})
		}
		wg.Wait()
		for _, m := range replicas[1:] {
			Expect(served(m).Raw).To(Equal(served(replicas[0]).Raw))
		}
		expectTrusted(served(replicas[0]), caBundle())
	})

	It("renews the serving certificate before it expires, under the same CA", func() {
		m := replica(certificate.WithValidity(10*time.Hour, time.Hour), certificate.WithRenewBefore(10*time.Minute))
		result := ExpectSingletonReconciled(ctx, m)
		first, bundle := served(m), caBundle()
		Expect(result.RequeueAfter).To(BeNumerically("<=", certificate.DefaultResyncInterval))

		clk.Step(45 * time.Minute)
		ExpectSingletonReconciled(ctx, m)
		Expect(served(m).Raw).To(Equal(first.Raw), "renewed too early")

		clk.Step(10 * time.Minute)
		ExpectSingletonReconciled(ctx, m)
		renewed := served(m)
		Expect(renewed.Raw).ToNot(Equal(first.Raw))
		Expect(renewed.NotAfter).To(BeTemporally(">", first.NotAfter))
		Expect(caBundle()).To(Equal(bundle), "a routine renewal must not touch the caBundle")
		expectTrusted(renewed, caBundle())
	})

	It("renews the CA before it would expire, trusting the old CA alongside the new one", func() {
		m := replica(certificate.WithValidity(90*time.Minute, time.Hour), certificate.WithRenewBefore(10*time.Minute))
		ExpectSingletonReconciled(ctx, m)
		first, oldBundle := served(m), caBundle()

		clk.Step(55 * time.Minute)
		ExpectSingletonReconciled(ctx, m)
		renewed := served(m)
		Expect(renewed.Raw).ToNot(Equal(first.Raw))
		Expect(bytes.Count(caBundle(), []byte("BEGIN CERTIFICATE"))).To(Equal(2))
		Expect(caBundle()).To(ContainSubstring(string(oldBundle)))
		expectTrusted(renewed, caBundle())
		expectTrusted(first, caBundle())
	})

	It("replaces a certificate that is malformed", func() {
		ExpectApplied(ctx, env.Client, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: target.SecretName},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: []byte("not a certificate"), corev1.TLSPrivateKeyKey: []byte("not a key")},
		})
		m := replica()
		ExpectSingletonReconciled(ctx, m)
		expectTrusted(served(m), caBundle())
		Expect(secret().Data[corev1.TLSCertKey]).ToNot(Equal([]byte("not a certificate")))
	})

	It("replaces a certificate issued for another Service", func() {
		other := certificate.NewManager(env.Client, apiReader, certificate.Target{
			Namespace: namespace, SecretName: target.SecretName, ServiceName: "another-webhook", WebhookConfigurationName: target.WebhookConfigurationName,
		}, certificate.WithClock(clk))
		ExpectSingletonReconciled(ctx, other)
		m := replica()
		ExpectSingletonReconciled(ctx, m)
		Expect(served(m).Raw).ToNot(Equal(served(other).Raw))
		expectTrusted(served(m), caBundle())
	})

	It("restores a caBundle that was overwritten", func() {
		m := replica()
		ExpectSingletonReconciled(ctx, m)
		bundle := caBundle()
		configuration := node.Configuration(target.WebhookConfigurationName, admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: service, Path: new(node.Path)},
		})
		ExpectApplied(ctx, env.Client, configuration)
		Expect(caBundle()).To(BeEmpty())
		ExpectSingletonReconciled(ctx, m)
		Expect(caBundle()).To(Equal(bundle))
	})

	Context("with a CRD's conversion webhook", func() {
		var crdName string
		var withConversion certificate.Target
		BeforeEach(func() {
			// Each spec has a CRD of its own: a deleted CRD lingers while the apiserver cleans up.
			crd := twoVersionCRD(fmt.Sprintf("widget%d", crdCounter.Add(1)), &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
						Namespace: namespace, Name: service, Path: new("/convert"),
					}},
				},
			})
			crdName = crd.Name
			withConversion = target
			withConversion.CustomResourceDefinitionNames = []string{crdName}
			expectEstablished(crd)
			DeferCleanup(func() { Expect(env.Client.Delete(ctx, crd)).To(Succeed()) })
		})
		conversionCABundle := func() []byte {
			GinkgoHelper()
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(apiReader.Get(ctx, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
			return crd.Spec.Conversion.Webhook.ClientConfig.CABundle
		}

		It("makes the conversion webhook trust the certificate, and restores its caBundle when overwritten", func() {
			m := certificate.NewManager(env.Client, apiReader, withConversion, certificate.WithClock(clk))
			ExpectSingletonReconciled(ctx, m)
			expectTrusted(served(m), conversionCABundle())
			Expect(conversionCABundle()).To(Equal(caBundle()))

			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(apiReader.Get(ctx, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = nil
			Expect(env.Client.Update(ctx, crd)).To(Succeed())
			ExpectSingletonReconciled(ctx, m)
			expectTrusted(served(m), conversionCABundle())
		})

		It("keeps only the conversion webhook's caBundle when the server answers no admission webhook", func() {
			withConversion.WebhookConfigurationName = ""
			m := certificate.NewManager(env.Client, apiReader, withConversion, certificate.WithClock(clk))
			ExpectSingletonReconciled(ctx, m)
			expectTrusted(served(m), conversionCABundle())
			Expect(caBundle()).To(BeEmpty(), "the MutatingWebhookConfiguration of a webhook that is off was changed")
		})

		It("leaves a CRD without a conversion webhook alone", func() {
			plain := twoVersionCRD(fmt.Sprintf("plain%d", crdCounter.Add(1)), &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter})
			expectEstablished(plain)
			DeferCleanup(func() { Expect(env.Client.Delete(ctx, plain)).To(Succeed()) })
			withConversion.CustomResourceDefinitionNames = []string{plain.Name}
			m := certificate.NewManager(env.Client, apiReader, withConversion, certificate.WithClock(clk))
			ExpectSingletonReconciled(ctx, m)
			expectTrusted(served(m), caBundle())
		})
	})
})

var crdCounter atomic.Int32

// expectEstablished creates the CRD and waits until the apiserver serves it, after which the
// apiserver leaves it alone: the certificate manager's optimistic lock would otherwise meet the
// apiserver's own status updates.
func expectEstablished(crd *apiextensionsv1.CustomResourceDefinition) {
	GinkgoHelper()
	Expect(env.Client.Create(ctx, crd)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(apiReader.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		g.Expect(crd.Status.Conditions).To(ContainElement(And(
			HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
	}).Should(Succeed())
}

// twoVersionCRD is a CRD of kind singular with two versions, whose objects a conversion webhook
// would convert.
func twoVersionCRD(singular string, conversion *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: singular + "s.conversion.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conversion.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: singular + "s", Singular: singular, Kind: "K" + singular, ListKind: "K" + singular + "List"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema},
			},
			Conversion: conversion,
		},
	}
}
