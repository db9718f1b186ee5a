package certificate_test

import (
	"bytes"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
})
