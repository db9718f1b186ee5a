package nodeprovider

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Linode tags the provider writes on every pool and Linode it launches. They are how the
// provider recognises its own resources (garbage collection touches nothing without the
// cluster tag) and how a retried Create finds what an interrupted one launched.
const (
	TagKeyCluster    = "karpenter.sh/cluster"
	TagKeyLKECluster = "karpenter.sh/lke-cluster"
	TagKeyNodeClaim  = "karpenter.sh/nodeclaim"
	TagKeyNodePool   = "karpenter.sh/nodepool"
)

// MaxTagLength is Linode's limit on a tag's length.
const MaxTagLength = 50

// ClusterTag marks a resource as launched by the provider for the named cluster.
func ClusterTag(clusterName string) string { return Tag(TagKeyCluster, clusterName) }

// LKEClusterTag marks an LKE pool as launched by the provider into the LKE cluster with the id:
// unlike the cluster's label, the id never changes, so a renamed cluster keeps its pools.
func LKEClusterTag(clusterID int) string { return Tag(TagKeyLKECluster, strconv.Itoa(clusterID)) }

// NodeClaimTag names the NodeClaim a resource was launched for.
func NodeClaimTag(nodeClaimName string) string { return Tag(TagKeyNodeClaim, nodeClaimName) }

// NodePoolTag names the NodePool a resource was launched for.
func NodePoolTag(nodePoolName string) string { return Tag(TagKeyNodePool, nodePoolName) }

// Tag formats key=value as a Linode tag. A value too long for Linode's 50-character limit keeps
// its start and ends in a hash of the whole value, so the tag stays unique and the same value
// always gives the same tag; compare tags, not values read back from them.
func Tag(key, value string) string {
	tag := key + "=" + value
	if len(tag) <= MaxTagLength {
		return tag
	}
	sum := sha256.Sum256([]byte(value))
	suffix := "~" + hex.EncodeToString(sum[:])[:10]
	// The cut falls between characters, not inside one: Linode refuses a tag that is not UTF-8.
	kept := tag[:MaxTagLength-len(suffix)]
	for !utf8.ValidString(kept) {
		kept = kept[:len(kept)-1]
	}
	return kept + suffix
}

// TagValue returns the value of the first tag with the key, and whether there was one. A value
// that was shortened to fit (see Tag) comes back shortened.
func TagValue(tags []string, key string) (string, bool) {
	for _, tag := range tags {
		if value, ok := strings.CutPrefix(tag, key+"="); ok {
			return value, true
		}
	}
	return "", false
}
