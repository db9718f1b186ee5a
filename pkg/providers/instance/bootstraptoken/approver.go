package bootstraptoken

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
)

const (
	// bootstrapUserPrefix is how kube-apiserver names the user of a bootstrap token:
	// system:bootstrap:<token id>.
	bootstrapUserPrefix = "system:bootstrap:"
	// nodeUserPrefix and nodesGroup are the subject of a node client certificate, which the Node
	// authorizer and NodeRestriction read as the node's identity.
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
	// ReasonApproved and ReasonDenied are the reasons of the conditions the Approver sets.
	ReasonApproved = "KarpenterLinodeNodeClaim"
	ReasonDenied   = "KarpenterLinodeNodeClaimMismatch"
)

// kubeletClientUsages are the usages kubelet asks for its client certificate with: key
// encipherment only with an RSA key. kube-controller-manager's approver accepts exactly these.
var kubeletClientUsages = []sets.Set[certificatesv1.KeyUsage]{
	sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth),
	sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth),
}

// Approver decides the CertificateSigningRequests made with this provider's bootstrap tokens, in
// place of kube-controller-manager's approver, which would sign a certificate for any node name
// to any holder of any of the tokens. It approves a request only for the node of the NodeClaim
// the token was issued for, named as its kubelet registers (the NodeClaim's name, the user data's
// --hostname-override), only while that NodeClaim has not registered, and only while no Node of
// that name exists: whatever a NodeClaim is called (a NodeClaim named like a control-plane node),
// its token never becomes a node that is already there. It denies every other kubelet client
// request of the tokens' group, saying why. Requests of other users are not its to decide.
type Approver struct {
	kube     client.Client
	reader   client.Reader
	keys     KeySource
	recorder events.Recorder
}

// KeySource gives the key token ids derive from: the Issuer's.
type KeySource interface {
	Key(ctx context.Context) (Key, error)
}

// NewApprover returns the approver. kube reads NodeClaims from the cache and writes approvals;
// reader lists NodeClaims past the cache before a request is denied for naming none, so that a
// NodeClaim the cache has not seen yet never costs its node a denial, and reads the Node of the
// requested name past the cache, so that a Node the cache has not seen yet is not given away.
func NewApprover(kube client.Client, reader client.Reader, keys KeySource, recorder events.Recorder) *Approver {
	return &Approver{kube: kube, reader: reader, keys: keys, recorder: recorder}
}

// Reconcile approves or denies a request of the tokens' group that is still pending.
func (a *Approver) Reconcile(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (reconcile.Result, error) {
	if !ofTokensGroup(csr) || decided(csr) {
		return reconcile.Result{}, nil
	}
	key, err := a.keys.Key(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	v, err := judge(ctx, csr, key, clusterReader{cache: a.kube, reader: a.reader})
	if err != nil {
		return reconcile.Result{}, err
	}
	logger := log.FromContext(ctx).WithValues("CertificateSigningRequest", csr.Name, "requester", csr.Spec.Username)
	switch v.decision {
	case certificatesv1.CertificateDenied:
		if err := a.decide(ctx, csr, certificatesv1.CertificateDenied, ReasonDenied, "Denied by Karpenter: "+v.reason); err != nil {
			return reconcile.Result{}, err
		}
		a.recorder.Publish(events.Event{
			InvolvedObject: csr, Type: corev1.EventTypeWarning, Reason: "NodeCertificateDenied",
			Message: "Denied: " + v.reason, DedupeValues: []string{string(csr.UID)},
		})
		logger.Info("denied a node client certificate request made with a bootstrap token", "reason", v.reason)
		Decisions.Inc(map[string]string{decisionLabel: "denied"})
	case certificatesv1.CertificateApproved:
		if err := a.decide(ctx, csr, certificatesv1.CertificateApproved, ReasonApproved,
			fmt.Sprintf("Approved by Karpenter: the node of NodeClaim %s, whose bootstrap token made the request", v.nodeClaim.Name)); err != nil {
			return reconcile.Result{}, err
		}
		logger.V(1).Info("approved the client certificate of a NodeClaim's node", "NodeClaim", v.nodeClaim.Name)
		Decisions.Inc(map[string]string{decisionLabel: "approved"})
	default:
		a.recorder.Publish(events.Event{
			InvolvedObject: csr, Type: corev1.EventTypeWarning, Reason: "NotAKubeletClientRequest",
			Message: v.reason, DedupeValues: []string{string(csr.UID)},
		})
	}
	return reconcile.Result{}, nil
}

// verdict is what the Approver makes of a pending request of the tokens' group.
type verdict struct {
	// decision is CertificateApproved, CertificateDenied, or empty for a request left pending.
	decision certificatesv1.RequestConditionType
	// nodeClaim is the NodeClaim whose node an approved request is for.
	nodeClaim *karpv1.NodeClaim
	// reason says why a request is denied or left pending.
	reason string
}

// clusterReads is what a decision reads of the cluster, so that it can be judged from given facts.
type clusterReads interface {
	// Node returns the Node of the name, read past any cache, or nil when there is none.
	Node(ctx context.Context, name string) (*corev1.Node, error)
	// NodeClaims lists the NodeClaims, past any cache when fresh.
	NodeClaims(ctx context.Context, fresh bool) ([]karpv1.NodeClaim, error)
}

// clusterReader reads NodeClaims from the cache and, fresh, past it, and Nodes past it: a NodeClaim
// the cache has not seen yet never costs its node a denial, and a Node the cache has not seen yet
// is not given away.
type clusterReader struct {
	cache, reader client.Reader
}

func (r clusterReader) Node(ctx context.Context, name string) (*corev1.Node, error) {
	node := &corev1.Node{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: name}, node)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Node %s: %w", name, err)
	}
	return node, nil
}

