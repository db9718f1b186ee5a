package nodeprovider_test

import (
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

func TestTagsFitLinodesLimitAndStayDistinct(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, tag, want string
	}{
		{"short value kept whole", nodeprovider.NodeClaimTag("default-x7k2p"), "karpenter.sh/nodeclaim=default-x7k2p"},
		{"exactly 50 characters kept whole", nodeprovider.NodePoolTag(strings.Repeat("b", 27)), "karpenter.sh/nodepool=" + strings.Repeat("b", 27)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tag != tc.want {
				t.Fatalf("got %q, want %q", tc.tag, tc.want)
			}
		})
	}
	first, second := nodeprovider.NodeClaimTag(long+"-abcde"), nodeprovider.NodeClaimTag(long+"-vwxyz")
	if len(first) != nodeprovider.MaxTagLength || len(second) != nodeprovider.MaxTagLength {
		t.Fatalf("long tags are %d and %d characters, want %d", len(first), len(second), nodeprovider.MaxTagLength)
	}
	if first == second {
		t.Fatalf("two NodeClaims with a long common prefix share the tag %q", first)
	}
	if again := nodeprovider.NodeClaimTag(long + "-abcde"); again != first {
		t.Fatalf("the same name gave %q, then %q", first, again)
	}
}

func TestProviderIDRoundTrip(t *testing.T) {
	if got := nodeprovider.ProviderID(12345); got != "linode://12345" {
		t.Fatalf("ProviderID(12345) = %q", got)
	}
	for _, bad := range []string{"", "linode://", "aws:///i-123", "linode://-4", "linode://12a"} {
		if _, err := nodeprovider.ParseProviderID(bad); err == nil {
			t.Errorf("ParseProviderID(%q) accepted a malformed provider ID", bad)
		}
	}
	if id, err := nodeprovider.ParseProviderID("linode://987"); err != nil || id != 987 {
		t.Fatalf("ParseProviderID(linode://987) = %d, %v", id, err)
	}
}
