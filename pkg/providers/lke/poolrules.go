package lke

import (
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Linode's rules for the labels and taints of an LKE pool, beyond Kubernetes' own: those of
// Linode's Cloud Manager (npm @linode/validation 0.83.0, kubernetesLabelSchema and
// kubernetesTaintSchema) and of the API description (../shared/linode-api/openapi.yaml, 4.189.0,
// POST /lke/clusters/{clusterId}/pools). A label or taint either refuses is kept off the pool;
// Karpenter puts it on the node instead (poolLabels, poolTaints).

// poolNamePart is a label value, or a key or taint key without a prefix:
// alphaNumericValidCharactersRegex.
var poolNamePart = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-._]*[a-zA-Z0-9])?$`)

// poolPrefixedKey is a key with a DNS prefix: dnsKeyRegex.
var poolPrefixedKey = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-._/]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$`)

// poolTaintKey is the API description's pattern of a taint key.
var poolTaintKey = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?(/)?([A-Za-z0-9][-A-Za-z0-9_.]{1,63})?$`)

// linodeNamespaces are the namespaces no pool label key may contain, anywhere in the key.
var linodeNamespaces = []string{"kubernetes.io", "linode.com"}

const (
	maxPoolNamePart  = 63
	maxPoolLabelKey  = 128
	maxPoolKeyPrefix = 62
	maxPoolTaintKey  = 63
)

// linodeAcceptsPoolLabel reports whether Linode accepts the label on a pool ("Labels must be valid
// key-value pairs."): a key and a value, neither empty; no key containing kubernetes.io or
// linode.com; a key with a prefix of at most 62 characters and 128 in all, or one without of at
// most 63; a value of at most 63 letters, digits and . _ -, alphanumeric at both ends.
func linodeAcceptsPoolLabel(key, value string) bool {
	if key == "" || value == "" || slices.ContainsFunc(linodeNamespaces, func(namespace string) bool { return strings.Contains(key, namespace) }) {
		return false
	}
	if prefix, _, prefixed := strings.Cut(key, "/"); prefixed {
		if !poolPrefixedKey.MatchString(key) || len(key) > maxPoolLabelKey || len(prefix) > maxPoolKeyPrefix {
			return false
		}
	} else if !isPoolNamePart(key) {
		return false
	}
	return isPoolNamePart(value)
}

// linodeAcceptsPoolTaint reports whether Linode accepts the taint on a pool: a key of at most 63
// characters (the API description; Cloud Manager allows 253) that both sources' patterns accept,
// and a value, if any, of at most 63 letters, digits and . _ -, alphanumeric at both ends, other
// than "kubernetes.io" and "linode.com". A taint without a value is sent with "value": "", which
// the API description requires and documents for it (linode.PoolTaint).
func linodeAcceptsPoolTaint(taint corev1.Taint) bool {
	key := taint.Key
	if key == "" || len(key) > maxPoolTaintKey || !poolTaintKey.MatchString(key) || (!poolNamePart.MatchString(key) && !poolPrefixedKey.MatchString(key)) {
		return false
	}
	if taint.Value == "" {
		return true
	}
	return isPoolNamePart(taint.Value) && !slices.Contains(linodeNamespaces, taint.Value)
}

func isPoolNamePart(s string) bool {
	return len(s) <= maxPoolNamePart && poolNamePart.MatchString(s)
}
