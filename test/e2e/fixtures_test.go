package e2e_test

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

// newFixture is a spec's LinodeNodeClass, with the defaults LKE mode needs, and NodePool
// (package framework).
func newFixture(prefix string) *framework.Fixture {
	return framework.NewFixture(cluster, prefix, v1.LinodeNodeClassSpec{})
}

// plans lists the plans (instance types) of the nodes, sorted.
func plans(nodes []corev1.Node) []string {
	var out []string
	for _, node := range nodes {
		out = append(out, node.Labels[corev1.LabelInstanceTypeStable])
	}
	slices.Sort(out)
	return out
}

// cpuOf adds up the nodes' CPU capacity.
func cpuOf(nodes []corev1.Node) int64 {
	var total int64
	for _, node := range nodes {
		total += node.Status.Capacity.Cpu().Value()
	}
	return total
}

// consistently is a short Consistently, for "this does not happen".
func consistently(ctx context.Context, actual any) AsyncAssertion {
	return Consistently(actual).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(500 * time.Millisecond)
}
