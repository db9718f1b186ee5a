package e2e_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
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

// sizingDecision reads a SizingDecision event's message: the ceiling's plan and price and the
// fleets; nextCeiling the next cheaper or dearer ceiling's plan and price.
var (
	sizingDecision = regexp.MustCompile(`^The sizing policy offered NodePool \S+ plans up to (\S+) \(\$([0-9.]+)/h\) for \d+ pending pods.*: ` +
		`expected fleet \$([0-9.]+)/h on \d+ nodes, cheapest fleet \$([0-9.]+)/h on \d+ nodes`)
	nextCeiling = regexp.MustCompile(`; next (cheaper|dearer) ceiling (\S+) \(\$([0-9.]+)/h\)`)
)

// expectSizingDecisions checks that each of the fixture's NodeClaims has an event saying what
// the sizing policy offered its NodePool, at the prices of the catalogue Linode serves: the
// ceiling's, and those of the plans next to it, and that the NodeClaim's plan is within it.
func expectSizingDecisions(ctx context.Context, f *framework.Fixture) {
	GinkgoHelper()
	types, err := cluster.Emulator.NewClient().ListTypes(ctx, nil)
	Expect(err).NotTo(HaveOccurred())
	catalogue := map[string]string{}
	for _, t := range types {
		hourly := t.Price.Hourly
		if i := slices.IndexFunc(t.RegionPrices, func(p linodego.LinodeRegionPrice) bool { return p.ID == cluster.Region() }); i >= 0 {
			hourly = t.RegionPrices[i].Hourly
		}
		catalogue[t.ID] = fmt.Sprintf("%.4f", hourly)
	}
	price := func(amount string) float64 {
		value, err := strconv.ParseFloat(amount, 64)
		Expect(err).NotTo(HaveOccurred())
		return value
	}
	nodeClaims := f.NodeClaims(ctx)
	Expect(nodeClaims).NotTo(BeEmpty())
	for _, nodeClaim := range nodeClaims {
		var message string
		Eventually(func(g Gomega) {
			var events corev1.EventList
			g.Expect(kube.List(ctx, &events)).To(Succeed())
			i := slices.IndexFunc(events.Items, func(e corev1.Event) bool {
				return e.InvolvedObject.Kind == "NodeClaim" && e.InvolvedObject.Name == nodeClaim.Name && e.Reason == "SizingDecision"
			})
			g.Expect(i).To(BeNumerically(">=", 0), "no SizingDecision event on NodeClaim %s", nodeClaim.Name)
			message = events.Items[i].Message
		}).WithContext(ctx).Should(Succeed())
		fields := sizingDecision.FindStringSubmatch(message)
		Expect(fields).NotTo(BeNil(), message)
		ceiling, ceilingPrice, expected, cheapest := fields[1], fields[2], fields[3], fields[4]
		Expect(catalogue).To(HaveKeyWithValue(ceiling, ceilingPrice), "the ceiling's price: %s", message)
		plan := nodeClaim.Labels[corev1.LabelInstanceTypeStable]
		Expect(catalogue).To(HaveKey(plan))
		Expect(price(catalogue[plan])).To(BeNumerically("<=", price(ceilingPrice)), "NodeClaim %s's plan %s is within the ceiling: %s", nodeClaim.Name, plan, message)
		Expect(price(expected)).To(BeNumerically(">=", price(catalogue[plan])), "the expected fleet holds the NodeClaim: %s", message)
		Expect(price(cheapest)).To(BeNumerically("<=", price(expected)), message)
		next := nextCeiling.FindAllStringSubmatch(message, -1)
		Expect(next).To(ContainElement(HaveExactElements(Not(BeEmpty()), "dearer", Not(BeEmpty()), Not(BeEmpty()))), "a dearer plan than the ceiling is named: %s", message)
		for _, alternative := range next {
			Expect(catalogue).To(HaveKeyWithValue(alternative[2], alternative[3]), "the next %s ceiling's price: %s", alternative[1], message)
			if alternative[1] == "cheaper" {
				Expect(price(alternative[3])).To(BeNumerically("<", price(ceilingPrice)), message)
			} else {
				Expect(price(alternative[3])).To(BeNumerically(">", price(ceilingPrice)), message)
			}
		}
	}
}
