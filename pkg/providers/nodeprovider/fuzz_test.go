package nodeprovider_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// FuzzProviderID: a provider ID parses only in the form the provider writes, linode://<id>, so
// that no two strings name one Linode (core matches Nodes to NodeClaims by the exact string).
func FuzzProviderID(f *testing.F) {
	for _, seed := range []string{"linode://12345", "linode://0", "linode://-1", "linode://+7", "linode://007", "linode:// 7",
		"aws:///us-east-1a/i-0abc", "linode://", "linode://9223372036854775808", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, providerID string) {
		id, err := nodeprovider.ParseProviderID(providerID)
		if err != nil {
			if !strings.Contains(err.Error(), "linode://") {
				t.Errorf("the error %q does not say what a provider ID looks like", err)
			}
			return
		}
		if id <= 0 || nodeprovider.ProviderID(id) != providerID {
			t.Errorf("%q parsed as Linode %d, whose provider ID is %q", providerID, id, nodeprovider.ProviderID(id))
		}
	})
}

// FuzzTag: a tag fits Linode's 50 characters and stays valid UTF-8; one that fits as it is
// reads back as its value; a shortened one is the same for the same value and differs for
// another.
func FuzzTag(f *testing.F) {
	f.Add(nodeprovider.TagKeyNodeClaim, "default-abcde", "default-abcdf")
	f.Add(nodeprovider.TagKeyCluster, strings.Repeat("a-very-long-cluster-name", 3), strings.Repeat("a-very-long-cluster-name", 3)+"2")
	f.Add(nodeprovider.TagKeyNodePool, "ünïcödé-"+strings.Repeat("é", 30), "ünïcödé-"+strings.Repeat("é", 31))
	f.Add(nodeprovider.TagKeyLKECluster, "", "=")
	f.Fuzz(func(t *testing.T, key, value, other string) {
		if key == "" || strings.Contains(key, "=") || len(key) > nodeprovider.MaxTagLength/2 || !utf8.ValidString(key) || !utf8.ValidString(value) {
			return // keys are the provider's own constants
		}
		tag := nodeprovider.Tag(key, value)
		if len(tag) > nodeprovider.MaxTagLength {
			t.Fatalf("Tag(%q, %q) = %q: %d bytes, more than Linode's %d", key, value, tag, len(tag), nodeprovider.MaxTagLength)
		}
		if !utf8.ValidString(tag) {
			t.Fatalf("Tag(%q, %q) = %q is not valid UTF-8", key, value, tag)
		}
		if tag != nodeprovider.Tag(key, value) {
			t.Fatalf("Tag(%q, %q) is not the same twice", key, value)
		}
		read, ok := nodeprovider.TagValue([]string{"another=tag", tag}, key)
		if !ok {
			t.Fatalf("TagValue does not find key %q in %q", key, tag)
		}
		if len(key)+1+len(value) <= nodeprovider.MaxTagLength && read != value {
			t.Fatalf("TagValue reads %q back from %q, want %q", read, tag, value)
		}
		if other != value && nodeprovider.Tag(key, other) == tag {
			t.Fatalf("values %q and %q share the tag %q", value, other, tag)
		}
		if other != key && other != "" && !strings.Contains(other, "=") {
			if _, found := nodeprovider.TagValue([]string{tag}, other); found {
				t.Fatalf("TagValue finds key %q in %q, a tag of key %q", other, tag, key)
			}
		}
	})
}
