// Package bootstraptoken is the identity an instance-mode node's kubelet joins with: one
// Kubernetes bootstrap token per NodeClaim, and the approval of the node client certificate the
// kubelet asks for with it.
//
// A token is a Secret of type bootstrap.kubernetes.io/token in kube-system, as kubeadm makes them:
// kube-apiserver authenticates it (--enable-bootstrap-token-auth) as the user
// system:bootstrap:<id> in the groups system:bootstrappers and Group. Group is this provider's
// alone: the Helm chart lets it, and nothing else, create node CertificateSigningRequests, which
// the Approver approves only for the node of the token's own NodeClaim, and only while no Node of
// that name exists. A token expires TTL after its NodeClaim was created, when core has given up
// on a launch that has not registered (kube-controller-manager's tokencleaner deletes it then), is
// owned by its NodeClaim (the garbage collector deletes it with the NodeClaim), and is deleted as
// soon as its node has registered (Controller).
//
// Two processes share the work, so that the controller's ServiceAccount never holds a node's
// identity. The node identity component (cmd/node-identity), with a ServiceAccount of its own,
// keeps the key tokens derive from in a Secret, issues each NodeClaim's token (Issuer, Controller)
// and decides the certificate requests (Approver). The controller derives the token it writes
// into a Linode's user data from the same key, which the chart mounts into its pod as a file
// (KeyFile): its ServiceAccount may neither read the key nor write any Secret of kube-system nor
// approve a certificate. A token's secret half is in the node's user data and the Secret alone:
// never in a log, an event, a metric or a status.
package bootstraptoken

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken/csrdecision"
)

const (
	// Group is the group the tokens authenticate in besides system:bootstrappers.
	Group = csrdecision.Group
	// Namespace holds bootstrap tokens: kube-apiserver reads them nowhere else.
	Namespace = metav1.NamespaceSystem
	// TTL is how long after its NodeClaim's creation a token is valid: core's launch timeout
	// (5 min, from the NodeClaim's creation) and registration timeout (15 min, from the launch).
	// A node that has not registered by then has had its NodeClaim deleted by core.
	TTL = 20 * time.Minute
	// LabelNodeClaimToken marks the tokens this provider issued.
	LabelNodeClaimToken = apis.Group + "/bootstrap-token"
	// AnnotationNodeClaim names the NodeClaim a token was issued for.
	AnnotationNodeClaim = apis.Group + "/nodeclaim"
	// KeySecretKey is the entry of the key Secret that holds the key tokens' secrets derive from,
	// and the name of the file the chart mounts it as.
	KeySecretKey = "key"
	// KeySize is the key's length in bytes: that of the HMAC-SHA256 it keys.
	KeySize = 32
)

// Key is the key every token's secret half derives from.
type Key []byte

// Token is the NodeClaim's token: its id (ID), and a secret of 16 characters of [a-z0-9], as a
// bootstrap token's must be, from an HMAC of the NodeClaim's UID.
func (k Key) Token(nodeClaim *karpv1.NodeClaim) bootstrap.Token {
	return bootstrap.Token(bootstraputil.TokenFromIDAndSecret(k.ID(nodeClaim), k.secret(nodeClaim.UID)))
}

func (k Key) secret(uid types.UID) string {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(uid))
	digits := new(big.Int).SetBytes(mac.Sum(nil)).Text(36)
	return digits[len(digits)-16:]
}

func parseKey(data []byte, source string) (Key, error) {
	if len(data) < KeySize {
		return nil, fmt.Errorf("%s holds no bootstrap token key of %d bytes", source, KeySize)
	}
	return Key(data), nil
}

// KeyFile is the key as the controller reads it: a file the chart mounts from the key Secret,
// which the node identity component creates. The kubelet writes the file, so the controller's
// ServiceAccount never needs to read the Secret.
type KeyFile struct {
	path       string
	nodeClaims client.Reader
}

// NewKeyFile reads the key from path, and the NodeClaims whose token ids it must not share from
// nodeClaims.
func NewKeyFile(path string, nodeClaims client.Reader) *KeyFile {
	return &KeyFile{path: path, nodeClaims: nodeClaims}
}

// Token is the NodeClaim's token, from the key in the file. A token id another NodeClaim holds
// (heldBy) is an *IDTakenError: the id's token Secret is that NodeClaim's, and this one's node
// could not join with it.
func (f *KeyFile) Token(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no bootstrap token key at %s yet: the node identity component creates its Secret as it starts, and the kubelet mounts it into this pod within a minute or two", f.path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the bootstrap token key: %w", err)
	}
	key, err := parseKey(data, f.path)
	if err != nil {
		return "", err
	}
	holder, err := key.heldBy(ctx, f.nodeClaims, nodeClaim)
	if err != nil {
		return "", err
	}
	if holder != "" {
		return "", &IDTakenError{NodeClaim: nodeClaim.Name, Holder: holder}
	}
	return key.Token(nodeClaim), nil
}

// Issuer creates and deletes tokens, for the node identity component. It reads one Secret only,
// the key's, past any cache, and creates it on first use.
type Issuer struct {
	kube   client.Client
	reader client.Reader
	keyRef types.NamespacedName
	clock  clock.Clock

	mu  sync.Mutex
	key Key
}

