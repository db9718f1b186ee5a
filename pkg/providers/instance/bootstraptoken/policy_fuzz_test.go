package bootstraptoken

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
// creates it, the operation and the user; or, fromIssue, a NodeClaim (name, creation) and how long
// after its creation Issue makes its token.
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
	expiration := func(after time.Duration) string {
		return time.Unix(created, 0).Add(after).UTC().Format(time.RFC3339)
	}
	// Arguments: fromIssue, operation, asNodeIdentity, namespace, name, type, label, owners, owner
	// API version, owner kind, present entries (a bit each, in tokenDataKeys order, then extraKey),
	// token id, token secret, expiration, usage, groups, extra key, immutable, created, Issue's delay.
	f.Add(true, uint8(0), true, "kube-system", "node-a", "", "", uint8(1), "", "", uint8(0), "", "", "", "", "", "", false, created, uint32(0))
	f.Add(true, uint8(0), true, "kube-system", "default-x9k2p", "", "", uint8(1), "", "", uint8(0), "", "", "", "", "", "", false, created, uint32(1199))
	f.Add(false, uint8(0), true, "kube-system", "bootstrap-token-abc123", string(bootstrapapi.SecretTypeBootstrapToken), "true", uint8(1), "karpenter.sh/v1", "NodeClaim",
		uint8(0b011111), "abc123", "0123456789abcdef", expiration(TTL), "true", Group, "", false, created, uint32(0))
	f.Add(false, uint8(0), true, "kube-system", "bootstrap-token-abc123", string(bootstrapapi.SecretTypeBootstrapToken), "true", uint8(1), "karpenter.sh/v1", "NodeClaim",
		uint8(0b011111), "abc123", "0123456789abcdef", "2999-01-01T00:00:00Z", "true", Group, "", false, created, uint32(0))
	f.Add(false, uint8(0), true, "kube-system", "bootstrap-token-abc123", string(bootstrapapi.SecretTypeBootstrapToken), "true", uint8(1), "karpenter.sh/v1", "NodeClaim",
		uint8(0b1011111), "abc123", "0123456789abcdef", expiration(time.Minute), "true", Group+",system:masters", "usage-bootstrap-signing", false, created, uint32(0))
	f.Add(false, uint8(2), true, "kube-system", "bootstrap-token-abc123", string(bootstrapapi.SecretTypeBootstrapToken), "true", uint8(2), "karpenter.sh/v1", "NodeClaim",
		uint8(0b111111), "abc123", "0123456789abcdef", expiration(TTL), "true", Group, "", false, created, uint32(0))
	f.Add(false, uint8(0), true, "kube-system", keySecretName, string(corev1.SecretTypeOpaque), "", uint8(0), "", "",
		uint8(0), "", "", "", "", "", "", true, created, uint32(0))
	f.Add(false, uint8(1), false, "kube-system", "karpenter-cert", string(corev1.SecretTypeTLS), "", uint8(0), "", "",
		uint8(0), "", "", "", "", "", "", false, created, uint32(0))
	f.Fuzz(func(t *testing.T, fromIssue bool, operation uint8, asNodeIdentity bool, namespace, name, secretType, label string,
		owners uint8, ownerAPIVersion, ownerKind string, present uint8, tokenID, tokenSecretValue, expires, usage, groups, extraKey string,
		immutable bool, createdAt int64, issueDelay uint32) {
		// Times the API server writes: from 1970 to the year 9000, to the second.
		createdAt = min(max(createdAt, 0), time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
		now := time.Unix(createdAt, 0).UTC()
		var secret *corev1.Secret
		if fromIssue {
			nodeClaim := &karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
				Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now),
			}}
			// Issue makes a token only until TTL after the NodeClaim's creation.
			now = now.Add(time.Duration(issueDelay%uint32(TTL/time.Second)) * time.Second)
			secret = tokenSecret(nodeClaim, Key(strings.Repeat("k", keySize)), nodeClaim.CreationTimestamp.Add(TTL))
			namespace = secret.Namespace
		} else {
			secret = fuzzedSecret(namespace, name, secretType, label, owners, ownerAPIVersion, ownerKind, present,
				[]string{tokenID, tokenSecretValue, expires, usage, groups}, extraKey, immutable)
		}
		asStored(secret, now)

		username := "kubernetes-admin"
		if asNodeIdentity {
			username = nodeIdentityUser
		}
		request := chartrender.Request{
			Resource:  schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
			Kind:      schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
			Namespace: namespace, Name: secret.Name,
			User: &user.DefaultInfo{Name: username, Groups: []string{"system:authenticated"}},
		}
		var allowed bool
		switch operation % 3 {
		case 0:
			request.Operation, request.Object = admission.Create, secret
			allowed = mayCreate(namespace, secret, now)
		case 1:
			request.Operation, request.Object, request.OldObject = admission.Update, secret, secret
		default:
			request.Operation, request.OldObject = admission.Delete, secret
			allowed = isToken(namespace, secret)
		}
		allowed = allowed || !asNodeIdentity
		err := chartrender.AdmitAll(context.Background(), policies, request)
		switch {
		case fromIssue && asNodeIdentity && request.Operation == admission.Create && err != nil:
			t.Fatalf("the token Issue creates at %s was refused: %v\n%s", now, err, dataOf(secret))
		case allowed && err != nil:
			t.Fatalf("%s of Secret %s/%s by %s refused, though the reference allows it: %v\n%s", request.Operation, namespace, secret.Name, username, err, dataOf(secret))
		case !allowed && err == nil:
			t.Fatalf("%s of Secret %s/%s (type %q, labels %v, owners %v, immutable %v, created %s) by %s admitted, though the reference refuses it\n%s",
				request.Operation, namespace, secret.Name, secret.Type, secret.Labels, secret.OwnerReferences, immutable, now, username, dataOf(secret))
		}
	})
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
	latest := created.Add(TTL + time.Minute).Format("20060102150405")
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
	return namespace == Namespace && secret.Type == bootstrapapi.SecretTypeBootstrapToken && tokenSecretName.MatchString(secret.Name) &&
		secret.Labels[LabelNodeClaimToken] == "true" &&
		len(owners) == 1 && owners[0].APIVersion == "karpenter.sh/v1" && owners[0].Kind == "NodeClaim" &&
		!slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(tokenDataKeys, k) }) &&
		!slices.ContainsFunc(requiredTokenKeys, func(k string) bool { return !slices.Contains(keys, k) }) &&
		// The policy also takes the values as a kube-apiserver that decoded data for CEL would
		// show them: bytes whose base64 is "true" pass, and make a token kube-apiserver does not
		// authenticate.
		(usage == "true" || base64.StdEncoding.EncodeToString([]byte(usage)) == "true") &&
		string(secret.Data[bootstrapapi.BootstrapTokenExtraGroupsKey]) == Group
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
		secret.Labels = map[string]string{LabelNodeClaimToken: label}
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
