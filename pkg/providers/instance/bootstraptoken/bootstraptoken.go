// Package bootstraptoken issues the Kubernetes bootstrap token an instance-mode node's kubelet
// joins with, one per NodeClaim, and takes it back once it is no longer needed.
//
// A token is a Secret of type bootstrap.kubernetes.io/token in kube-system, as kubeadm makes them:
// kube-apiserver authenticates it (--enable-bootstrap-token-auth) as the user
// system:bootstrap:<id> in the groups system:bootstrappers and Group. Group is this provider's
// alone: the Helm chart lets it, and nothing else, create node CertificateSigningRequests, which
// the Approver approves only for the node of the token's own NodeClaim. A token expires
// TTL after it is issued (kube-controller-manager's tokencleaner deletes it then), is owned by its
// NodeClaim (the garbage collector deletes it with the NodeClaim), and is deleted as soon as its
// node has registered (Controller). Its secret half appears in the node's user data only: never
// in a log, an event, a metric or a status.
//
// The issuer reads no Secret of kube-system, where the control plane's own credentials are. A
// token's id is drawn at random when its NodeClaim's first launch issues it, and recorded on the
// NodeClaim with the UID of the token's Secret before the token goes into any user data; its
// secret is derived from the NodeClaim's UID with a key of the controller's own. A retried launch
// so issues exactly the token an interrupted one put in a Linode's user data, and nothing but the
// NodeClaim's own token is ever deleted: the deletion is conditional on the recorded UID, which
// another NodeClaim's token, should one draw the same id, does not have. The Helm chart's
// ValidatingAdmissionPolicy lets the controller create and delete nothing in kube-system but
// tokens made as this package makes them.
package bootstraptoken

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"strings"
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
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
)

const (
	// Group is the group the tokens authenticate in besides system:bootstrappers.
	Group = "system:bootstrappers:karpenter:linode"
	// Namespace holds bootstrap tokens: kube-apiserver reads them nowhere else.
	Namespace = metav1.NamespaceSystem
	// TTL is how long a token is valid: core's launch timeout (5 min) and registration timeout
	// (15 min). A node that has not registered by then has had its NodeClaim deleted by core.
	TTL = 20 * time.Minute
	// LabelNodeClaimToken marks the tokens this provider issued.
	LabelNodeClaimToken = apis.Group + "/bootstrap-token"
	// AnnotationNodeClaim names the NodeClaim a token was issued for.
	AnnotationNodeClaim = apis.Group + "/nodeclaim"
	// AnnotationTokenID and AnnotationTokenUID on a NodeClaim are its token's id and the UID of
	// the token's Secret.
	AnnotationTokenID  = apis.Group + "/bootstrap-token-id"
	AnnotationTokenUID = apis.Group + "/bootstrap-token-uid"
	// idDraws is how many random ids Ensure tries before it gives up: another token holding the
	// first is one chance in 36^6 per token, and three in a row are none.
	idDraws = 3
	// KeySecretKey is the entry of the key Secret that holds the key tokens' secrets derive from.
	KeySecretKey = "key"
	// keySize is the key's length in bytes: that of the HMAC-SHA256 it keys.
	keySize = 32
)

// Issuer creates and deletes tokens. It reads one Secret only, the key's, past any cache, and
// creates it on first use.
type Issuer struct {
	kube   client.Client
	reader client.Reader
	keyRef types.NamespacedName
	clock  clock.Clock

	mu  sync.Mutex
	key []byte
}

// NewIssuer returns an issuer writing with kube, keeping its key in the Secret keyRef, read
// with reader.
func NewIssuer(kube client.Client, reader client.Reader, keyRef types.NamespacedName, clk clock.Clock) *Issuer {
	return &Issuer{kube: kube, reader: reader, keyRef: keyRef, clock: clk}
}

// ID is the id of the NodeClaim's token, "" before one is issued.
func ID(nodeClaim *karpv1.NodeClaim) string {
	return nodeClaim.Annotations[AnnotationTokenID]
}

// SecretName is the name of the NodeClaim's token Secret, "" before one is issued.
func SecretName(nodeClaim *karpv1.NodeClaim) string {
	if id := ID(nodeClaim); id != "" {
		return bootstraputil.BootstrapTokenSecretName(id)
	}
	return ""
}

// Ensure issues the NodeClaim's token, valid for TTL, and records it on the NodeClaim (and on
// nodeClaim). A NodeClaim that has one gets it again: a Linode an earlier launch created joins
// with it, and so does one launched now, well within TTL, which covers core's launch and
// registration timeouts from the first launch on. A token the record names but that is gone is
// issued again, with the same id and secret.
func (i *Issuer) Ensure(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error) {
	key, err := i.signingKey(ctx)
	if err != nil {
		return "", err
	}
	tokenSecret := derivedSecret(key, nodeClaim.UID)
	if id := ID(nodeClaim); id != "" {
		issued, err := i.create(ctx, nodeClaim, id, tokenSecret)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Only the NodeClaim's own token has its name while the NodeClaim launches: the token
			// is deleted once the node registered, or after TTL, both after the launch.
			return bootstrap.Token(bootstraputil.TokenFromIDAndSecret(id, tokenSecret)), nil
		case err != nil:
			return "", err
		}
		return i.record(ctx, nodeClaim, id, issued, tokenSecret)
	}
	for range idDraws {
		id, err := randomID()
		if err != nil {
			return "", err
		}
		issued, err := i.create(ctx, nodeClaim, id, tokenSecret)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Another NodeClaim's token: left alone, and another id drawn.
			continue
		case err != nil:
			return "", err
		}
		return i.record(ctx, nodeClaim, id, issued, tokenSecret)
	}
	return "", fmt.Errorf("issuing the bootstrap token of NodeClaim %s: %d random ids in a row were other tokens'", nodeClaim.Name, idDraws)
}

