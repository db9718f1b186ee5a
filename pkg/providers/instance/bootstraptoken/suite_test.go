package bootstraptoken_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

	"github.com/linode/karpenter-provider-linode/pkg/apis"
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

// issuedKey is the key the issuer derives tokens from.
func issuedKey() bootstraptoken.Key {
	GinkgoHelper()
	key, err := issuer.Key(ctx)
	Expect(err).ToNot(HaveOccurred())
	return key
}

func tokenSecret(nodeClaim *karpv1.NodeClaim) *corev1.Secret {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: bootstraptoken.Namespace, Name: issuedKey().SecretName(nodeClaim)}, secret)).To(Succeed())
	return secret
}

func expectNoToken(nodeClaim *karpv1.NodeClaim) {
	GinkgoHelper()
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: bootstraptoken.Namespace, Name: issuedKey().SecretName(nodeClaim)}, &corev1.Secret{})
	Expect(err).To(MatchError(ContainSubstring("not found")))
}

func registered(nodeClaim *karpv1.NodeClaim) {
	nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	ExpectApplied(ctx, env.Client, nodeClaim)
}

// linodeNodeClaim is a NodeClaim of a LinodeNodeClass, which joins with a bootstrap token.
func linodeNodeClaim(overrides ...karpv1.NodeClaim) *karpv1.NodeClaim {
	return coretest.NodeClaim(append([]karpv1.NodeClaim{{Spec: karpv1.NodeClaimSpec{
		NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: "default"},
	}}}, overrides...)...)
}

