package nodeprovider_test

import (
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// TestANodeBelongsToTheNodeClaimItsTagNames: a node is a NodeClaim's only when the one NodeClaim
// tag it carries is that NodeClaim's; long names compare by their shortened tags.
func TestANodeBelongsToTheNodeClaimItsTagNames(t *testing.T) {
	long := strings.Repeat("n", 60)
	for _, tc := range []struct {
		name, nodeClaim string
		tags            []string
		why             string
	}{
		{name: "its own tag", nodeClaim: "default-abcde", tags: []string{"team", nodeprovider.NodeClaimTag("default-abcde")}},
		{name: "its own shortened tag", nodeClaim: long + "-abcde", tags: []string{nodeprovider.NodeClaimTag(long + "-abcde")}},
		{name: "another NodeClaim's shortened tag", nodeClaim: long + "-abcde", tags: []string{nodeprovider.NodeClaimTag(long + "-vwxyz")}, why: "of another NodeClaim"},
		{name: "another NodeClaim's tag", nodeClaim: "default-abcde", tags: []string{nodeprovider.NodeClaimTag("default-vwxyz")}, why: "of another NodeClaim"},
		{name: "no NodeClaim's tag", nodeClaim: "default-abcde", tags: []string{"team"}, why: "carries no NodeClaim's tag"},
		{name: "two NodeClaims' tags, its own among them", nodeClaim: "default-abcde",
			tags: []string{nodeprovider.NodeClaimTag("default-abcde"), nodeprovider.NodeClaimTag("default-vwxyz")}, why: "several NodeClaims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &nodeprovider.Node{InstanceID: 7, Label: "node-7", Tags: tc.tags, NodeClaimTag: nodeprovider.SoleNodeClaimTag(tc.tags)}
			err := node.BelongsTo(tc.nodeClaim)
			if tc.why == "" {
				if err != nil {
					t.Fatalf("BelongsTo(%s) = %v, want nil", tc.nodeClaim, err)
				}
				return
			}
			foreign, ok := nodeprovider.AsForeignNode(err)
			if !ok || foreign.InstanceID != 7 || foreign.Label != "node-7" || !strings.Contains(foreign.Reason, tc.why) {
				t.Fatalf("BelongsTo(%s) = %v, want a ForeignNodeError for Linode 7 (node-7) because %s", tc.nodeClaim, err, tc.why)
			}
		})
	}
}

// TestOwnershipTagsFitLinodesLimit: an instance-mode cluster's ownership tag carries the
// kube-system namespace's UID, too long for a whole tag: it fits Linode's 50 characters and
// stays distinct for UIDs that share their start.
func TestOwnershipTagsFitLinodesLimit(t *testing.T) {
	first := nodeprovider.ClusterTag("0b7c4f3e-1d2a-4c5b-9e8f-7a6b5c4d3e2f")
	second := nodeprovider.ClusterTag("0b7c4f3e-1d2a-4c5b-9e8f-000000000000")
	if len(first) > nodeprovider.MaxTagLength || len(second) > nodeprovider.MaxTagLength {
		t.Fatalf("%q and %q, want at most %d characters", first, second, nodeprovider.MaxTagLength)
	}
	if first == second {
		t.Fatalf("two clusters share the ownership tag %q", first)
	}
	for _, tag := range []string{first, nodeprovider.LKEClusterTag(123456789)} {
		if !nodeprovider.IsOwnershipTag(tag) {
			t.Errorf("%q is not taken for an ownership tag", tag)
		}
	}
	if nodeprovider.IsOwnershipTag(nodeprovider.NodeClaimTag("default-abcde")) {
		t.Error("a NodeClaim's tag is taken for an ownership tag")
	}
}
