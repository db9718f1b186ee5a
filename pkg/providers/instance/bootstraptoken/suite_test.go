package bootstraptoken_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var (
	ctx    context.Context
	env    *environment.Environment
	clk    *clocktesting.FakeClock
	issuer *bootstraptoken.Issuer
)

func TestBootstrapToken(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Bootstrap tokens")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
	ctx = coreoptions.ToContext(ctx, coretest.Options())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

var _ = BeforeEach(func() {
	clk = clocktesting.NewFakeClock(time.Now())
	issuer = bootstraptoken.NewIssuer(env.Client, env.Client, clk)
})

var _ = AfterEach(func() {
	Expect(env.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(bootstraptoken.Namespace))).To(Succeed())
	ExpectCleanedUp(ctx, env.Client)
})

func tokenSecret(nodeClaim *karpv1.NodeClaim) *corev1.Secret {
	secret := &corev1.Secret{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: bootstraptoken.Namespace, Name: bootstraptoken.SecretName(nodeClaim)}, secret)).To(Succeed())
	return secret
}

func expectNoToken(nodeClaim *karpv1.NodeClaim) {
	GinkgoHelper()
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: bootstraptoken.Namespace, Name: bootstraptoken.SecretName(nodeClaim)}, &corev1.Secret{})
	Expect(err).To(MatchError(ContainSubstring("not found")))
}

func registered(nodeClaim *karpv1.NodeClaim) {
	nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	ExpectApplied(ctx, env.Client, nodeClaim)
}

var _ = Describe("Issuer", func() {
	It("issues a kubeadm-style bootstrap token in a group of its own, owned by the NodeClaim", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		token, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())

		secret := tokenSecret(nodeClaim)
		Expect(secret.Type).To(Equal(corev1.SecretType("bootstrap.kubernetes.io/token")))
		id, tokenSecretPart, _ := strings.Cut(string(token), ".")
		Expect(id).To(Equal(bootstraptoken.ID(nodeClaim)))
		Expect(string(secret.Data["token-id"])).To(Equal(id))
		Expect(string(secret.Data["token-secret"])).To(Equal(tokenSecretPart))
		Expect(tokenSecretPart).To(HaveLen(16))
		Expect(string(secret.Data["usage-bootstrap-authentication"])).To(Equal("true"))
		Expect(secret.Data).ToNot(HaveKey("usage-bootstrap-signing"))
		Expect(string(secret.Data["auth-extra-groups"])).To(Equal("system:bootstrappers:karpenter:linode"))
		expiration, err := time.Parse(time.RFC3339, string(secret.Data["expiration"]))
		Expect(err).ToNot(HaveOccurred())
		Expect(expiration).To(BeTemporally("~", clk.Now().Add(20*time.Minute), time.Second))
		Expect(secret.OwnerReferences).To(ConsistOf(HaveField("UID", nodeClaim.UID)))
		Expect(secret.Data["description"]).ToNot(ContainSubstring(tokenSecretPart))
	})

	It("hands a retried launch the token it issued before, and a new one once that is about to expire", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		first, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		again, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(again).To(Equal(first))

		clk.Step(15 * time.Minute)
		renewed, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(renewed).ToNot(Equal(first))
		expiration, _ := time.Parse(time.RFC3339, string(tokenSecret(nodeClaim).Data["expiration"]))
		Expect(expiration).To(BeTemporally("~", clk.Now().Add(20*time.Minute), time.Second))
	})

	It("refuses a Secret of the same name it did not issue for the NodeClaim, and leaves it alone", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: bootstraptoken.Namespace, Name: bootstraptoken.SecretName(nodeClaim)},
			Type:       "bootstrap.kubernetes.io/token",
			StringData: map[string]string{"token-id": bootstraptoken.ID(nodeClaim), "token-secret": "0123456789abcdef"},
		}
		ExpectApplied(ctx, env.Client, foreign)
		_, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).To(MatchError(ContainSubstring("was not issued for NodeClaim")))
		Expect(issuer.Delete(ctx, nodeClaim)).To(Succeed())
		Expect(tokenSecret(nodeClaim).UID).To(Equal(foreign.UID))
	})
})

var _ = Describe("Controller and Sweeper", func() {
	It("deletes a token once its node registered, and only then", func() {
		controller := bootstraptoken.NewController(env.Client, issuer)
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		_, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())

		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		tokenSecret(nodeClaim)
		registered(nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		expectNoToken(nodeClaim)
	})

	It("sweeps the tokens of registered, deleted and replaced NodeClaims, and keeps those still needed", func() {
		sweeper := bootstraptoken.NewSweeper(env.Client, env.Client)
		pending, done, gone, replaced := coretest.NodeClaim(), coretest.NodeClaim(), coretest.NodeClaim(), coretest.NodeClaim()
		for _, nodeClaim := range []*karpv1.NodeClaim{pending, done, gone, replaced} {
			ExpectApplied(ctx, env.Client, nodeClaim)
			_, err := issuer.Ensure(ctx, nodeClaim)
			Expect(err).ToNot(HaveOccurred())
		}
		registered(done)
		ExpectDeleted(ctx, env.Client, gone)
		replacedToken := tokenSecret(replaced)
		ExpectDeleted(ctx, env.Client, replaced)
		replacement := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: replaced.Name}})
		ExpectApplied(ctx, env.Client, replacement)

		ExpectSingletonReconciled(ctx, sweeper)
		tokenSecret(pending)
		for _, nodeClaim := range []*karpv1.NodeClaim{done, gone} {
			expectNoToken(nodeClaim)
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(replacedToken), &corev1.Secret{})).ToNot(Succeed())
	})
})
