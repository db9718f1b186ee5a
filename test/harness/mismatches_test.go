package harness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

func TestCountMismatches(t *testing.T) {
	claim := func(name string, linode int) karpv1.NodeClaim {
		c := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if linode != 0 {
			c.Status.ProviderID = nodeprovider.ProviderID(linode)
		}
		return c
	}
	node := func(name string, linode int) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: nodeprovider.ProviderID(linode)}}
	}
	pool := func(id int, claim string) emulator.PoolInfo {
		return emulator.PoolInfo{ID: id, Tags: []string{nodeprovider.NodeClaimTag(claim)}}
	}
	linode := func(id, pool int) emulator.InstanceInfo { return emulator.InstanceInfo{ID: id, LKEPoolID: pool} }
	for _, tc := range []struct {
		name                  string
		claims                []karpv1.NodeClaim
		nodes                 []corev1.Node
		pools                 []emulator.PoolInfo
		linodes               []emulator.InstanceInfo
		wantLeaked, wantDupes int
	}{
		{name: "one Linode and one Node per NodeClaim",
			claims: []karpv1.NodeClaim{claim("a", 1), claim("b", 2)}, nodes: []corev1.Node{node("n1", 1), node("n2", 2)},
			pools: []emulator.PoolInfo{pool(10, "a"), pool(20, "b")}, linodes: []emulator.InstanceInfo{linode(1, 10), linode(2, 20)}},
		{name: "a launch in flight: the pool's Linode before the NodeClaim has its provider ID",
			claims: []karpv1.NodeClaim{claim("a", 0)}, pools: []emulator.PoolInfo{pool(10, "a")}, linodes: []emulator.InstanceInfo{linode(1, 10)}},
		{name: "a Linode in a pool no NodeClaim tags",
			claims: []karpv1.NodeClaim{claim("a", 1)}, nodes: []corev1.Node{node("n1", 1), node("n9", 9)},
			pools: []emulator.PoolInfo{pool(10, "a"), pool(90, "gone")}, linodes: []emulator.InstanceInfo{linode(1, 10), linode(9, 90)},
			wantLeaked: 1},
		{name: "a pool of two Linodes for one NodeClaim",
			claims: []karpv1.NodeClaim{claim("a", 1)}, nodes: []corev1.Node{node("n1", 1), node("n2", 2)},
			pools: []emulator.PoolInfo{pool(10, "a")}, linodes: []emulator.InstanceInfo{linode(1, 10), linode(2, 10)},
			wantDupes: 1},
		{name: "two Nodes for one Linode",
			claims: []karpv1.NodeClaim{claim("a", 1)}, nodes: []corev1.Node{node("n1", 1), node("n1-again", 1)},
			pools: []emulator.PoolInfo{pool(10, "a")}, linodes: []emulator.InstanceInfo{linode(1, 10)},
			wantDupes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaked, dupes := countMismatches(tc.claims, tc.nodes, tc.pools, tc.linodes)
			if leaked != tc.wantLeaked || dupes != tc.wantDupes {
				t.Errorf("leaked %d, duplicates %d; want %d, %d", leaked, dupes, tc.wantLeaked, tc.wantDupes)
			}
		})
	}
}
