package lke_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/examples"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	poolCreateRoute = "POST /lke/clusters/{clusterId}/pools"
	// nodeClassLabel is the label core gives a NodeClaim for its LinodeNodeClass.
	nodeClassLabel = "karpenter.k8s.linode/linodenodeclass"
)

// example is the LinodeNodeClass and NodePool of examples/<file>.
func example(t *testing.T, file string) (*v1.LinodeNodeClass, *karpv1.NodePool) {
	t.Helper()
	nodeClass, nodePool, err := examples.File(file)
	if err != nil {
		t.Fatal(err)
	}
	return nodeClass, nodePool
}

// sentBody is the body of the one request the provider sent to route.
func sentBody(t *testing.T, f *fixture, route string) map[string]any {
	t.Helper()
	sent := f.emulator.SentTo(route)
	if len(sent) != 1 {
		t.Fatalf("%d requests to %s, want 1: %v", len(sent), route, sent)
	}
	body, err := sent[0].Object()
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// expectBody compares a sent body with the one Linode's rules accept, as JSON.
func expectBody(t *testing.T, route string, got map[string]any, want string) {
	t.Helper()
	var wanted map[string]any
	if err := json.Unmarshal([]byte(want), &wanted); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wanted) {
		sent, _ := json.Marshal(got)
		t.Errorf("%s sent\n  %s\nwant\n  %s", route, sent, want)
	}
}

// jsonOf writes v as JSON, for the bodies the tests expect.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestPoolCreateSendsWhatLinodeAccepts launches the README's NodePool (examples/default.yaml) on
// the standard tier and examples/enterprise.yaml on the enterprise tier, as core's scheduler makes
// their NodeClaims when one plan fits, and reads the pool create on the wire. Linode refuses a
// pool label whose key contains kubernetes.io (node.kubernetes.io/instance-type, which core and
// LKE's cloud controller set anyway); the body carries no field the user did not set ("disks",
// null "labels" or an empty "taints", which the API description wants at least one of).
func TestPoolCreateSendsWhatLinodeAccepts(t *testing.T) {
	for _, tc := range []struct {
		example string
		tier    lke.Tier
		// extra are the fields the class sets beyond the default class's.
		extra map[string]any
	}{
		{example: "default.yaml", tier: lke.TierStandard},
		{example: "enterprise.yaml", tier: lke.TierEnterprise,
			extra: map[string]any{"k8s_version": "1.33", "update_strategy": "on_recycle", "disk_encryption": "enabled"}},
	} {
		t.Run(tc.example, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{tier: tc.tier})
			f.emulator.RecordSent()
			nodeClass, nodePool := example(t, tc.example)
			claim := test.NodeClaimFor(nodePool, plan("g6-standard-2", 0.036))
			if _, err := f.provider.Create(context.Background(), nodeClass, claim, plans()); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"count": 1, "type": "g6-standard-2", "label": claim.Name,
				"tags": []string{nodeprovider.LKEClusterTag(f.cluster.ID), nodeprovider.NodeClaimTag(claim.Name), nodeprovider.NodePoolTag(nodePool.Name), string(nodeClass.Spec.Tags[0])},
				"labels": map[string]string{
					karpv1.NodePoolLabelKey: nodePool.Name, nodeClassLabel: nodeClass.Name,
					karpv1.CapacityTypeLabelKey: karpv1.CapacityTypeOnDemand, v1.LabelNodeClaim: claim.Name,
				},
				"autoscaler": map[string]any{"enabled": false, "min": 1, "max": 1},
			}
			for field, value := range tc.extra {
				want[field] = value
			}
			expectBody(t, poolCreateRoute, sentBody(t, f, poolCreateRoute), jsonOf(t, want))
		})
	}
}

// TestPoolKeepsLabelsAndTaintsLinodeRefusesToKarpenter: a NodePool whose template has labels and
// taints Linode refuses on a pool (a key in the kubernetes.io or linode.com namespace, an empty
// value, a taint value "linode.com") still launches: its pool carries what Linode accepts, and the
// rest is left to Karpenter, which puts the NodeClaim's labels and taints on the Node when it
// registers it (the Node webhook adds the taints the pool lacks as the Node is created).
func TestPoolKeepsLabelsAndTaintsLinodeRefusesToKarpenter(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.emulator.RecordSent()
	nodeClass, nodePool := example(t, "default.yaml")
	nodePool.Spec.Template.Labels = map[string]string{
		"team":                           "payments",
		"node-role.kubernetes.io/worker": "",
		"topology.linode.com/rack":       "r12",
		"spot-ok":                        "",
	}
	accepted := []corev1.Taint{
		{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule},
		{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule},
	}
	refused := []corev1.Taint{
		{Key: "example.com/provider", Value: "linode.com", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/" + strings.Repeat("k", 60), Value: "long", Effect: corev1.TaintEffectNoExecute},
	}
	nodePool.Spec.Template.Spec.Taints = append(append([]corev1.Taint{}, accepted...), refused...)
	claim := test.NodeClaimFor(nodePool, plan("g6-standard-2", 0.036))

	node, err := f.provider.Create(context.Background(), nodeClass, claim, plans())
	if err != nil {
		t.Fatalf("the launch failed on what Linode refuses on a pool: %v", err)
	}
	body := sentBody(t, f, poolCreateRoute)
	expectBody(t, poolCreateRoute+" labels", map[string]any{"labels": body["labels"], "taints": body["taints"]}, jsonOf(t, map[string]any{
		"labels": map[string]string{
			karpv1.NodePoolLabelKey: nodePool.Name, nodeClassLabel: nodeClass.Name,
			karpv1.CapacityTypeLabelKey: karpv1.CapacityTypeOnDemand, v1.LabelNodeClaim: claim.Name, "team": "payments",
		},
		// A taint without a value is sent with "value": "", which the API description requires.
		"taints": []linode.PoolTaint{
			{Key: "dedicated", Value: "payments", Effect: linodego.LKENodePoolTaintEffect(corev1.TaintEffectNoSchedule)},
			{Key: "nvidia.com/gpu", Value: "", Effect: linodego.LKENodePoolTaintEffect(corev1.TaintEffectNoSchedule)},
		},
	}))
	if node.NodeClaimName != claim.Name {
		t.Errorf("launched node %+v", node)
	}
}

// TestPoolLabelRefusalIsTheNodeClaims: should Linode refuse a pool's labels or taints by a rule
// the provider does not know, the NodeClaim's launch says so (its Launched condition's reason and
// Linode's words), and no plan is taken out of the region for it: the plan was never the problem.
func TestPoolLabelRefusalIsTheNodeClaims(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.emulator.InjectFault(emulator.Fault{
		Method: http.MethodPost, Route: "/lke/clusters/{clusterId}/pools", Sequence: []int{http.StatusBadRequest},
		Field: "labels", Reason: "Labels must be valid key-value pairs.",
	})
	_, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-refused"), plans())
	var createErr *cloudprovider.CreateError
	if !errors.As(err, &createErr) || createErr.ConditionReason != lke.ReasonPoolMetadataRefused || !strings.Contains(createErr.ConditionMessage, "Labels must be valid key-value pairs.") {
		t.Fatalf("Create error %v, want a CreateError with reason %s and Linode's reason", err, lke.ReasonPoolMetadataRefused)
	}
	if cloudprovider.IsInsufficientCapacityError(err) || nodeprovider.IsInvalidLaunch(err) || f.unavailable.IsUnavailable("g6-standard-2", region) {
		t.Errorf("a refusal of the labels was taken for the plan's or the class's: %v", err)
	}
}
