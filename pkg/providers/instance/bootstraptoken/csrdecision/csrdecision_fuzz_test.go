package csrdecision

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// givenCluster answers a decision's reads from the fuzzer's Nodes and NodeClaims, the cache and
// the API server alike.
type givenCluster struct {
	nodes      map[string]*corev1.Node
	nodeClaims []NodeClaim
}

func (c givenCluster) Node(_ context.Context, name string) (*corev1.Node, error) {
	return c.nodes[name], nil
}

func (c givenCluster) NodeClaims(context.Context, bool) ([]NodeClaim, error) {
	return c.nodeClaims, nil
}

// fuzzedUsages are the usages a fuzzed request picks from, one bit each.
var fuzzedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
	certificatesv1.UsageServerAuth, certificatesv1.UsageSigning,
}

// approverChoices are a fuzzed request's choices, packed into bytes (the fuzzer flips bits of
// bytes, and only adds to or subtracts from integers) so that one flipped bit makes a near miss:
// which token made it (the i-th NodeClaim's, or past them the raw user), which name its common
// name has (the i-th NodeClaim's, then the i-th Node's, or the raw name) after which of
// commonNamePrefixes, its organizations (a bit each of organizationChoices, the last the raw
// organization), its usages (a bit each of fuzzedUsages), whether it is in the tokens' group, asks
// kubelet's signer, is garbage or has the raw DNS name, and which NodeClaims are registered or
// being deleted and which Nodes are control-plane nodes.
type approverChoices struct {
	tokenOf, subjectOf, prefix               uint8
	orgBits, usageBits                       uint8
	inGroup, kubeletSigner, garbage, withDNS bool
	registered, deleting, controlPlane       uint8
}

func (c approverChoices) pack() []byte {
	flag := func(b bool, at int) byte {
		if b {
			return 1 << at
		}
		return 0
	}
	return []byte{
		c.tokenOf&0xf | c.subjectOf<<4,
		c.prefix&0x7 | flag(c.inGroup, 3) | flag(c.kubeletSigner, 4) | flag(c.garbage, 5) | flag(c.withDNS, 6),
		c.orgBits, c.usageBits, c.registered, c.deleting, c.controlPlane,
	}
}

func unpackApproverChoices(packed []byte) approverChoices {
	b := append(slices.Clone(packed), make([]byte, 7)...)
	return approverChoices{
		tokenOf: b[0] & 0xf, subjectOf: b[0] >> 4, prefix: b[1] & 0x7,
		inGroup: b[1]&(1<<3) != 0, kubeletSigner: b[1]&(1<<4) != 0, garbage: b[1]&(1<<5) != 0, withDNS: b[1]&(1<<6) != 0,
		orgBits: b[2], usageBits: b[3], registered: b[4], deleting: b[5], controlPlane: b[6],
	}
}

// commonNamePrefixes and organizationChoices are what a fuzzed request's subject is made of.
var (
	commonNamePrefixes  = []string{NodeUserPrefix, "", "system:nodes:", "System:Node:", "system:node", " system:node:", BootstrapUserPrefix, "system:node::"}
	organizationChoices = []string{NodesGroup, "system:masters", "", "System:Nodes", NodesGroup + " ", "system:node", Group}
)

