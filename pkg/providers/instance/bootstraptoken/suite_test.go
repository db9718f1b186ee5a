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
	issuer = bootstraptoken.NewIssuer(env.Client, env.Client, keyRef, clk)
})

var _ = AfterEach(func() {
	Expect(env.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(bootstraptoken.Namespace))).To(Succeed())
	ExpectCleanedUp(ctx, env.Client)
})

// keyRef is where the issuers keep their key, in the release namespace of the README's install.
var keyRef = client.ObjectKey{Namespace: "kube-system", Name: "karpenter-bootstrap-token-key"}

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

	It("hands a retried launch the token it issued before, as it is, without reading it", func() {
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		first, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		issued := tokenSecret(nodeClaim)

		By("finding the id on the NodeClaim as stored, not only on the copy launched")
		stored := &karpv1.NodeClaim{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nodeClaim), stored)).To(Succeed())
		Expect(bootstraptoken.ID(stored)).To(Equal(bootstraptoken.ID(nodeClaim)))
		clk.Step(4 * time.Minute)
		again, err := issuer.Ensure(ctx, stored)
		Expect(err).ToNot(HaveOccurred())
		Expect(again).To(Equal(first), "a Linode launched with the first token must still join")
		Expect(tokenSecret(nodeClaim).UID).To(Equal(issued.UID))

		By("issuing it again, same id and secret, if it is gone, from a copy of the NodeClaim older than the record")
		Expect(env.Client.Delete(ctx, issued)).To(Succeed())
		Expect(issuer.Ensure(ctx, nodeClaim)).To(Equal(first))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nodeClaim), stored)).To(Succeed())
		Expect(tokenSecret(stored).UID).ToNot(Equal(issued.UID))
		Expect(stored.Annotations).To(HaveKeyWithValue(bootstraptoken.AnnotationTokenUID, string(tokenSecret(stored).UID)))
	})

	It("never deletes or replaces another NodeClaim's token, whatever id the two share", func() {
		own, other := coretest.NodeClaim(), coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, own, other)
		_, err := issuer.Ensure(ctx, own)
		Expect(err).ToNot(HaveOccurred())
		owns := tokenSecret(own)

		By("issuing a NodeClaim of the same UID a token of its own: ids are not derived from UIDs")
		sameUID := other.DeepCopy()
		sameUID.UID = own.UID
		_, err = issuer.Ensure(ctx, sameUID)
		Expect(err).ToNot(HaveOccurred())
		Expect(bootstraptoken.ID(sameUID)).ToNot(Equal(bootstraptoken.ID(own)))
		Expect(tokenSecret(own).UID).To(Equal(owns.UID))

		By("leaving the token alone when a NodeClaim's record names its id but not its Secret")
		stale := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			bootstraptoken.AnnotationTokenID: bootstraptoken.ID(own), bootstraptoken.AnnotationTokenUID: "a-token-long-gone",
		}}})
		ExpectApplied(ctx, env.Client, stale)
		_, err = issuer.Ensure(ctx, stale)
		Expect(err).ToNot(HaveOccurred())
		Expect(issuer.Delete(ctx, stale)).To(Succeed())
		Expect(tokenSecret(own).UID).To(Equal(owns.UID))
		Expect(tokenSecret(own).Data).To(Equal(owns.Data))

		Expect(issuer.Delete(ctx, own)).To(Succeed())
		expectNoToken(own)
	})

	It("derives the same token in another controller process, from the key it keeps in one immutable Secret", func() {
		nodeClaim, other := coretest.NodeClaim(), coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim, other)
		token, err := issuer.Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		otherToken, err := issuer.Ensure(ctx, other)
		Expect(err).ToNot(HaveOccurred())
		_, secretHalf, _ := strings.Cut(string(token), ".")
		_, otherSecretHalf, _ := strings.Cut(string(otherToken), ".")
		Expect(secretHalf).ToNot(Equal(otherSecretHalf))

		restarted := bootstraptoken.NewIssuer(env.Client, env.Client, keyRef, clk)
		Expect(restarted.Ensure(ctx, nodeClaim)).To(Equal(token))
		key := &corev1.Secret{}
		Expect(env.Client.Get(ctx, keyRef, key)).To(Succeed())
		Expect(key.Immutable).To(HaveValue(BeTrue()))
		Expect(key.Data[bootstraptoken.KeySecretKey]).To(HaveLen(32))

		By("deriving other secrets once the key is replaced")
		Expect(env.Client.Delete(ctx, key)).To(Succeed())
		rekeyed, err := bootstraptoken.NewIssuer(env.Client, env.Client, keyRef, clk).Ensure(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(rekeyed).ToNot(Equal(token))
	})
})

var _ = Describe("Controller", func() {
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
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
	})
})
