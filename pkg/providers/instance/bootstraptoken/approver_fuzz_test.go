package bootstraptoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// givenCluster answers a decision's reads from the fuzzer's Nodes and NodeClaims, the cache and
// the API server alike.
type givenCluster struct {
	nodes      map[string]*corev1.Node
	nodeClaims []karpv1.NodeClaim
}

func (c givenCluster) Node(_ context.Context, name string) (*corev1.Node, error) {
	return c.nodes[name], nil
}

func (c givenCluster) NodeClaims(context.Context, bool) ([]karpv1.NodeClaim, error) {
	return c.nodeClaims, nil
}

// fuzzedUsages are the usages a fuzzed request picks from, one bit each.
var fuzzedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
	certificatesv1.UsageServerAuth, certificatesv1.UsageSigning,
}

// FuzzApproverSubject: of the requests made with a bootstrap token, the Approver approves exactly
// those for system:node:<name>, in group system:nodes alone, with no subject alternative name and
// kubelet's usages, where name is that of the NodeClaim the token was issued for, which is neither
// being deleted nor registered, and no Node (let alone a control-plane node) is called name. It
// denies every other kubelet client request of the tokens' group, saying why, and decides nothing
// else.
//
// The fuzzer picks the cluster (NodeClaims, some registered or being deleted; Nodes, some marked
// control-plane by label or taint), whose token made the request (a NodeClaim's, or any user), and
// the request: its common name (a NodeClaim's node, an existing Node's, or any), organizations,
// subject alternative name, usages, signer and groups, signed with crypto/x509 as kubelet does.
func FuzzApproverSubject(f *testing.F) {
	// The fuzzer's choices: a common name or token "of" index i is the i-th NodeClaim's (then the
	// i-th Node's, for common names), and an index past them takes the raw string.
	f.Add("node-a,node-b", uint8(0), uint8(0), "cp-1,other", uint8(1), uint8(0), "", true, true,
		uint8(0), "", "system:nodes", "", uint8(0b101), false)
	f.Add("node-a,node-b", uint8(0), uint8(0), "cp-1,other", uint8(1), uint8(0), "", true, true,
		uint8(1), "", "system:nodes", "", uint8(0b111), false) // another NodeClaim's node
	f.Add("cp-1", uint8(0), uint8(0), "cp-1", uint8(1), uint8(0), "", true, true,
		uint8(0), "", "system:nodes", "", uint8(0b101), false) // a NodeClaim named like a control-plane node
	f.Add("victim", uint8(0), uint8(0), "victim", uint8(0), uint8(0), "", true, true,
		uint8(0), "", "system:nodes", "", uint8(0b101), false) // named like an existing Node
	f.Add("node-a", uint8(1), uint8(0), "", uint8(0), uint8(0), "", true, true,
		uint8(0), "", "system:nodes", "", uint8(0b101), false) // registered
	f.Add("node-a", uint8(0), uint8(1), "", uint8(0), uint8(0), "", true, true,
		uint8(0), "", "system:nodes", "", uint8(0b101), false) // being deleted
	f.Add("node-a", uint8(0), uint8(0), "", uint8(0), uint8(0), "", true, true,
		uint8(9), "system:node:node-a ", "system:nodes,system:masters", "node-a.example", uint8(0b1101), false)
	f.Add("node-a", uint8(0), uint8(0), "", uint8(0), uint8(9), "system:bootstrap:abcdef", true, false,
		uint8(0), "", "system:nodes", "", uint8(0b101), true) // another signer, an unparsable request
	f.Fuzz(func(t *testing.T, nodeClaimNames string, registered, deleting uint8, nodeNames string, controlPlane uint8,
		tokenOf uint8, user string, inGroup, kubeletSigner bool,
		subjectOf uint8, commonName, organizations, dnsName string, usageBits uint8, garbage bool) {
		ctx := context.Background()
		key := Key(strings.Repeat("k", keySize))
		cluster := givenCluster{nodes: map[string]*corev1.Node{}}
		for i, name := range uniqueNames(nodeClaimNames) {
			nodeClaim := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
			if registered&(1<<(i%8)) != 0 {
				nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
			}
			if deleting&(1<<(i%8)) != 0 {
				nodeClaim.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			}
			cluster.nodeClaims = append(cluster.nodeClaims, nodeClaim)
		}
		nodes := uniqueNames(nodeNames)
		for i, name := range nodes {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if controlPlane&(1<<(i%8)) != 0 {
				role := controlPlaneRoles[i%len(controlPlaneRoles)]
				if i%4 < 2 {
					node.Labels = map[string]string{role: ""}
				} else {
					node.Spec.Taints = []corev1.Taint{{Key: role, Effect: corev1.TaintEffectNoSchedule}}
				}
			}
			cluster.nodes[name] = node
		}

		username := user
		if int(tokenOf) < len(cluster.nodeClaims) {
			username = bootstrapUserPrefix + key.ID(&cluster.nodeClaims[tokenOf])
		}
		switch i := int(subjectOf); {
		case i < len(cluster.nodeClaims):
			commonName = nodeUserPrefix + cluster.nodeClaims[i].Name
		case i-len(cluster.nodeClaims) < len(nodes):
			commonName = nodeUserPrefix + nodes[i-len(cluster.nodeClaims)]
		}
		orgs := []string{}
		if organizations != "" {
			orgs = strings.Split(organizations, ",")
		}
		var usages []certificatesv1.KeyUsage
		for i, usage := range fuzzedUsages {
			if usageBits&(1<<i) != 0 {
				usages = append(usages, usage)
			}
		}
		request := certificateRequestPEM(t, commonName, orgs, dnsName)
		if request == nil {
			return // x509 encodes no such request
		}
		if garbage {
			request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte(commonName)})
		}
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "csr"},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: request, Username: username, Usages: usages,
				SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
				Groups:     []string{"system:bootstrappers", "system:authenticated"},
			},
		}
		if !kubeletSigner {
			csr.Spec.SignerName = certificatesv1.KubeAPIServerClientSignerName
		}
		if inGroup {
			csr.Spec.Groups = append(csr.Spec.Groups, Group)
		}

		v, err := judge(ctx, csr, key, cluster)
		if err != nil {
			t.Fatal(err)
		}

		// The reference: what makes a request the kubelet's of the token's own NodeClaim.
		ofTokens := inGroup && strings.HasPrefix(username, bootstrapUserPrefix)
		id := strings.TrimPrefix(username, bootstrapUserPrefix)
		name, isNode := strings.CutPrefix(commonName, nodeUserPrefix)
		_, nodeExists := cluster.nodes[name]
		ownNodeClaim := slices.ContainsFunc(cluster.nodeClaims, func(nc karpv1.NodeClaim) bool {
			return nc.Name == name && key.ID(&nc) == id && nc.DeletionTimestamp == nil &&
				!nc.StatusConditions().IsTrue(karpv1.ConditionTypeRegistered)
		})
		usageSet := sets.New(usages...)
		kubeletUsages := usageSet.Equal(sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)) ||
			usageSet.Equal(sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth))
		approvable := ofTokens && kubeletSigner && !garbage && isNode && name != "" &&
			slices.Equal(orgs, []string{nodesGroup}) && dnsName == "" && kubeletUsages && !nodeExists && ownNodeClaim

		switch {
		case v.decision == certificatesv1.CertificateApproved && !approvable:
			t.Fatalf("approved %q for %q (organizations %q, DNS name %q, usages %q, signer %s, groups %q) on NodeClaim %s; NodeClaims %q, Nodes %q",
				commonName, username, orgs, dnsName, usages, csr.Spec.SignerName, csr.Spec.Groups, v.nodeClaim.Name, nodeClaimNames, nodeNames)
		case v.decision == certificatesv1.CertificateApproved && (v.nodeClaim.Name != name || cluster.nodes[v.nodeClaim.Name] != nil):
			t.Fatalf("approved %q on NodeClaim %s, or for an existing Node", commonName, v.nodeClaim.Name)
		case approvable && v.decision != certificatesv1.CertificateApproved:
			t.Fatalf("did not approve the kubelet request of NodeClaim %s's own token: %s %s", name, v.decision, v.reason)
		case !ofTokens && v != (verdict{}):
			t.Fatalf("decided a request of %q in groups %q, not the tokens': %+v", username, csr.Spec.Groups, v)
		case ofTokens && !kubeletSigner && (v.decision != "" || v.reason == ""):
			t.Fatalf("a request for signer %s was not left pending with a reason: %+v", csr.Spec.SignerName, v)
		case ofTokens && kubeletSigner && !approvable && (v.decision != certificatesv1.CertificateDenied || v.reason == ""):
			t.Fatalf("a kubelet request of the tokens' group was not denied with a reason: %+v", v)
		}
	})
}

// uniqueNames splits a comma-separated list, without empty or repeated names: a cluster has one
// object of a name.
func uniqueNames(list string) []string {
	var names []string
	for _, name := range strings.Split(list, ",") {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

var fuzzKey = func() *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return key
}()

// certificateRequestPEM is a request as kubelet makes one, with the subject and DNS name given,
// or nil when x509 cannot encode them.
func certificateRequestPEM(t *testing.T, commonName string, organizations []string, dnsName string) []byte {
	t.Helper()
	template := &x509.CertificateRequest{Subject: pkix.Name{CommonName: commonName, Organization: organizations}}
	if dnsName != "" {
		template.DNSNames = []string{dnsName}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, template, fuzzKey)
	if err != nil {
		return nil
	}
	parsed, err := x509.ParseCertificateRequest(der)
	if err != nil || parsed.Subject.CommonName != commonName || !slices.Equal(parsed.Subject.Organization, organizations) {
		return nil // a subject that does not read back as written is not the request this input describes
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