func (r clusterReader) NodeClaims(ctx context.Context, fresh bool) ([]karpv1.NodeClaim, error) {
	reader := r.cache
	if fresh {
		reader = r.reader
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := reader.List(ctx, nodeClaims); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	return nodeClaims.Items, nil
}

// judge decides a request from what cluster says and the key token ids derive from: a request of
// the tokens' group for a kubelet client certificate is approved for the node of the NodeClaim
// the token was issued for and denied otherwise, saying why; any other request is left pending.
func judge(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, key Key, cluster clusterReads) (verdict, error) {
	if !ofTokensGroup(csr) || decided(csr) {
		return verdict{}, nil
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		// Deciding a request needs the right to approve for its signer, which the node identity
		// component has for kubelet client certificates alone. No kubelet asks another signer with a bootstrap token,
		// and nothing approves such a request for a bootstrap user unless someone does by hand.
		return verdict{reason: fmt.Sprintf("%s asked signer %s with a Karpenter bootstrap token; only %s requests are decided by Karpenter, this one is left pending", csr.Spec.Username, csr.Spec.SignerName, certificatesv1.KubeAPIServerClientKubeletSignerName)}, nil
	}
	nodeClaim, problem, err := check(ctx, csr, key, cluster)
	if err != nil {
		return verdict{}, err
	}
	if problem != "" {
		return verdict{decision: certificatesv1.CertificateDenied, reason: problem}, nil
	}
	return verdict{decision: certificatesv1.CertificateApproved, nodeClaim: nodeClaim}, nil
}

// check returns the NodeClaim whose node the request may have a certificate for, or what is wrong
// with the request.
func check(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, key Key, cluster clusterReads) (*karpv1.NodeClaim, string, error) {
	subject, problem := kubeletClientSubject(csr)
	if problem != "" {
		return nil, problem, nil
	}
	if problem, err := existingNode(ctx, cluster, subject); problem != "" || err != nil {
		return nil, problem, err
	}
	id := strings.TrimPrefix(csr.Spec.Username, bootstrapUserPrefix)
	nodeClaim, err := nodeClaimOfToken(ctx, cluster, false, key, id, subject)
	if err == nil && nodeClaim == nil {
		nodeClaim, err = nodeClaimOfToken(ctx, cluster, true, key, id, subject)
	}
	if err != nil {
		return nil, "", err
	}
	switch {
	case nodeClaim == nil:
		return nil, fmt.Sprintf("bootstrap token %s belongs to no NodeClaim", id), nil
	case subject != nodeClaim.Name:
		return nil, fmt.Sprintf("bootstrap token %s was issued for NodeClaim %s, whose node is %s, not %s", id, nodeClaim.Name, nodeClaim.Name, subject), nil
	case !nodeClaim.DeletionTimestamp.IsZero():
		return nil, fmt.Sprintf("NodeClaim %s of bootstrap token %s is being deleted", nodeClaim.Name, id), nil
	case nodeClaim.StatusConditions().IsTrue(karpv1.ConditionTypeRegistered):
		return nil, fmt.Sprintf("NodeClaim %s of bootstrap token %s has registered: its kubelet has its certificate", nodeClaim.Name, id), nil
	}
	return nodeClaim, "", nil
}

// existingNode says why no certificate may be had for a node name a Node already has. A
// NodeClaim's kubelet registers its Node only once it has its certificate.
func existingNode(ctx context.Context, cluster clusterReads, name string) (string, error) {
	node, err := cluster.Node(ctx, name)
	if node == nil || err != nil {
		return "", err
	}
	if role := controlPlaneMark(node); role != "" {
		return fmt.Sprintf("Node %s exists and is a control-plane node (%s): a bootstrap token never becomes an existing node", name, role), nil
	}
	return fmt.Sprintf("Node %s exists: a bootstrap token never becomes an existing node", name), nil
}

// controlPlaneRoles are the label and taint keys kubeadm and other installers mark control-plane
// nodes with.
var controlPlaneRoles = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

// controlPlaneMark names the label or taint that makes the node a control-plane node, or is empty.
func controlPlaneMark(node *corev1.Node) string {
	for _, role := range controlPlaneRoles {
		if _, ok := node.Labels[role]; ok {
			return "label " + role
		}
		if slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == role }) {
			return "taint " + role
		}
	}
	return ""
}