// NewIssuer returns an issuer writing with kube, keeping its key in the Secret keyRef, read
// with reader.
func NewIssuer(kube client.Client, reader client.Reader, keyRef types.NamespacedName, clk clock.Clock) *Issuer {
	return &Issuer{kube: kube, reader: reader, keyRef: keyRef, clock: clk}
}

// Issue creates the NodeClaim's token, valid until TTL after the NodeClaim's creation. A NodeClaim
// that old gets none: its launch has timed out. A token issued before is left as it is: it was
// made from the same key and NodeClaim, with the same expiration. While another NodeClaim holds
// the token id (heldBy), Issue is an *IDTakenError: the Secret of that name is the other's.
func (i *Issuer) Issue(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	if !i.clock.Now().Before(nodeClaim.CreationTimestamp.Add(TTL)) {
		return nil
	}
	key, err := i.Key(ctx)
	if err != nil {
		return err
	}
	holder, err := key.heldBy(ctx, i.kube, nodeClaim)
	if err != nil {
		return err
	}
	if holder != "" {
		return &IDTakenError{NodeClaim: nodeClaim.Name, Holder: holder}
	}
	if err := i.kube.Create(ctx, key.TokenSecret(nodeClaim)); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return nil
}

// TokenSecret is the Secret Issue creates for the NodeClaim's token, expiring TTL after the
// NodeClaim's creation: what the chart's admission policies must let the node identity component
// create, and nothing more (test/charts/tokenpolicy fuzzes them against it).
func (k Key) TokenSecret(nodeClaim *karpv1.NodeClaim) *corev1.Secret {
	expires := nodeClaim.CreationTimestamp.Add(TTL)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        k.SecretName(nodeClaim),
			Namespace:   Namespace,
			Labels:      map[string]string{LabelNodeClaimToken: "true"},
			Annotations: map[string]string{AnnotationNodeClaim: nodeClaim.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: coreapis.Group + "/v1", Kind: "NodeClaim", Name: nodeClaim.Name, UID: nodeClaim.UID,
			}},
		},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               k.ID(nodeClaim),
			bootstrapapi.BootstrapTokenSecretKey:           k.secret(nodeClaim.UID),
			bootstrapapi.BootstrapTokenExpirationKey:       expires.UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      Group,
			bootstrapapi.BootstrapTokenDescriptionKey:      "kubelet TLS bootstrap of Karpenter NodeClaim " + nodeClaim.Name,
		},
	}
}

// Key returns the key tokens' secrets derive from: the key Secret's, which is created, immutable,
// if there is none. A key once read is kept for the life of the process.
func (i *Issuer) Key(ctx context.Context) (Key, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.key != nil {
		return i.key, nil
	}
	secret := &corev1.Secret{}
	err := i.reader.Get(ctx, i.keyRef, secret)
	if apierrors.IsNotFound(err) {
		secret, err = i.createKey(ctx)
		if apierrors.IsAlreadyExists(err) {
			secret = &corev1.Secret{}
			err = i.reader.Get(ctx, i.keyRef, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the bootstrap token key in Secret %s: %w", i.keyRef, err)
	}
	key, err := parseKey(secret.Data[KeySecretKey], fmt.Sprintf("Secret %s (entry %q)", i.keyRef, KeySecretKey))
	if err != nil {
		return nil, fmt.Errorf("%w: delete it, and the node identity component creates a new one", err)
	}
	i.key = key
	return i.key, nil
}

func (i *Issuer) createKey(ctx context.Context) (*corev1.Secret, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the bootstrap token key: %w", err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: i.keyRef.Name, Namespace: i.keyRef.Namespace},
		Type:       corev1.SecretTypeOpaque,
		Immutable:  new(true),
		Data:       map[string][]byte{KeySecretKey: key},
	}
	return secret, i.kube.Create(ctx, secret)
}

// Delete deletes the NodeClaim's token, if it has one. The token is found by name alone (the Helm
// chart's admission policy refuses the node identity component the deletion of any Secret that
// is not a token made as Issue makes them), so a token whose id another NodeClaim holds (heldBy)
// is left alone: it is that NodeClaim's.
func (i *Issuer) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	key, err := i.Key(ctx)
	if err != nil {
		return err
	}
	holder, err := key.heldBy(ctx, i.kube, nodeClaim)
	if err != nil {
		return err
	}
	if holder != "" {
		log.FromContext(ctx).V(1).Info("left a bootstrap token to the NodeClaim that shares its id", "NodeClaim", nodeClaim.Name, "holder", holder)
		return nil
	}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: key.SecretName(nodeClaim)}}
	if err := i.kube.Delete(ctx, token); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return nil
}

// ClusterRoleBindings grant Group the first half of what kubeadm grants its bootstrap tokens'
// group (system:bootstrappers:kubeadm:default-node-token): to create node
// CertificateSigningRequests (system:node-bootstrapper). Not the second, …:nodeclient, with which
// kube-controller-manager would approve a certificate for any node name to any holder of any
// token: the Approver approves only the node of the token's own NodeClaim. The Helm chart installs
// the same bindings in instance mode; the local cluster applies these.
func ClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	binding := func(name, role string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: Group}},
		}
	}
	return []*rbacv1.ClusterRoleBinding{
		binding("karpenter-linode:node-bootstrapper", "system:node-bootstrapper"),
	}
}
