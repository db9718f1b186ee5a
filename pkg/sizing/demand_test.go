package sizing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestInQueueOrder: core's queue takes pods by CPU, then memory, then age, then UID, so pods of
// workloads with the same requests interleave as they were created; pods still to come follow.
func TestInQueueOrder(t *testing.T) {
	shape := func(cpu, memory string) *podShape {
		return shapeOf(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}}}}}, false)
	}
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	type pod struct {
		group  string
		second int
		uid    string
	}
	for _, tc := range []struct {
		name   string
		pods   []pod
		coming map[string]int
		want   string
	}{
		{
			name: "more CPU first, then more memory, whatever the age",
			pods: []pod{{group: "small", second: 0, uid: "a"}, {group: "big", second: 5, uid: "b"}, {group: "memory", second: 1, uid: "c"}},
			want: "big×1 memory×1 small×1",
		},
		{
			name: "the same requests: oldest first, then by UID within a second",
			pods: []pod{{group: "web", second: 1, uid: "d"}, {group: "spread", second: 0, uid: "c"}, {group: "web", second: 0, uid: "b"}, {group: "spread", second: 1, uid: "a"}},
			want: "web×1 spread×2 web×1",
		},
		{
			name:   "pods still coming end their requests' run",
			pods:   []pod{{group: "web", second: 3, uid: "a"}, {group: "spread", second: 4, uid: "b"}, {group: "big", second: 9, uid: "c"}},
			coming: map[string]int{"web": 5, "big": 2},
			want:   "big×3 web×1 spread×1 web×5",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shapes := map[string]*podShape{"web": shape("500m", "1Gi"), "spread": shape("500m", "1Gi"), "small": shape("250m", "4Gi"), "memory": shape("500m", "2Gi"), "big": shape("2", "1Gi")}
			groups := map[*podGroup]string{}
			byName := map[string]*podGroup{}
			var queued []queuedPod
			var ordered []*podGroup
			for _, p := range tc.pods {
				g, ok := byName[p.group]
				if !ok {
					g = &podGroup{shape: shapes[p.group]}
					byName[p.group], groups[g] = g, p.group
					ordered = append(ordered, g)
				}
				g.pods++
				queued = append(queued, queuedPod{group: g, pod: &pendingPod{
					key:     types.NamespacedName{Name: p.uid},
					created: metav1.NewTime(start.Add(time.Duration(p.second) * time.Second)),
					uid:     types.UID(p.uid),
				}})
			}
			for name, n := range tc.coming {
				byName[name].pods += n
				byName[name].coming += n
			}
			var got []string
			for _, r := range inQueueOrder(queued, ordered) {
				got = append(got, fmt.Sprintf("%s×%d", groups[r.of], r.pods))
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("queue = %s, want %s", strings.Join(got, " "), tc.want)
			}
		})
	}
}
