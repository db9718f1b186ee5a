// Package tokenpolicy fuzzes the chart's admission policies on Secrets against the bootstrap
// tokens the node identity component issues. It is a package of its own, with nothing but this
// test, because go test -fuzz instruments every package the test binary links: here the chart
// renderer and the token issuer, not the control plane and fixtures of bootstraptoken's other
// tests (a fifth of the packages of every fuzz target's build together).
package tokenpolicy_test

import (
	"context"
	"encoding/base64"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

const (
	// nodeIdentityUser is the chart's ServiceAccount of the node identity component, in its
	// release namespace, and keySecretName the Secret it keeps the key in.
	nodeIdentityUser = "system:serviceaccount:" + chartrender.Namespace + ":karpenter-node-identity"
	keySecretName    = "karpenter-bootstrap-token-key"
)

var (
	tokenSecretName   = regexp.MustCompile(`^bootstrap-token-[a-z0-9]{6}$`)
	tokenExpiration   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)
	tokenDataKeys     = []string{bootstrapapi.BootstrapTokenIDKey, bootstrapapi.BootstrapTokenSecretKey, bootstrapapi.BootstrapTokenExpirationKey, bootstrapapi.BootstrapTokenUsageAuthentication, bootstrapapi.BootstrapTokenExtraGroupsKey, bootstrapapi.BootstrapTokenDescriptionKey}
	requiredTokenKeys = tokenDataKeys[:5]
)

