package bootstraptoken

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"math/big"

	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// ID is the NodeClaim's token id: 6 characters of [a-z0-9], as a bootstrap token's id must be,
// from an HMAC of the NodeClaim's name with the key. Derived rather than drawn, so that the
// controller, launching, and the node identity component, issuing, name the same token without
// telling each other; keyed, so that nobody without the key can tell which NodeClaim a token id
// is, or choose a name whose id is another's.
//
// Six characters are 2.2 billion ids: among a few hundred NodeClaims launching at once two share
// one about once in ten thousand bursts. Then the NodeClaim created first holds the id (heldBy):
// the other gets no token while it does (Issuer.Issue), is not launched but handed back to core
// (KeyFile.Token), and never deletes the holder's token (Issuer.Delete); the Approver gives the
// certificate the request names, of the two.
func (k Key) ID(nodeClaim *karpv1.NodeClaim) string {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte("bootstrap-token-id/" + nodeClaim.Name))
	digits := new(big.Int).SetBytes(mac.Sum(nil)).Text(36)
	return digits[len(digits)-6:]
}

// SecretName is the name of the NodeClaim's token Secret.
func (k Key) SecretName(nodeClaim *karpv1.NodeClaim) string {
	return bootstraputil.BootstrapTokenSecretName(k.ID(nodeClaim))
}

// heldBy names the NodeClaim that holds nodeClaim's token id, when it is another: of the
// NodeClaims still launching whose id is the same, and nodeClaim itself, the one created first
// (then by name). Every party follows that rule, so only the holder's token is issued, launched
// with, and deleted: the Secret of the id's name is the holder's.
func (k Key) heldBy(ctx context.Context, nodeClaims client.Reader, nodeClaim *karpv1.NodeClaim) (string, error) {
	list := &karpv1.NodeClaimList{}
	if err := nodeClaims.List(ctx, list); err != nil {
		return "", fmt.Errorf("listing NodeClaims: %w", err)
	}
	id, holder := k.ID(nodeClaim), nodeClaim
	for i := range list.Items {
		other := &list.Items[i]
		if other.UID == nodeClaim.UID || !ofLinode(other) || done(other) || k.ID(other) != id {
			continue
		}
		if other.CreationTimestamp.Before(&holder.CreationTimestamp) ||
			(other.CreationTimestamp.Equal(&holder.CreationTimestamp) && other.Name < holder.Name) {
			holder = other
		}
	}
	if holder == nodeClaim {
		return "", nil
	}
	return holder.Name, nil
}

// IDTakenError is a NodeClaim whose token id another NodeClaim holds (heldBy): its node could not
// join, and its launch is handed back to core, whose next NodeClaim has another name and so
// another id.
type IDTakenError struct {
	NodeClaim, Holder string
}

func (e *IDTakenError) Error() string {
	return fmt.Sprintf("the bootstrap token id of NodeClaim %s is that of NodeClaim %s, launching since before it", e.NodeClaim, e.Holder)
}
