// Package csrdecision is what the node identity component's Approver (package bootstraptoken)
// makes of a certificate request made with one of the provider's bootstrap tokens: approved for
// the node of the token's own NodeClaim alone, denied with a reason, or not the Approver's to
// decide. The decision reads the cluster through Cluster only, so that it can be judged from
// facts given by a test or a fuzzer as well as from the API server.
package csrdecision

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

const (
	// Group is the group the provider's bootstrap tokens authenticate in besides
	// system:bootstrappers.
	Group = "system:bootstrappers:karpenter:linode"
	// BootstrapUserPrefix is how kube-apiserver names the user of a bootstrap token:
	// system:bootstrap:<token id>.
	BootstrapUserPrefix = "system:bootstrap:"
	// NodeUserPrefix and NodesGroup are the subject of a node client certificate, which the Node
	// authorizer and NodeRestriction read as the node's identity.
	NodeUserPrefix = "system:node:"
	NodesGroup     = "system:nodes"
)

// kubeletClientUsages are the usages kubelet asks for its client certificate with: key
// encipherment only with an RSA key. kube-controller-manager's approver accepts exactly these.
var kubeletClientUsages = []sets.Set[certificatesv1.KeyUsage]{
	sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth),
	sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth),
}

// NodeClaim is what a decision needs to know of a NodeClaim.
type NodeClaim struct {
	Name string
	// TokenID is the id of the bootstrap token derived for the NodeClaim.
	TokenID string
	// Registered is true once its node has registered, Deleting once it is being deleted.
	Registered, Deleting bool
}

// Cluster is what a decision reads of the cluster.
type Cluster interface {
	// Node returns the Node of the name, read past any cache, or nil when there is none.
	Node(ctx context.Context, name string) (*corev1.Node, error)
	// NodeClaims lists the NodeClaims, past any cache when fresh.
	NodeClaims(ctx context.Context, fresh bool) ([]NodeClaim, error)
}

// Verdict is what is made of a pending request of the tokens' group.
type Verdict struct {
	// Decision is CertificateApproved, CertificateDenied, or empty for a request left pending.
	Decision certificatesv1.RequestConditionType
	// NodeClaim names the NodeClaim whose node an approved request is for.
	NodeClaim string
	// Reason says why a request is denied or left pending.
	Reason string
}

// Judge decides a request: one of the tokens' group for a kubelet client certificate is approved
// for the node of the NodeClaim the token was issued for, named as its kubelet registers (the
// NodeClaim's name), only while that NodeClaim is neither registered nor being deleted and no Node
// of that name exists, and is denied otherwise, saying why. A request for another signer is left
// pending with a reason; any other request is not the Approver's (an empty Verdict).
func Judge(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, cluster Cluster) (Verdict, error) {
	if !OfTokensGroup(csr) || Decided(csr) {
		return Verdict{}, nil
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		// Deciding a request needs the right to approve for its signer, which the node identity
		// component has for kubelet client certificates alone. No kubelet asks another signer with a bootstrap token,
		// and nothing approves such a request for a bootstrap user unless someone does by hand.
		return Verdict{Reason: fmt.Sprintf("%s asked signer %s with a Karpenter bootstrap token; only %s requests are decided by Karpenter, this one is left pending", csr.Spec.Username, csr.Spec.SignerName, certificatesv1.KubeAPIServerClientKubeletSignerName)}, nil
	}
	nodeClaim, problem, err := check(ctx, csr, cluster)
	if err != nil {
		return Verdict{}, err
	}
	if problem != "" {
		return Verdict{Decision: certificatesv1.CertificateDenied, Reason: problem}, nil
	}
	return Verdict{Decision: certificatesv1.CertificateApproved, NodeClaim: nodeClaim.Name}, nil
}

