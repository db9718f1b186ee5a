package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

func TestSchedulingThroughput(t *testing.T) {
	rows, err := SchedulingThroughput(context.Background(), []int{60})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	row := rows[0]
	if row.Value <= 0 || row.Kwok == nil || *row.Kwok <= 0 {
		t.Fatalf("pods/s = %v, kwok %v; want both > 0", row.Value, row.Kwok)
	}
	if row.Unit != "pods/s" || !strings.HasPrefix(row.Metric, "60 diverse pods") {
		t.Fatalf("row = %+v", row)
	}
}

func TestDiversePods(t *testing.T) {
	pods := diversePods(64)
	if len(pods) != 64 {
		t.Fatalf("%d pods, want 64", len(pods))
	}
	again := diversePods(64)
	kinds := map[string]int{}
	uids := map[string]bool{}
	for i, pod := range pods {
		uids[string(pod.UID)] = true
		if !pod.Spec.Containers[0].Resources.Requests.Cpu().Equal(*again[i].Spec.Containers[0].Resources.Requests.Cpu()) {
			t.Fatalf("pod %d asks for %s CPU, then %s: the pods are not reproducible", i, pod.Spec.Containers[0].Resources.Requests.Cpu(), again[i].Spec.Containers[0].Resources.Requests.Cpu())
		}
		switch {
		case pod.Spec.NodeSelector[corev1.LabelArchStable] == karpv1.ArchitectureAmd64 || pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil:
			kinds["node"]++
		case len(pod.Spec.TopologySpreadConstraints) > 0:
			kinds["spread/"+pod.Spec.TopologySpreadConstraints[0].TopologyKey]++
		case pod.Spec.Affinity != nil && pod.Spec.Affinity.PodAffinity != nil:
			kinds["affinity"]++
		case pod.Spec.Affinity != nil && pod.Spec.Affinity.PodAntiAffinity != nil:
			kinds["anti-affinity"]++
		default:
			kinds["none"]++
		}
	}
	if len(uids) != 64 {
		t.Fatalf("%d distinct UIDs, want 64", len(uids))
	}
	// 64 = 6 kinds of 10, and 4 more unconstrained.
	want := map[string]int{"none": 14, "node": 10, "spread/" + corev1.LabelTopologyZone: 10, "spread/" + corev1.LabelHostname: 10, "affinity": 10, "anti-affinity": 10}
	for kind, n := range want {
		if kinds[kind] != n {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
	}
}

func TestMedian(t *testing.T) {
	rounds := []solved{{elapsed: 3 * time.Second, nodeClaims: 3}, {elapsed: time.Second, nodeClaims: 1}, {elapsed: 2 * time.Second, nodeClaims: 2}}
	if got := median(rounds); got.nodeClaims != 2 {
		t.Fatalf("median = %+v, want the 2 s round", got)
	}
}
