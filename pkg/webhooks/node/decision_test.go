package node_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

func TestParseLKENodeName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want node.LKENodeName
		ok   bool
	}{
		{"lke123-456-0a1b2c3d", node.LKENodeName{ClusterID: 123, PoolID: 456}, true},
		{"lke1-2-f", node.LKENodeName{ClusterID: 1, PoolID: 2}, true},
		{"lke123-456", node.LKENodeName{}, false},
		{"lke123-456-", node.LKENodeName{}, false},
		{"lke-123-456-abc", node.LKENodeName{}, false},
		{"lke0-456-abc", node.LKENodeName{}, false},
		{"lke+12-456-abc", node.LKENodeName{}, false},
		{"lke12-456-ABC", node.LKENodeName{}, false},
		{"lke12-456-ab-cd", node.LKENodeName{}, false},
		{"lke12x-456-abc", node.LKENodeName{}, false},
		{"ip-10-0-0-1", node.LKENodeName{}, false},
		{"", node.LKENodeName{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := node.ParseLKENodeName(tc.name)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("ParseLKENodeName(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
			}
		})
	}
}

var (
	ciliumStartup = corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	gpuStartup    = corev1.Taint{Key: "example.com/gpu-driver", Effect: corev1.TaintEffectNoExecute}
	poolTaint     = corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	// linodeValued is a taint Linode refuses on a pool, for its value.
	linodeValued = corev1.Taint{Key: "example.com/provider", Value: "linode.com", Effect: corev1.TaintEffectNoSchedule}
)

func TestTaintsToAdd(t *testing.T) {
	now := metav1.Now()
	registered := &karpv1.NodeClaim{}
	registered.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	launched := &karpv1.NodeClaim{}
	launched.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	launched.StatusConditions().SetUnknown(karpv1.ConditionTypeRegistered)

	for _, tc := range []struct {
		name       string
		nodeTaints []corev1.Taint
		nodeLabels map[string]string
		taints     []corev1.Taint
		startup    []corev1.Taint
		status     karpv1.NodeClaimStatus
		deleting   bool
		want       []corev1.Taint
	}{
		{name: "a fresh node gets the unregistered taint and the start-up taints",
			startup: []corev1.Taint{ciliumStartup, gpuStartup}, status: launched.Status,
			want: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, ciliumStartup, gpuStartup}},
		{name: "the pool's taints stay and are not repeated",
			nodeTaints: []corev1.Taint{poolTaint}, startup: []corev1.Taint{ciliumStartup},
			want: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, ciliumStartup}},
		{name: "the NodeClaim's taints the pool does not carry are added",
			nodeTaints: []corev1.Taint{poolTaint}, taints: []corev1.Taint{poolTaint, linodeValued}, startup: []corev1.Taint{ciliumStartup},
			want: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, linodeValued, ciliumStartup}},
		{name: "taints the node already has are not duplicated, whatever their value",
			nodeTaints: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, {Key: ciliumStartup.Key, Value: "other", Effect: ciliumStartup.Effect}},
			startup:    []corev1.Taint{ciliumStartup, gpuStartup},
			want:       []corev1.Taint{gpuStartup}},
		{name: "a start-up taint listed twice is added once",
			startup: []corev1.Taint{ciliumStartup, ciliumStartup},
			want:    []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, ciliumStartup}},
		{name: "a start-up taint with another effect is another taint",
			startup: []corev1.Taint{ciliumStartup, {Key: ciliumStartup.Key, Effect: corev1.TaintEffectNoExecute}},
			want:    []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, ciliumStartup, {Key: ciliumStartup.Key, Effect: corev1.TaintEffectNoExecute}}},
		{name: "a node that opts out of taint syncing gets only the unregistered taint",
			nodeLabels: map[string]string{karpv1.NodeDoNotSyncTaintsLabelKey: "true"}, taints: []corev1.Taint{linodeValued}, startup: []corev1.Taint{ciliumStartup},
			want: []corev1.Taint{karpv1.UnregisteredNoExecuteTaint}},
		{name: "a node of a registered NodeClaim is left alone: core would never lift the taint",
			startup: []corev1.Taint{ciliumStartup}, status: registered.Status},
		{name: "a node already labelled registered is left alone",
			nodeLabels: map[string]string{karpv1.NodeRegisteredLabelKey: "true"}, startup: []corev1.Taint{ciliumStartup}},
		{name: "a node of a NodeClaim being deleted is left alone",
			startup: []corev1.Taint{ciliumStartup}, deleting: true},
		{name: "a node that already has every taint needs nothing",
			nodeTaints: []corev1.Taint{poolTaint, karpv1.UnregisteredNoExecuteTaint, ciliumStartup}, startup: []corev1.Taint{ciliumStartup}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.nodeLabels}, Spec: corev1.NodeSpec{Taints: tc.nodeTaints}}
			nc := &karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{Taints: tc.taints, StartupTaints: tc.startup}, Status: tc.status}
			if tc.deleting {
				nc.DeletionTimestamp = &now
			}
			got := node.TaintsToAdd(n, nc)
			if len(got) != len(tc.want) {
				t.Fatalf("TaintsToAdd = %v, want %v", got, tc.want)
			}
			for i := range got {
				if !got[i].MatchTaint(&tc.want[i]) || got[i].Value != tc.want[i].Value {
					t.Fatalf("TaintsToAdd = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestTaintPatch(t *testing.T) {
	taints := []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, ciliumStartup}
	untainted := node.TaintPatch(&corev1.Node{}, taints)
	if len(untainted) != 1 || untainted[0].Operation != "add" || untainted[0].Path != "/spec/taints" {
		t.Fatalf("patch of an untainted node = %+v, want one add of /spec/taints", untainted)
	}
	tainted := node.TaintPatch(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{poolTaint}}}, taints)
	if len(tainted) != 2 || tainted[0].Path != "/spec/taints/-" || tainted[1].Path != "/spec/taints/-" {
		t.Fatalf("patch of a tainted node = %+v, want two appends to /spec/taints", tainted)
	}
}

// BenchmarkAdmissionDecision measures the work the webhook does for one of our nodes once its
// NodeClaim is found: read the name, choose the taints, build the patch.
func BenchmarkAdmissionDecision(b *testing.B) {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "lke123456-7890123-0a1b2c3d", Labels: map[string]string{karpv1.NodePoolLabelKey: "default"}},
		Spec:       corev1.NodeSpec{ProviderID: "linode://98765432", Taints: []corev1.Taint{poolTaint}},
	}
	nc := &karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{StartupTaints: []corev1.Taint{ciliumStartup}}}
	nc.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	b.ReportAllocs()
	for b.Loop() {
		name, ok := node.ParseLKENodeName(n.Name)
		if !ok || name.ClusterID != 123456 {
			b.Fatal("our node was not recognised")
		}
		if patch := node.TaintPatch(n, node.TaintsToAdd(n, nc)); len(patch) != 2 {
			b.Fatalf("patch has %d operations, want 2", len(patch))
		}
	}
}

// BenchmarkForeignNode measures what a node that is not ours costs: reading its name.
func BenchmarkForeignNode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := node.ParseLKENodeName("ip-10-0-12-34.us-ord.compute.internal"); ok {
			b.Fatal("a foreign node was recognised")
		}
	}
}