// FuzzTokenSecretPolicy: the chart's admission policies, evaluated as kube-apiserver evaluates them
// (test/chartrender), let the node identity component's ServiceAccount create a Secret exactly
// when the reference below (mayCreate) says it has the shape Issue gives a token, or is the key,
// update none, and delete only tokens of that shape; and every token Issue creates is admitted.
// They bind nobody else's Secrets: an administrator's requests pass.
//
// The fuzzer picks the Secret (namespace, name, type, the token label, owner references, which
// token entries it holds and their values, an extra entry, immutability), when the API server
// creates it, the operation and the user; or a NodeClaim (name, creation) and how long after its
// creation Issue makes its token. Its yes-or-no choices are bits of bytes (policyChoices), which
// it flips one at a time.
func FuzzTokenSecretPolicy(f *testing.F) {
	objects, err := chartrender.Render("karpenter", map[string]any{
		"apiToken": "fuzz-token", "region": "us-ord", "settings": map[string]any{"mode": "instance"},
	})
	if err != nil {
		f.Fatal(err)
	}
	policies, err := chartrender.AdmissionPolicies(objects)
	if err != nil {
		f.Fatal(err)
	}
	created := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC).Unix()
	ttl := int32(bootstraptoken.TTL / time.Second)
	token := policyChoices{asNodeIdentity: true, owners: 1, present: 0b011111}
	with := func(change func(*policyChoices)) []byte {
		c := token
		change(&c)
		return c.pack()
	}
	const tokenType, ns = string(bootstrapapi.SecretTypeBootstrapToken), "kube-system"
	values := "abc123|0123456789abcdef|" + time.Unix(created, 0).UTC().Add(bootstraptoken.TTL).Format(time.RFC3339) + "|true|" + bootstraptoken.Group + "|"
	f.Add(with(func(c *policyChoices) { c.fromIssue = true }), ns, "node-a", "", "", "", "", "", created, int32(0))
	f.Add(with(func(c *policyChoices) { c.fromIssue = true }), ns, "default-x9k2p", "", "", "", "", "", created, ttl-1)
	// Expiring TTL after creation, then at the edge of the minute of skew, and a second past it.
	for _, after := range []int32{ttl, ttl + 60, ttl + 61} {
		f.Add(with(func(c *policyChoices) { c.relativeExpiration = true }), ns, "bootstrap-token-abc123", tokenType, "true", "karpenter.sh/v1", "NodeClaim", values, created, after)
	}
	f.Add(token.pack(), ns, "bootstrap-token-abc123", tokenType, "true", "karpenter.sh/v1", "NodeClaim",
		"abc123|0123456789abcdef|2999-01-01T00:00:00Z|true|"+bootstraptoken.Group+"|", created, int32(0))
	f.Add(with(func(c *policyChoices) { c.present = 0b1011111 }), ns, "bootstrap-token-abc123", tokenType, "true", "karpenter.sh/v1", "NodeClaim",
		"abc123|0123456789abcdef|2026-12-07T13:01:00Z|true|"+bootstraptoken.Group+",system:masters|usage-bootstrap-signing", created, int32(0))
	f.Add(with(func(c *policyChoices) { c.operation, c.owners, c.present = 2, 2, 0b111111 }), ns, "bootstrap-token-abc123", tokenType, "true", "karpenter.sh/v1", "NodeClaim", values, created, int32(0))
	f.Add(with(func(c *policyChoices) { c.owners, c.present, c.immutable = 0, 0, true }), ns, keySecretName, string(corev1.SecretTypeOpaque), "", "", "", "", created, int32(0))
	f.Add(with(func(c *policyChoices) { c.operation, c.asNodeIdentity, c.owners, c.present = 1, false, 0, 0 }), ns, "karpenter-cert", string(corev1.SecretTypeTLS), "", "", "", "", created, int32(0))
	f.Fuzz(func(t *testing.T, packed []byte, namespace, name, secretType, label, ownerAPIVersion, ownerKind, values string, createdAt int64, after int32) {
		choices := unpackPolicyChoices(packed)
		// Times the API server writes: from 1970 to the year 9000, to the second.
		createdAt = min(max(createdAt, 0), time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
		now := time.Unix(createdAt, 0).UTC()
		var secret *corev1.Secret
		if choices.fromIssue {
			nodeClaim := &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
				Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now),
			}}
			// Issue makes a token only until TTL after the NodeClaim's creation.
			now = now.Add(time.Duration(int64(after)&0x7fffffff%int64(ttl)) * time.Second)
			secret = bootstraptoken.Key(strings.Repeat("k", bootstraptoken.KeySize)).TokenSecret(nodeClaim)
			namespace = secret.Namespace
		} else {
			entries := append(strings.SplitN(values, "|", 6), "", "", "", "", "", "")
			if choices.relativeExpiration {
				entries[2] = now.Add(time.Duration(after) * time.Second).Format(time.RFC3339)
			}
			secret = fuzzedSecret(namespace, name, secretType, label, choices.owners, ownerAPIVersion, ownerKind, choices.present,
				entries[:5], entries[5], choices.immutable)
		}
		asStored(secret, now)

		username := "kubernetes-admin"
		if choices.asNodeIdentity {
			username = nodeIdentityUser
		}
		request := chartrender.Request{
			Resource:  schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
			Kind:      schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
			Namespace: namespace, Name: secret.Name,
			User: &user.DefaultInfo{Name: username, Groups: []string{"system:authenticated"}},
		}
		var allowed bool
		switch choices.operation % 3 {
		case 0:
			request.Operation, request.Object = admission.Create, secret
			allowed = mayCreate(namespace, secret, now)
		case 1:
			request.Operation, request.Object, request.OldObject = admission.Update, secret, secret
		default:
			request.Operation, request.OldObject = admission.Delete, secret
			allowed = isToken(namespace, secret)
		}
		allowed = allowed || !choices.asNodeIdentity
		err := chartrender.AdmitAll(context.Background(), policies, request)
		switch {
		case choices.fromIssue && choices.asNodeIdentity && request.Operation == admission.Create && err != nil:
			t.Fatalf("the token Issue creates at %s was refused: %v\n%s", now, err, dataOf(secret))
		case allowed && err != nil:
			t.Fatalf("%s of Secret %s/%s by %s refused, though the reference allows it: %v\n%s", request.Operation, namespace, secret.Name, username, err, dataOf(secret))
		case !allowed && err == nil:
			t.Fatalf("%s of Secret %s/%s (type %q, labels %v, owners %v, immutable %v, created %s) by %s admitted, though the reference refuses it\n%s",
				request.Operation, namespace, secret.Name, secret.Type, secret.Labels, secret.OwnerReferences, secret.Immutable != nil, now, username, dataOf(secret))
		}
	})
}

// policyChoices are a fuzzed request's yes-or-no and small choices, packed into bytes: the
// operation (CREATE, UPDATE, DELETE), whether the node identity component or an administrator
// makes it, whether the Secret is the one Issue makes, immutable, and expires after seconds from
// its creation rather than at the raw time; how many owner references it has, and which entries
// (a bit each of tokenDataKeys, then the extra entry).
type policyChoices struct {
	operation, owners, present                               uint8
	asNodeIdentity, fromIssue, immutable, relativeExpiration bool
}

func (c policyChoices) pack() []byte {
	flag := func(b bool, at int) byte {
		if b {
			return 1 << at
		}
		return 0
	}
	return []byte{
		c.operation&0x3 | flag(c.asNodeIdentity, 2) | flag(c.fromIssue, 3) | flag(c.immutable, 4) | flag(c.relativeExpiration, 5),
		c.owners, c.present,
	}
}

func unpackPolicyChoices(packed []byte) policyChoices {
	b := append(slices.Clone(packed), make([]byte, 3)...)
	return policyChoices{
		operation: b[0] & 0x3, asNodeIdentity: b[0]&(1<<2) != 0, fromIssue: b[0]&(1<<3) != 0, immutable: b[0]&(1<<4) != 0,
		relativeExpiration: b[0]&(1<<5) != 0, owners: b[1], present: b[2],
	}
}

