package planner

import (
	"context"
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// TestPlanIsWhatTheControllerLaunches plans the README's examples (its NodePool and the workloads
// of examples/workloads) from the built-in catalogue, then provisions the same pods with the
// controller's own cloud provider in LKE mode, which reads the catalogue from the Linode API
// emulator through linodego and launches each NodeClaim as an LKE pool there: the pools the
// emulator holds are the plan, plan for plan.
func TestPlanIsWhatTheControllerLaunches(t *testing.T) {
	manifests, err := ReadManifests([]string{"../../examples/default.yaml", "../../examples/workloads"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	catalogue, err := BuiltInCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	report, err := Plan(ctx, Settings{Region: test.Region, Mode: mode.LKE, Catalogue: catalogue}, manifests.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Unplaceable) > 0 || len(report.NodePools) != 1 {
		t.Fatalf("unplaceable %v, NodePools %+v: want every pod on the README's NodePool", report.Unplaceable, report.NodePools)
	}
	planned := map[string]int{}
	for _, plan := range report.NodePools[0].Plans {
		planned[plan.Plan] = plan.Nodes
	}

	e := test.StartEmulatorForTest(t)
	objects, pods, daemons := clusterObjects(manifests.Workloads)
	kubeClient := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objects...).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).Build()
	controller, err := test.NewLKE(ctx, e, kubeClient, test.WithNodeProviderOptions(lke.WithLaunchTimeout(lke.DefaultLaunchTimeout)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err = ControllerContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	provisioned, err := Provision(ctx, Cloud{KubeClient: kubeClient, CloudProvider: controller.CloudProvider, Sizing: controller.Sizing}, manifests.NodePools, pods, daemons,
		ProvisionOptions{NodeClaimName: func(round, i int) string { return fmt.Sprintf("controller-%d-%04d", round, i) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(provisioned.Unplaced) > 0 {
		t.Fatalf("the controller placed none of %v", provisioned.Unplaced)
	}
	launched := map[string]int{}
	for _, pool := range e.Pools(controller.Cluster.ID) {
		launched[pool.Type] += pool.Count
	}
	if !maps.Equal(launched, planned) {
		t.Fatalf("the plan said %v, the controller launched %v", planned, launched)
	}
}