var _ = Describe("Issuer", func() {
	It("issues a kubeadm-style bootstrap token in a group of its own, owned by the NodeClaim, valid until TTL after the NodeClaim's creation", func() {
		nodeClaim := linodeNodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		Expect(issuer.Issue(ctx, nodeClaim)).To(Succeed())
		key, err := issuer.Key(ctx)
		Expect(err).ToNot(HaveOccurred())

		secret := tokenSecret(nodeClaim)
		Expect(secret.Type).To(Equal(corev1.SecretType("bootstrap.kubernetes.io/token")))
		id, tokenSecretPart, _ := strings.Cut(string(key.Token(nodeClaim)), ".")
		Expect(id).To(Equal(key.ID(nodeClaim)))
		Expect(string(secret.Data["token-id"])).To(Equal(id))
		Expect(string(secret.Data["token-secret"])).To(Equal(tokenSecretPart))
		Expect(tokenSecretPart).To(HaveLen(16))
		Expect(string(secret.Data["usage-bootstrap-authentication"])).To(Equal("true"))
		Expect(secret.Data).ToNot(HaveKey("usage-bootstrap-signing"))
		Expect(string(secret.Data["auth-extra-groups"])).To(Equal("system:bootstrappers:karpenter:linode"))
		expiration, err := time.Parse(time.RFC3339, string(secret.Data["expiration"]))
		Expect(err).ToNot(HaveOccurred())
		Expect(expiration).To(BeTemporally("~", nodeClaim.CreationTimestamp.Add(20*time.Minute), time.Second))
		Expect(secret.OwnerReferences).To(ConsistOf(HaveField("UID", nodeClaim.UID)))
		Expect(secret.Data["description"]).ToNot(ContainSubstring(tokenSecretPart))
	})

	It("issues none for a NodeClaim whose launch has timed out, and leaves one it issued as it is", func() {
		nodeClaim := linodeNodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		Expect(issuer.Issue(ctx, nodeClaim)).To(Succeed())
		issued := tokenSecret(nodeClaim)
		Expect(issuer.Issue(ctx, nodeClaim)).To(Succeed())
		Expect(tokenSecret(nodeClaim).UID).To(Equal(issued.UID))

		late := linodeNodeClaim()
		ExpectApplied(ctx, env.Client, late)
		clk.SetTime(late.CreationTimestamp.Add(bootstraptoken.TTL))
		Expect(issuer.Issue(ctx, late)).To(Succeed())
		expectNoToken(late)
	})

	It("keeps its key in one immutable Secret, which the controller's mounted file derives the same tokens from", func() {
		nodeClaim, other := linodeNodeClaim(), linodeNodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim, other)
		key, err := issuer.Key(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(key.Token(nodeClaim)).ToNot(Equal(key.Token(other)))

		stored := &corev1.Secret{}
		Expect(env.Client.Get(ctx, keyRef, stored)).To(Succeed())
		Expect(stored.Immutable).To(HaveValue(BeTrue()))
		Expect(stored.Data[bootstraptoken.KeySecretKey]).To(HaveLen(32))
		file := filepath.Join(GinkgoT().TempDir(), bootstraptoken.KeySecretKey)
		Expect(os.WriteFile(file, stored.Data[bootstraptoken.KeySecretKey], 0o600)).To(Succeed())
		Expect(bootstraptoken.NewKeyFile(file, env.Client).Token(ctx, nodeClaim)).To(Equal(key.Token(nodeClaim)))
		Expect(bootstraptoken.NewIssuer(env.Client, env.Client, keyRef, clk).Key(ctx)).To(Equal(key), "another replica reads the same key")

		By("deriving other tokens once the key is replaced")
		Expect(env.Client.Delete(ctx, stored)).To(Succeed())
		rekeyed, err := bootstraptoken.NewIssuer(env.Client, env.Client, keyRef, clk).Key(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(rekeyed.Token(nodeClaim)).ToNot(Equal(key.Token(nodeClaim)))
	})

	It("shows a token's id, never its secret, when it is printed", func() {
		key, err := issuer.Key(ctx)
		Expect(err).ToNot(HaveOccurred())
		token := key.Token(linodeNodeClaim())
		_, secretPart, _ := strings.Cut(string(token), ".")
		Expect(fmt.Sprint(token)).ToNot(ContainSubstring(secretPart))
		Expect(fmt.Sprintf("%#v", token)).ToNot(ContainSubstring(secretPart))
	})
})

var _ = Describe("Two NodeClaims whose token ids are the same", func() {
	// namesakes are two NodeClaim names whose token ids, under the issuer's key, are the same: six
	// characters of [a-z0-9] are 2.2 billion ids, so some tens of thousands of names hold a pair.
	namesakes := func() (string, string) {
		GinkgoHelper()
		key, seen := issuedKey(), map[string]string{}
		for i := range 2_000_000 {
			name := fmt.Sprintf("default-%d", i)
			id := key.ID(linodeNodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}))
			if first, ok := seen[id]; ok {
				return first, name
			}
			seen[id] = name
		}
		Fail("no two of 2,000,000 names share a token id")
		return "", ""
	}

	It("leaves the token to the NodeClaim that holds the id, and the other NodeClaim launches no node", func() {
		first, second := namesakes()
		// Created first, or in the same second and first by name, the holder's is the token.
		first, second = min(first, second), max(first, second)
		holder := linodeNodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: first}})
		other := linodeNodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: second}})
		ExpectApplied(ctx, env.Client, holder, other)
		Expect(issuer.Issue(ctx, holder)).To(Succeed())
		issued := tokenSecret(holder)

		var taken *bootstraptoken.IDTakenError
		Expect(errors.As(issuer.Issue(ctx, other), &taken)).To(BeTrue(), "the Secret of that name is the holder's")
		Expect(taken.Holder).To(Equal(holder.Name))

		By("not handing the other NodeClaim's launch a token that would not join")
		file := filepath.Join(GinkgoT().TempDir(), bootstraptoken.KeySecretKey)
		Expect(os.WriteFile(file, issuedKey(), 0o600)).To(Succeed())
		_, err := bootstraptoken.NewKeyFile(file, env.Client).Token(ctx, other)
		Expect(errors.As(err, &taken)).To(BeTrue(), "launching it would give its node a token that does not join")
		Expect(bootstraptoken.NewKeyFile(file, env.Client).Token(ctx, holder)).To(Equal(issuedKey().Token(holder)))

		By("keeping the holder's token when the other NodeClaim goes")
		Expect(issuer.Delete(ctx, other)).To(Succeed())
		Expect(tokenSecret(holder).UID).To(Equal(issued.UID))

		By("issuing the other's token once the holder's node has registered")
		registered(holder)
		Expect(issuer.Delete(ctx, holder)).To(Succeed())
		Expect(issuer.Issue(ctx, other)).To(Succeed())
		Expect(bootstraptoken.NewKeyFile(file, env.Client).Token(ctx, other)).To(Equal(issuedKey().Token(other)))
		Expect(string(tokenSecret(other).Data["token-secret"])).ToNot(Equal(string(issued.Data["token-secret"])))
	})
})

var _ = Describe("Controller", func() {
	It("issues a launching NodeClaim's token and deletes it once its node registered", func() {
		controller := bootstraptoken.NewController(env.Client, issuer)
		nodeClaim := linodeNodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		tokenSecret(nodeClaim)
		registered(nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		expectNoToken(nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		expectNoToken(nodeClaim)
	})

	It("issues none for a NodeClaim of another provider's class, which joins otherwise", func() {
		controller := bootstraptoken.NewController(env.Client, issuer)
		nodeClaim := coretest.NodeClaim()
		ExpectApplied(ctx, env.Client, nodeClaim)
		ExpectObjectReconciled(ctx, env.Client, controller, nodeClaim)
		expectNoToken(nodeClaim)
	})
})