// check returns the NodeClaim whose node the request may have a certificate for, or what is wrong
// with the request.
func check(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, cluster Cluster) (*NodeClaim, string, error) {
	subject, problem := kubeletClientSubject(csr)
	if problem != "" {
		return nil, problem, nil
	}
	if problem, err := existingNode(ctx, cluster, subject); problem != "" || err != nil {
		return nil, problem, err
	}
	id := strings.TrimPrefix(csr.Spec.Username, BootstrapUserPrefix)
	nodeClaim, err := nodeClaimOfToken(ctx, cluster, false, id, subject)
	if err == nil && nodeClaim == nil {
		nodeClaim, err = nodeClaimOfToken(ctx, cluster, true, id, subject)
	}
	if err != nil {
		return nil, "", err
	}
	switch {
	case nodeClaim == nil:
		return nil, fmt.Sprintf("bootstrap token %s belongs to no NodeClaim", id), nil
	case subject != nodeClaim.Name:
		return nil, fmt.Sprintf("bootstrap token %s was issued for NodeClaim %s, whose node is %s, not %s", id, nodeClaim.Name, nodeClaim.Name, subject), nil
	case nodeClaim.Deleting:
		return nil, fmt.Sprintf("NodeClaim %s of bootstrap token %s is being deleted", nodeClaim.Name, id), nil
	case nodeClaim.Registered:
		return nil, fmt.Sprintf("NodeClaim %s of bootstrap token %s has registered: its kubelet has its certificate", nodeClaim.Name, id), nil
	}
	return nodeClaim, "", nil
}

// existingNode says why no certificate may be had for a node name a Node already has. A
// NodeClaim's kubelet registers its Node only once it has its certificate.
func existingNode(ctx context.Context, cluster Cluster, name string) (string, error) {
	node, err := cluster.Node(ctx, name)
	if node == nil || err != nil {
		return "", err
	}
	if role := controlPlaneMark(node); role != "" {
		return fmt.Sprintf("Node %s exists and is a control-plane node (%s): a bootstrap token never becomes an existing node", name, role), nil
	}
	return fmt.Sprintf("Node %s exists: a bootstrap token never becomes an existing node", name), nil
}

// ControlPlaneRoles are the label and taint keys kubeadm and other installers mark control-plane
// nodes with.
var ControlPlaneRoles = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

// controlPlaneMark names the label or taint that makes the node a control-plane node, or is empty.
func controlPlaneMark(node *corev1.Node) string {
	for _, role := range ControlPlaneRoles {
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
// issued to one of them alone (bootstraptoken's Issuer.Issue, KeyFile.Token).
func nodeClaimOfToken(ctx context.Context, cluster Cluster, fresh bool, id, subject string) (*NodeClaim, error) {
	nodeClaims, err := cluster.NodeClaims(ctx, fresh)
	if err != nil {
		return nil, err
	}
	var found *NodeClaim
	for i := range nodeClaims {
		if nodeClaims[i].TokenID != id {
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
	name, isNode := strings.CutPrefix(request.Subject.CommonName, NodeUserPrefix)
	switch {
	case !isNode || name == "":
		return "", fmt.Sprintf("common name %q is not system:node:<node name>", request.Subject.CommonName)
	case !slices.Equal(request.Subject.Organization, []string{NodesGroup}):
		return "", fmt.Sprintf("organizations %q are not exactly [%s]", request.Subject.Organization, NodesGroup)
	case len(request.DNSNames)+len(request.IPAddresses)+len(request.EmailAddresses)+len(request.URIs) > 0:
		return "", "a kubelet client certificate has no subject alternative names"
	case !slices.ContainsFunc(kubeletClientUsages, sets.New(csr.Spec.Usages...).Equal):
		return "", fmt.Sprintf("usages %q are not those of a kubelet client certificate (digital signature, client auth, and key encipherment with an RSA key)", csr.Spec.Usages)
	}
	return name, ""
}

// OfTokensGroup reports whether a request was made with one of the provider's bootstrap tokens.
func OfTokensGroup(csr *certificatesv1.CertificateSigningRequest) bool {
	return strings.HasPrefix(csr.Spec.Username, BootstrapUserPrefix) && slices.Contains(csr.Spec.Groups, Group)
}

// Decided reports whether a request has been approved or denied.
func Decided(csr *certificatesv1.CertificateSigningRequest) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return (c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied) && c.Status == corev1.ConditionTrue
	})
}