// nodeClaimOfToken finds the NodeClaim a token id was derived from, or nil. Two NodeClaims may
// share an id: the one whose node the request asks for is the answer, the token having been
// issued to one of them alone (Issuer.Issue, KeyFile.Token).
func nodeClaimOfToken(ctx context.Context, cluster clusterReads, fresh bool, key Key, id, subject string) (*karpv1.NodeClaim, error) {
	nodeClaims, err := cluster.NodeClaims(ctx, fresh)
	if err != nil {
		return nil, err
	}
	var found *karpv1.NodeClaim
	for i := range nodeClaims {
		if key.ID(&nodeClaims[i]) != id {
			continue
		}
		if found == nil || nodeClaims[i].Name == subject {
			found = &nodeClaims[i]
		}
	}
	return found, nil
}

// kubeletClientSubject returns the node name a request asks a kubelet client certificate for, or
// what makes it something else: the subject must be exactly CN=system:node:<name>, O=system:nodes,
// with no subject alternative names, and the usages exactly kubelet's.
func kubeletClientSubject(csr *certificatesv1.CertificateSigningRequest) (string, string) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", "the request is not a PEM CERTIFICATE REQUEST"
	}
	request, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Sprintf("the request does not parse: %v", err)
	}
	if err := request.CheckSignature(); err != nil {
		return "", fmt.Sprintf("the request's signature does not verify: %v", err)
	}
	name, isNode := strings.CutPrefix(request.Subject.CommonName, nodeUserPrefix)
	switch {
	case !isNode || name == "":
		return "", fmt.Sprintf("common name %q is not system:node:<node name>", request.Subject.CommonName)
	case !slices.Equal(request.Subject.Organization, []string{nodesGroup}):
		return "", fmt.Sprintf("organizations %q are not exactly [%s]", request.Subject.Organization, nodesGroup)
	case len(request.DNSNames)+len(request.IPAddresses)+len(request.EmailAddresses)+len(request.URIs) > 0:
		return "", "a kubelet client certificate has no subject alternative names"
	case !slices.ContainsFunc(kubeletClientUsages, sets.New(csr.Spec.Usages...).Equal):
		return "", fmt.Sprintf("usages %q are not those of a kubelet client certificate (digital signature, client auth, and key encipherment with an RSA key)", csr.Spec.Usages)
	}
	return name, ""
}

// ofTokensGroup reports whether a request was made with one of this provider's bootstrap tokens.
func ofTokensGroup(csr *certificatesv1.CertificateSigningRequest) bool {
	return strings.HasPrefix(csr.Spec.Username, bootstrapUserPrefix) && slices.Contains(csr.Spec.Groups, Group)
}

func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return (c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied) && c.Status == corev1.ConditionTrue
	})
}

func (a *Approver) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, decision certificatesv1.RequestConditionType, reason, message string) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: decision, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: metav1.Now(),
	})
	if err := a.kube.SubResource("approval").Update(ctx, csr); err != nil {
		return fmt.Errorf("setting %s on CertificateSigningRequest %s: %w", decision, csr.Name, err)
	}
	return nil
}

// Register watches the pending requests of the tokens' group.
func (a *Approver) Register(_ context.Context, m manager.Manager) error {
	pending := func(obj client.Object) bool {
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		return ofTokensGroup(csr) && !decided(csr)
	}
	return controllerruntime.NewControllerManagedBy(m).
		Named("bootstraptoken.csr").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e event.CreateEvent) bool { return pending(e.Object) },
			UpdateFunc:  func(e event.UpdateEvent) bool { return pending(e.ObjectNew) },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(e event.GenericEvent) bool { return pending(e.Object) },
		})).
		Complete(reconcile.AsReconciler(m.GetClient(), a))
}

// NodeCertificateRenewalBinding lets every node renew its own client certificate: kube-controller-
// manager approves a node's request for a certificate of its own name when the node may create
// certificatesigningrequests/selfnodeclient. kubeadm creates this binding
// (kubeadm:node-autoapprove-certificate-rotation); other control planes may not, and their nodes'
// certificates then expire. The Helm chart installs it in instance mode unless told not to.
func NodeCertificateRenewalBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "karpenter-linode:node-autoapprove-certificate-rotation"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: nodesGroup}},
	}
}