// create creates the NodeClaim's token Secret.
func (i *Issuer) create(ctx context.Context, nodeClaim *karpv1.NodeClaim, id, tokenSecret string) (*corev1.Secret, error) {
	secret := i.tokenSecret(nodeClaim, id, tokenSecret)
	if err := i.kube.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		return nil, fmt.Errorf("creating the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return secret, nil
}

// record writes the token's id and its Secret's UID on the NodeClaim, on the condition that no
// other id was recorded there meanwhile: a copy of the NodeClaim read before an earlier launch
// recorded its token would otherwise record another over it. The write is conditional on the
// NodeClaim's version; when that changed, the NodeClaim is read again, past any cache, and the
// write made again unless it records another token. A token that cannot be recorded is deleted.
func (i *Issuer) record(ctx context.Context, nodeClaim *karpv1.NodeClaim, id string, issued *corev1.Secret, tokenSecret string) (bootstrap.Token, error) {
	current := nodeClaim
	err := fmt.Errorf("it changed %d times while it was written", recordAttempts)
	for range recordAttempts {
		recorded := current.DeepCopy()
		metav1.SetMetaDataAnnotation(&recorded.ObjectMeta, AnnotationTokenID, id)
		metav1.SetMetaDataAnnotation(&recorded.ObjectMeta, AnnotationTokenUID, string(issued.UID))
		if err = i.kube.Patch(ctx, recorded, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{})); !apierrors.IsConflict(err) {
			break
		}
		current = &karpv1.NodeClaim{}
		if getErr := i.reader.Get(ctx, client.ObjectKeyFromObject(nodeClaim), current); getErr != nil {
			err = getErr
			break
		}
		if other := ID(current); other != "" && other != id {
			err = fmt.Errorf("it records token %s already", other)
			break
		}
	}
	if err != nil {
		if deleteErr := i.deleteIssued(ctx, id, issued.UID); deleteErr != nil {
			err = errors.Join(err, deleteErr)
		}
		return "", fmt.Errorf("recording the bootstrap token of NodeClaim %s on it: %w", nodeClaim.Name, err)
	}
	metav1.SetMetaDataAnnotation(&nodeClaim.ObjectMeta, AnnotationTokenID, id)
	metav1.SetMetaDataAnnotation(&nodeClaim.ObjectMeta, AnnotationTokenUID, string(issued.UID))
	return bootstrap.Token(bootstraputil.TokenFromIDAndSecret(id, tokenSecret)), nil
}

// recordAttempts bounds record's writes: each but the last lost to a change of the NodeClaim.
const recordAttempts = 3

// randomID draws a token id: 6 characters of [a-z0-9] from crypto/rand.
func randomID() (string, error) {
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", fmt.Errorf("drawing a bootstrap token id: %w", err)
	}
	id, _, _ := strings.Cut(token, ".")
	return id, nil
}

func (i *Issuer) tokenSecret(nodeClaim *karpv1.NodeClaim, id, tokenSecret string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        bootstraputil.BootstrapTokenSecretName(id),
			Namespace:   Namespace,
			Labels:      map[string]string{LabelNodeClaimToken: "true"},
			Annotations: map[string]string{AnnotationNodeClaim: nodeClaim.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: coreapis.Group + "/v1", Kind: "NodeClaim", Name: nodeClaim.Name, UID: nodeClaim.UID,
			}},
		},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           tokenSecret,
			bootstrapapi.BootstrapTokenExpirationKey:       i.clock.Now().Add(TTL).UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      Group,
			bootstrapapi.BootstrapTokenDescriptionKey:      "kubelet TLS bootstrap of Karpenter NodeClaim " + nodeClaim.Name,
		},
	}
}

// derivedSecret is the secret half of a NodeClaim's token: 16 characters of [a-z0-9], as a
// bootstrap token's secret must be, from an HMAC of its UID.
func derivedSecret(key []byte, uid types.UID) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(uid))
	digits := new(big.Int).SetBytes(mac.Sum(nil)).Text(36)
	return digits[len(digits)-16:]
}

// signingKey returns the key tokens' secrets derive from: the key Secret's, which is created,
// immutable, if there is none. A key once read is kept for the life of the process.
func (i *Issuer) signingKey(ctx context.Context) ([]byte, error) {
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
	if len(secret.Data[KeySecretKey]) < keySize {
		return nil, fmt.Errorf("the Secret %s holds no bootstrap token key of %d bytes under %q: delete it, and the controller creates a new one", i.keyRef, keySize, KeySecretKey)
	}
	i.key = secret.Data[KeySecretKey]
	return i.key, nil
}

func (i *Issuer) createKey(ctx context.Context) (*corev1.Secret, error) {
	key := make([]byte, keySize)
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

// Delete deletes the NodeClaim's token, if it has one. The token is deleted by its name on the
// condition that its Secret is the one recorded on the NodeClaim, so that another NodeClaim's
// token of the same id is never deleted; the Helm chart's admission policy refuses the
// controller the deletion of any Secret that is not a token made as Ensure makes them.
func (i *Issuer) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	id, uid := ID(nodeClaim), types.UID(nodeClaim.Annotations[AnnotationTokenUID])
	if id == "" || uid == "" {
		return nil
	}
	if err := i.deleteIssued(ctx, id, uid); err != nil {
		return fmt.Errorf("deleting the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return nil
}

// deleteIssued deletes the token id if its Secret is uid: gone already, or another's, it is left.
func (i *Issuer) deleteIssued(ctx context.Context, id string, uid types.UID) error {
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: bootstraputil.BootstrapTokenSecretName(id)}}
	err := i.kube.Delete(ctx, token, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
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
