package certificate_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/option"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/certificate"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

const (
	namespace = "kube-system"
	service   = "karpenter-webhook"
	// serviceHost is the name the apiserver checks the certificate against when it calls the
	// webhook through its Service.
	serviceHost = service + "." + namespace + ".svc"
)

var (
	ctx       context.Context
	env       *environment.Environment
	apiReader client.Reader
	clk       *clocktesting.FakeClock
	target    = certificate.Target{Namespace: namespace, SecretName: "karpenter-cert", ServiceName: service, WebhookConfigurationName: "karpenter"}
)

func TestCertificate(t *testing.T) { RunSuite(t, "Webhook certificate", &ctx) }

var _ = BeforeSuite(func() {
	env = ExpectEnvironment()
	var err error
	apiReader, err = client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	Expect(err).ToNot(HaveOccurred())
})

var _ = BeforeEach(func() {
	clk = clocktesting.NewFakeClock(time.Now())
	ExpectApplied(ctx, env.Client, node.Configuration(target.WebhookConfigurationName, admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: service, Path: new(node.Path)},
	}))
})

var _ = AfterEach(func() {
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: target.SecretName}}))).To(Succeed())
	Expect(env.Client.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: target.WebhookConfigurationName}})).To(Succeed())
})

// replica is the certificate manager of one controller replica.
func replica(opts ...option.Function[certificate.Options]) *certificate.Manager {
	return certificate.NewManager(env.Client, apiReader, target, append([]option.Function[certificate.Options]{certificate.WithClock(clk)}, opts...)...)
}

func secret() *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(apiReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: target.SecretName}, s)).To(Succeed())
	return s
}

func caBundle() []byte {
	GinkgoHelper()
	configuration := &admissionregistrationv1.MutatingWebhookConfiguration{}
	Expect(apiReader.Get(ctx, client.ObjectKey{Name: target.WebhookConfigurationName}, configuration)).To(Succeed())
	Expect(configuration.Webhooks).To(HaveLen(1))
	return configuration.Webhooks[0].ClientConfig.CABundle
}

// served is the certificate the replica's TLS server presents.
func served(m *certificate.Manager) *x509.Certificate {
	GinkgoHelper()
	cert, err := m.GetCertificate(&tls.ClientHelloInfo{ServerName: serviceHost})
	Expect(err).ToNot(HaveOccurred())
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	Expect(err).ToNot(HaveOccurred())
	return leaf
}

// expectTrusted checks that the apiserver, trusting caBundle, accepts the served certificate for
// the Service's name at the clock's time.
func expectTrusted(leaf *x509.Certificate, bundle []byte) {
	GinkgoHelper()
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(bundle)).To(BeTrue())
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: serviceHost, Roots: roots, CurrentTime: clk.Now()})
	Expect(err).ToNot(HaveOccurred())
}
