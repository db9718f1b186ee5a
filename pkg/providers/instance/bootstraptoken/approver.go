package bootstraptoken

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken/csrdecision"
)

const (
	// ReasonApproved and ReasonDenied are the reasons of the conditions the Approver sets.
	ReasonApproved = "KarpenterLinodeNodeClaim"
	ReasonDenied   = "KarpenterLinodeNodeClaimMismatch"
)

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
	if !csrdecision.OfTokensGroup(csr) || csrdecision.Decided(csr) {
		return reconcile.Result{}, nil
	}
	key, err := a.keys.Key(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	verdict, err := csrdecision.Judge(ctx, csr, clusterReader{cache: a.kube, reader: a.reader, key: key})
	if err != nil {
		return reconcile.Result{}, err
	}
	logger := log.FromContext(ctx).WithValues("CertificateSigningRequest", csr.Name, "requester", csr.Spec.Username)
	switch verdict.Decision {
	case certificatesv1.CertificateDenied:
		if err := a.decide(ctx, csr, certificatesv1.CertificateDenied, ReasonDenied, "Denied by Karpenter: "+verdict.Reason); err != nil {
			return reconcile.Result{}, err
		}
		a.recorder.Publish(events.Event{
			InvolvedObject: csr, Type: corev1.EventTypeWarning, Reason: "NodeCertificateDenied",
			Message: "Denied: " + verdict.Reason, DedupeValues: []string{string(csr.UID)},
		})
		logger.Info("denied a node client certificate request made with a bootstrap token", "reason", verdict.Reason)
		Decisions.Inc(map[string]string{decisionLabel: "denied"})
	case certificatesv1.CertificateApproved:
		if err := a.decide(ctx, csr, certificatesv1.CertificateApproved, ReasonApproved,
			fmt.Sprintf("Approved by Karpenter: the node of NodeClaim %s, whose bootstrap token made the request", verdict.NodeClaim)); err != nil {
			return reconcile.Result{}, err
		}
		logger.V(1).Info("approved the client certificate of a NodeClaim's node", "NodeClaim", verdict.NodeClaim)
		Decisions.Inc(map[string]string{decisionLabel: "approved"})
	default:
		a.recorder.Publish(events.Event{
			InvolvedObject: csr, Type: corev1.EventTypeWarning, Reason: "NotAKubeletClientRequest",
			Message: verdict.Reason, DedupeValues: []string{string(csr.UID)},
		})
	}
	return reconcile.Result{}, nil
}

// clusterReader is what the Approver's decisions read: NodeClaims from the cache and, fresh, past
// it, so that a NodeClaim the cache has not seen yet never costs its node a denial; Nodes past it,
// so that a Node the cache has not seen yet is not given away.
type clusterReader struct {
	cache, reader client.Reader
	key           Key
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

func (r clusterReader) NodeClaims(ctx context.Context, fresh bool) ([]csrdecision.NodeClaim, error) {
	reader := r.cache
	if fresh {
		reader = r.reader
	}
	list := &karpv1.NodeClaimList{}
	if err := reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	nodeClaims := make([]csrdecision.NodeClaim, len(list.Items))
	for i := range list.Items {
		nodeClaim := &list.Items[i]
		nodeClaims[i] = csrdecision.NodeClaim{
			Name: nodeClaim.Name, TokenID: r.key.ID(nodeClaim),
			Registered: nodeClaim.StatusConditions().IsTrue(karpv1.ConditionTypeRegistered),
			Deleting:   !nodeClaim.DeletionTimestamp.IsZero(),
		}
	}
	return nodeClaims, nil
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
		return csrdecision.OfTokensGroup(csr) && !csrdecision.Decided(csr)
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
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: csrdecision.NodesGroup}},
	}
}