// FuzzApproverSubject: of the requests made with a bootstrap token, the Approver approves exactly
// those for system:node:<name>, in group system:nodes alone, with no subject alternative name and
// kubelet's usages, where name is that of the NodeClaim the token was issued for, which is neither
// being deleted nor registered, and no Node (let alone a control-plane node) is called name. It
// denies every other kubelet client request of the tokens' group, saying why, and decides nothing
// else.
//
// The fuzzer picks the cluster (NodeClaims, some registered or being deleted; Nodes, some marked
// control-plane by label or taint), whose token made the request (a NodeClaim's, or any user), and
// the request (approverChoices, and raw strings "user|name|organization|DNS name"), signed with
// crypto/x509 as kubelet signs its own.
func FuzzApproverSubject(f *testing.F) {
	kubelet := approverChoices{orgBits: 0b1, usageBits: 0b101, inGroup: true, kubeletSigner: true}
	with := func(change func(*approverChoices)) []byte {
		c := kubelet
		change(&c)
		return c.pack()
	}
	f.Add("node-a,node-b", "cp-1,other", with(func(c *approverChoices) { c.controlPlane = 1 }), "")
	f.Add("node-a,node-b", "cp-1,other", with(func(c *approverChoices) { c.subjectOf, c.usageBits = 1, 0b111 }), "") // another NodeClaim's node
	f.Add("cp-1", "cp-1", with(func(c *approverChoices) { c.controlPlane = 1 }), "")                                 // named like a control-plane node
	f.Add("victim", "victim", kubelet.pack(), "")                                                                    // named like an existing Node
	f.Add("node-a", "", with(func(c *approverChoices) { c.registered = 1 }), "")
	f.Add("node-a", "", with(func(c *approverChoices) { c.deleting = 1 }), "")
	f.Add("node-a", "", with(func(c *approverChoices) { c.subjectOf, c.orgBits, c.withDNS = 9, 0b10000001, true }), "|node-a |system:masters|node-a.example")
	f.Add("node-a", "", with(func(c *approverChoices) { c.tokenOf, c.kubeletSigner, c.garbage = 9, false, true }), "system:bootstrap:abcdef")
	f.Fuzz(func(t *testing.T, nodeClaimNames, nodeNames string, packed []byte, raw string) {
		choices := unpackApproverChoices(packed)
		rawParts := append(strings.SplitN(raw, "|", 4), "", "", "", "")
		user, rawName, rawOrganization, dnsName := rawParts[0], rawParts[1], rawParts[2], rawParts[3]
		if !choices.withDNS {
			dnsName = ""
		}
		tokenOf, subjectOf, orgBits, usageBits := choices.tokenOf, choices.subjectOf, choices.orgBits, choices.usageBits
		registered, deleting, controlPlane := choices.registered, choices.deleting, choices.controlPlane
		inGroup, kubeletSigner, garbage := choices.inGroup, choices.kubeletSigner, choices.garbage
		ctx := context.Background()
		cluster := givenCluster{nodes: map[string]*corev1.Node{}}
		for i, name := range uniqueNames(nodeClaimNames) {
			cluster.nodeClaims = append(cluster.nodeClaims, NodeClaim{
				Name: name, TokenID: tokenID(name), Registered: registered&(1<<(i%8)) != 0, Deleting: deleting&(1<<(i%8)) != 0,
			})
		}
		nodes := uniqueNames(nodeNames)
		for i, name := range nodes {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if controlPlane&(1<<(i%8)) != 0 {
				role := ControlPlaneRoles[i%len(ControlPlaneRoles)]
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
			username = BootstrapUserPrefix + cluster.nodeClaims[tokenOf].TokenID
		}
		subjectName := rawName
		switch i := int(subjectOf); {
		case i < len(cluster.nodeClaims):
			subjectName = cluster.nodeClaims[i].Name
		case i-len(cluster.nodeClaims) < len(nodes):
			subjectName = nodes[i-len(cluster.nodeClaims)]
		}
		commonName := commonNamePrefixes[int(choices.prefix)%len(commonNamePrefixes)] + subjectName
		orgs := []string{}
		for i, org := range organizationChoices {
			if orgBits&(1<<i) != 0 {
				orgs = append(orgs, org)
			}
		}
		if orgBits&(1<<7) != 0 {
			orgs = append(orgs, rawOrganization)
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

		v, err := Judge(ctx, csr, cluster)
		if err != nil {
			t.Fatal(err)
		}

		// The reference: what makes a request the kubelet's of the token's own NodeClaim.
		ofTokens := inGroup && strings.HasPrefix(username, BootstrapUserPrefix)
		id := strings.TrimPrefix(username, BootstrapUserPrefix)
		name, isNode := strings.CutPrefix(commonName, NodeUserPrefix)
		_, nodeExists := cluster.nodes[name]
		ownNodeClaim := slices.ContainsFunc(cluster.nodeClaims, func(nc NodeClaim) bool {
			return nc.Name == name && nc.TokenID == id && !nc.Deleting && !nc.Registered
		})
		usageSet := sets.New(usages...)
		kubeletUsages := usageSet.Equal(sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)) ||
			usageSet.Equal(sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth))
		approvable := ofTokens && kubeletSigner && !garbage && isNode && name != "" &&
			slices.Equal(orgs, []string{NodesGroup}) && dnsName == "" && kubeletUsages && !nodeExists && ownNodeClaim

		switch {
		case v.Decision == certificatesv1.CertificateApproved && !approvable:
			t.Fatalf("approved %q for %q (organizations %q, DNS name %q, usages %q, signer %s, groups %q) on NodeClaim %s; NodeClaims %q, Nodes %q",
				commonName, username, orgs, dnsName, usages, csr.Spec.SignerName, csr.Spec.Groups, v.NodeClaim, nodeClaimNames, nodeNames)
		case v.Decision == certificatesv1.CertificateApproved && (v.NodeClaim != name || cluster.nodes[v.NodeClaim] != nil):
			t.Fatalf("approved %q on NodeClaim %s, or for an existing Node", commonName, v.NodeClaim)
		case approvable && v.Decision != certificatesv1.CertificateApproved:
			t.Fatalf("did not approve the kubelet request of NodeClaim %s's own token: %s %s", name, v.Decision, v.Reason)
		case !ofTokens && v != (Verdict{}):
			t.Fatalf("decided a request of %q in groups %q, not the tokens': %+v", username, csr.Spec.Groups, v)
		case ofTokens && !kubeletSigner && (v.Decision != "" || v.Reason == ""):
			t.Fatalf("a request for signer %s was not left pending with a reason: %+v", csr.Spec.SignerName, v)
		case ofTokens && kubeletSigner && !approvable && (v.Decision != certificatesv1.CertificateDenied || v.Reason == ""):
			t.Fatalf("a kubelet request of the tokens' group was not denied with a reason: %+v", v)
		}
	})
}

// tokenID stands for the keyed hash bootstraptoken derives token ids with: 6 characters of
// [a-z0-9], the same for the same name.
func tokenID(name string) string {
	return fmt.Sprintf("%06x", crc32.ChecksumIEEE([]byte(name))&0xffffff)
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