// mayCreate is the reference: the node identity component may create its key, immutable, and
// tokens as Issue makes them, expiring at most TTL and a minute of clocks' skew after the API
// server creates them.
func mayCreate(namespace string, secret *corev1.Secret, created time.Time) bool {
	if namespace == chartrender.Namespace && secret.Name == keySecretName && secret.Type == corev1.SecretTypeOpaque &&
		secret.Immutable != nil && *secret.Immutable {
		return true
	}
	// An expiration is compared as written, YYYYMMDDhhmmss, whose order is the times' (a date
	// that is no date, 2026-13-45, kube-apiserver takes for an expired token).
	expiration := string(secret.Data[bootstrapapi.BootstrapTokenExpirationKey])
	latest := created.Add(bootstraptoken.TTL + time.Minute).Format("20060102150405")
	return isToken(namespace, secret) && tokenExpiration.MatchString(expiration) &&
		strings.NewReplacer("-", "", "T", "", ":", "", "Z", "").Replace(expiration) <= latest
}

// isToken says whether a Secret is a token of the shape Issue gives it: in kube-system, of the
// bootstrap token type and name, labelled, owned by one NodeClaim alone, for authentication only
// (the entries kube-apiserver reads and no usage-bootstrap-signing), in Group alone.
func isToken(namespace string, secret *corev1.Secret) bool {
	owners := secret.OwnerReferences
	keys := slices.Collect(maps.Keys(secret.Data))
	usage := string(secret.Data[bootstrapapi.BootstrapTokenUsageAuthentication])
	return namespace == bootstraptoken.Namespace && secret.Type == bootstrapapi.SecretTypeBootstrapToken && tokenSecretName.MatchString(secret.Name) &&
		secret.Labels[bootstraptoken.LabelNodeClaimToken] == "true" &&
		len(owners) == 1 && owners[0].APIVersion == "karpenter.sh/v1" && owners[0].Kind == "NodeClaim" &&
		!slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(tokenDataKeys, k) }) &&
		!slices.ContainsFunc(requiredTokenKeys, func(k string) bool { return !slices.Contains(keys, k) }) &&
		// The policy also takes the values as a kube-apiserver that decoded data for CEL would
		// show them: bytes whose base64 is "true" pass, and make a token kube-apiserver does not
		// authenticate.
		(usage == "true" || base64.StdEncoding.EncodeToString([]byte(usage)) == "true") &&
		string(secret.Data[bootstrapapi.BootstrapTokenExtraGroupsKey]) == bootstraptoken.Group
}

// fuzzedSecret builds a Secret from the fuzzer's choices: owners owner references (the first of
// the API version and kind given, the others NodeClaims), the entries of tokenDataKeys whose bit is
// set in present (values in that order, the description fixed), and extraKey on bit 6.
func fuzzedSecret(namespace, name, secretType, label string, owners uint8, ownerAPIVersion, ownerKind string, present uint8,
	values []string, extraKey string, immutable bool) *corev1.Secret {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretType(secretType),
		Data:       map[string][]byte{},
	}
	if immutable {
		secret.Immutable = &immutable
	}
	if label != "" {
		secret.Labels = map[string]string{bootstraptoken.LabelNodeClaimToken: label}
	}
	for i := range int(owners % 4) {
		owner := metav1.OwnerReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: "owner", UID: "owner-uid"}
		if i == 0 {
			owner.APIVersion, owner.Kind = ownerAPIVersion, ownerKind
		}
		secret.OwnerReferences = append(secret.OwnerReferences, owner)
	}
	for i, key := range tokenDataKeys {
		if present&(1<<i) == 0 {
			continue
		}
		value := "kubelet TLS bootstrap"
		if i < len(values) {
			value = values[i]
		}
		secret.Data[key] = []byte(value)
	}
	if present&(1<<6) != 0 && extraKey != "" {
		secret.Data[extraKey] = []byte("x")
	}
	return secret
}

// asStored turns a Secret as a client sends it into what admission sees: stringData merged into
// data (the API's conversion), the creation time the API server's, to the second.
func asStored(secret *corev1.Secret, now time.Time) {
	if secret.Data == nil && len(secret.StringData) > 0 {
		secret.Data = map[string][]byte{}
	}
	for key, value := range secret.StringData {
		secret.Data[key] = []byte(value)
	}
	secret.StringData = nil
	secret.CreationTimestamp = metav1.NewTime(now)
}

func dataOf(secret *corev1.Secret) string {
	var entries []string
	for _, key := range slices.Sorted(maps.Keys(secret.Data)) {
		if key != bootstrapapi.BootstrapTokenSecretKey {
			entries = append(entries, key+"="+string(secret.Data[key]))
		}
	}
	return strings.Join(entries, "\n")
}
