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
package bootstraptoken

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"strings"
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
	// renewBefore is how much validity a token must have left to be handed out again: enough for
	// a Linode to boot and use it.
	renewBefore = 10 * time.Minute
)

// Issuer creates and deletes tokens. Reads go to reader, uncached, so that the controller needs
// no cache of every Secret in the cluster.
type Issuer struct {
	kube   client.Client
	reader client.Reader
	clock  clock.Clock
}

// NewIssuer returns an issuer writing with kube and reading with reader.
func NewIssuer(kube client.Client, reader client.Reader, clk clock.Clock) *Issuer {
	return &Issuer{kube: kube, reader: reader, clock: clk}
}

// ID is the token id of a NodeClaim: derived from its UID, so that a retried launch finds the
// token an interrupted one issued instead of issuing a second.
func ID(nodeClaim *karpv1.NodeClaim) string {
	sum := sha256.Sum256([]byte(nodeClaim.UID))
	id := new(big.Int).SetBytes(sum[:]).Text(36)
	return id[len(id)-6:]
}

// SecretName is the name of the NodeClaim's token Secret.
func SecretName(nodeClaim *karpv1.NodeClaim) string {
	return bootstraputil.BootstrapTokenSecretName(ID(nodeClaim))
}

// Ensure returns the NodeClaim's token, issuing it if it has none or only one about to expire.
func (i *Issuer) Ensure(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error) {
	existing := &corev1.Secret{}
	err := i.reader.Get(ctx, types.NamespacedName{Namespace: Namespace, Name: SecretName(nodeClaim)}, existing)
	switch {
	case err == nil:
		if !issuedFor(existing, nodeClaim) {
			return "", fmt.Errorf("bootstrap token Secret %s/%s was not issued for NodeClaim %s", Namespace, existing.Name, nodeClaim.Name)
		}
		if token, ok := i.usable(existing); ok {
			return token, nil
		}
		if err := i.kube.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("deleting the expiring bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
		}
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("reading the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return i.issue(ctx, nodeClaim)
}

func (i *Issuer) issue(ctx context.Context, nodeClaim *karpv1.NodeClaim) (bootstrap.Token, error) {
	random, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", fmt.Errorf("generating a bootstrap token: %w", err)
	}
	_, tokenSecret, _ := strings.Cut(random, ".")
	id := ID(nodeClaim)
	secret := &corev1.Secret{
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
	if err := i.kube.Create(ctx, secret); err != nil {
		return "", fmt.Errorf("creating the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	return bootstrap.Token(bootstraputil.TokenFromIDAndSecret(id, tokenSecret)), nil
}

// usable returns the Secret's token if it stays valid long enough for a node to boot with it.
func (i *Issuer) usable(secret *corev1.Secret) (bootstrap.Token, bool) {
	expiration, err := time.Parse(time.RFC3339, string(secret.Data[bootstrapapi.BootstrapTokenExpirationKey]))
	if err != nil || expiration.Sub(i.clock.Now()) < renewBefore {
		return "", false
	}
	token := bootstraputil.TokenFromIDAndSecret(string(secret.Data[bootstrapapi.BootstrapTokenIDKey]), string(secret.Data[bootstrapapi.BootstrapTokenSecretKey]))
	return bootstrap.Token(token), bootstraputil.IsValidBootstrapToken(token)
}

// Delete deletes the NodeClaim's token, if it has one.
func (i *Issuer) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	secret := &corev1.Secret{}
	err := i.reader.Get(ctx, types.NamespacedName{Namespace: Namespace, Name: SecretName(nodeClaim)}, secret)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the bootstrap token of NodeClaim %s: %w", nodeClaim.Name, err)
	}
	if !issuedFor(secret, nodeClaim) {
		return nil
	}
	return deleteToken(ctx, i.kube, secret)
}

func deleteToken(ctx context.Context, kube client.Client, secret *corev1.Secret) error {
	if err := kube.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting bootstrap token Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return nil
}

// issuedFor reports whether the Secret is this provider's token for the NodeClaim.
func issuedFor(secret *corev1.Secret, nodeClaim *karpv1.NodeClaim) bool {
	return secret.Labels[LabelNodeClaimToken] == "true" && secret.Annotations[AnnotationNodeClaim] == nodeClaim.Name &&
		len(secret.OwnerReferences) == 1 && secret.OwnerReferences[0].UID == nodeClaim.UID
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
