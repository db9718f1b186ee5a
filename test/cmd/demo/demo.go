package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/linode/linodego"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// Demo tuning of the default NodePool, so the walk-through does not sit idle: consolidate a
// minute sooner than the README's 1m, and let every empty node go at once rather than 10% at a time.
const (
	demoConsolidateAfter = "5s"
	demoBudget           = "100%"
)

type demo struct {
	mode     string
	cluster  *localcluster.Cluster
	kube     client.Client
	watch    *watcher
	linode   *linodego.Client
	replicas int
	// timeScale is the emulator's delay scale, for the report.
	timeScale float64
	// peakHourly and peakMonthly price the fleet at the end of the scale-up.
	peakHourly, peakMonthly float64
	// scaleUpStart and scaleUpEnd bound the scale-up the timeline describes.
	scaleUpStart, scaleUpEnd time.Time
	manualNode               string
	// planned is the fleet karpenter-linode plan answered before the deployment, by plan, and
	// launched the fleet Karpenter launched for it.
	planned, launched map[string]int
	plannedHourly     float64
}

func newDemo(ctx context.Context, mode string, cluster *localcluster.Cluster, replicas int, timeScale float64) *demo {
	d := &demo{mode: mode, cluster: cluster, kube: cluster.Kube, watch: newWatcher(cluster), linode: cluster.Emulator.NewClient(),
		replicas: replicas, timeScale: timeScale}
	go d.watch.run(ctx)
	return d
}

func (d *demo) run(ctx context.Context) error {
	for _, step := range []struct {
		title string
		run   func(context.Context) error
	}{
		{"Apply the default LinodeNodeClass and NodePool", d.applyDefaults},
		{fmt.Sprintf("Deploy inflate (pause containers, 1 CPU each) and scale it to %d", d.replicas), d.scaleUp},
		{"The nodes Karpenter launched", d.showNodes},
		{"Delete a node by hand", d.deleteNodeByHand},
		{"Delete the deployment: consolidation removes the empty nodes", d.scaleDown},
	} {
		fmt.Printf("\n▶ %s\n", step.title)
		if err := step.run(ctx); err != nil {
			return err
		}
		if err := d.cluster.CheckHealthy(); err != nil {
			return err
		}
		// The controller runs as the chart's ServiceAccount: a refused request is a rule the
		// chart lacks.
		refusals, err := d.cluster.ControllerRefusals()
		if err != nil {
			return err
		}
		if len(refusals) > 0 {
			return fmt.Errorf("kube-apiserver refused the controller:\n  %s", strings.Join(refusals, "\n  "))
		}
		// The emulator refuses a body the real Linode API would refuse.
		if refusals := d.cluster.LinodeRefusals(); len(refusals) > 0 {
			return fmt.Errorf("the controller sent bodies Linode's request rules refuse:\n  %s", strings.Join(refusals, "\n  "))
		}
	}
	d.printTimeline()
	d.printCost(ctx)
	d.printPlan()
	fmt.Println("\n✓ Every step happened; the Linode account is empty again.")
	return nil
}

// waitFor polls cond until it reports done, printing what was awaited and how long it took.
func (d *demo) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	took, err := d.cluster.Await(ctx, timeout, pollInterval, cond)
	switch {
	case errors.Is(err, localcluster.ErrAwaitTimedOut):
		fmt.Printf("  ✗ %s: not after %v\n", what, timeout)
		return fmt.Errorf("%s: not after %v; the controller's latest errors:\n  %s", what, timeout,
			strings.Join(d.cluster.RecentControllerErrors(5), "\n  "))
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Printf("  ✓ %-66s %5.1fs\n", what, took.Seconds())
	return nil
}

func (d *demo) applyDefaults(ctx context.Context) error {
	objects, err := readManifests(d.mode)
	if err != nil {
		return err
	}
	var nodePools, nodeClasses []string
	for _, obj := range objects {
		if obj.GetKind() == "NodePool" {
			tuneDisruption(obj)
			nodePools = append(nodePools, obj.GetName())
		}
		if obj.GetKind() == "LinodeNodeClass" {
			nodeClasses = append(nodeClasses, obj.GetName())
		}
		if err := d.kube.Create(ctx, obj); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		fmt.Printf("  %s/%s created (from %s)\n", strings.ToLower(obj.GetKind()), obj.GetName(), manifestsOf(d.mode))
	}
	fmt.Printf("  (demo tuning: consolidateAfter %s, disruption budget %s)\n", demoConsolidateAfter, demoBudget)
	for _, name := range nodeClasses {
		if err := d.waitFor(ctx, "LinodeNodeClass "+name+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
			nodeClass := &v1.LinodeNodeClass{}
			if err := d.kube.Get(ctx, client.ObjectKey{Name: name}, nodeClass); err != nil {
				return false, err
			}
			return nodeClass.StatusConditions().Root().IsTrue(), nil
		}); err != nil {
			return err
		}
	}
	for _, name := range nodePools {
		if err := d.waitFor(ctx, "NodePool "+name+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
			nodePool := &karpv1.NodePool{}
			if err := d.kube.Get(ctx, client.ObjectKey{Name: name}, nodePool); err != nil {
				return false, err
			}
			return nodePool.StatusConditions().Root().IsTrue(), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func tuneDisruption(nodePool *unstructured.Unstructured) {
	_ = unstructured.SetNestedField(nodePool.Object, demoConsolidateAfter, "spec", "disruption", "consolidateAfter")
	_ = unstructured.SetNestedSlice(nodePool.Object, []any{map[string]any{"nodes": demoBudget}}, "spec", "disruption", "budgets")
}

func (d *demo) scaleUp(ctx context.Context) error {
	if err := d.plan(ctx); err != nil {
		return err
	}
	deployment := inflate()
	if err := d.kube.Create(ctx, deployment); err != nil {
		return err
	}
	d.scaleUpStart = time.Now()
	if err := d.scale(ctx, int32(d.replicas)); err != nil {
		return err
	}
	fmt.Printf("  deployment/%s scaled to %d\n", deploymentName, d.replicas)
	if err := d.waitFor(ctx, fmt.Sprintf("%d pods pending: no node can run them", d.replicas), time.Minute, func(context.Context) (bool, error) {
		return d.watch.count(func(p *podRecord) bool { return !p.pending.IsZero() }) >= d.replicas, nil
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "Karpenter launched NodeClaims for them", 2*time.Minute, func(ctx context.Context) (bool, error) {
		claims, err := d.nodeClaims(ctx)
		return len(claims) > 0 && all(claims, func(c karpv1.NodeClaim) bool { return c.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched) }), err
	}); err != nil {
		return err
	}
	claims, err := d.nodeClaims(ctx)
	if err != nil {
		return err
	}
	for _, claim := range claims {
		fmt.Printf("      %s: %s in %s\n", claim.Name, claim.Labels[corev1.LabelInstanceTypeStable], claim.Labels[corev1.LabelTopologyZone])
	}
	if err := d.waitFor(ctx, "their Linodes booted and the nodes registered", 3*time.Minute, func(ctx context.Context) (bool, error) {
		claims, err := d.nodeClaims(ctx)
		return all(claims, func(c karpv1.NodeClaim) bool { return c.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized) }), err
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, fmt.Sprintf("%d/%d pods running", d.replicas, d.replicas), 2*time.Minute, func(ctx context.Context) (bool, error) {
		return d.runningPods(ctx) == d.replicas, nil
	}); err != nil {
		return err
	}
	d.scaleUpEnd = time.Now()
	return d.waitFor(ctx, "every Linode has a NodeClaim, every NodeClaim exactly one node", 30*time.Second, d.consistent)
}

func (d *demo) scale(ctx context.Context, replicas int32) error {
	deployment := &appsv1.Deployment{}
	if err := d.kube.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: deploymentName}, deployment); err != nil {
		return err
	}
	patch := client.MergeFrom(deployment.DeepCopy())
	deployment.Spec.Replicas = &replicas
	return d.kube.Patch(ctx, deployment, patch)
}

func (d *demo) consistent(ctx context.Context) (bool, error) {
	return d.cluster.CheckConsistency(ctx) == nil, nil
}

func (d *demo) nodeClaims(ctx context.Context) ([]karpv1.NodeClaim, error) {
	var claims karpv1.NodeClaimList
	err := d.kube.List(ctx, &claims)
	return claims.Items, err
}

func (d *demo) pods(ctx context.Context) []corev1.Pod {
	var pods corev1.PodList
	_ = d.kube.List(ctx, &pods, client.InNamespace(demoNamespace), client.MatchingLabels{"app": deploymentName})
	return pods.Items
}

func (d *demo) runningPods(ctx context.Context) int {
	return len(filter(d.pods(ctx), func(p corev1.Pod) bool {
		return p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning && nodesim.PodReady(&p)
	}))
}

func (d *demo) showNodes(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := d.kube.List(ctx, &nodes, client.HasLabels{karpv1.NodePoolLabelKey}); err != nil {
		return err
	}
	pods := d.pods(ctx)
	fmt.Printf("  %-32s %-16s %-8s %-6s %8s %9s\n", "NODE", "PLAN", "REGION", "PODS", "$/HOUR", "$/MONTH")
	var hourly, monthly float64
	d.launched = map[string]int{}
	for _, node := range nodes.Items {
		plan, region := node.Labels[corev1.LabelInstanceTypeStable], node.Labels[corev1.LabelTopologyRegion]
		d.launched[plan]++
		price, err := d.price(ctx, plan, region)
		if err != nil {
			return err
		}
		onNode := len(filter(pods, func(p corev1.Pod) bool { return p.Spec.NodeName == node.Name }))
		fmt.Printf("  %-32s %-16s %-8s %-6d %8.3f %9.2f\n", node.Name, plan, region, onNode, price.Hourly, price.Monthly)
		hourly += float64(price.Hourly)
		monthly += float64(price.Monthly)
	}
	fmt.Printf("  %-32s %-16s %-8s %-6d %8.3f %9.2f\n", "fleet", "", "", len(pods), hourly, monthly)
	d.peakHourly, d.peakMonthly = hourly, monthly
	return nil
}

// price is the plan's price in the region, with the region's surcharge when it has one.
func (d *demo) price(ctx context.Context, plan, region string) (linodego.LinodePrice, error) {
	linodeType, err := d.linode.GetType(ctx, plan)
	if err != nil {
		return linodego.LinodePrice{}, err
	}
	for _, regional := range linodeType.RegionPrices {
		if regional.ID == region {
			return linodego.LinodePrice{Hourly: regional.Hourly, Monthly: regional.Monthly}, nil
		}
	}
	return *linodeType.Price, nil
}

func (d *demo) deleteNodeByHand(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := d.kube.List(ctx, &nodes, client.HasLabels{karpv1.NodePoolLabelKey}); err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("no node to delete")
	}
	// The busiest node shows the drain best.
	pods := d.pods(ctx)
	onNode := func(name string) []corev1.Pod {
		return filter(pods, func(p corev1.Pod) bool { return p.Spec.NodeName == name })
	}
	node := slices.MaxFunc(nodes.Items, func(a, b corev1.Node) int { return len(onNode(a.Name)) - len(onNode(b.Name)) })
	d.manualNode = node.Name
	evicted := onNode(node.Name)
	fmt.Printf("  kubectl delete node %s   (%s, %s)\n", node.Name, node.Spec.ProviderID, plural(len(evicted), "pod"))
	if err := d.kube.Delete(ctx, &node); err != nil {
		return err
	}
	var finalizers []string
	if err := d.waitFor(ctx, "the node stays, held by Karpenter's termination finalizer", 10*time.Second, func(ctx context.Context) (bool, error) {
		current := &corev1.Node{}
		if err := d.kube.Get(ctx, client.ObjectKeyFromObject(&node), current); err != nil {
			return false, err
		}
		finalizers = current.Finalizers
		return !current.DeletionTimestamp.IsZero() && slices.Contains(current.Finalizers, karpv1.TerminationFinalizer), nil
	}); err != nil {
		return err
	}
	fmt.Printf("      finalizers: %s\n", strings.Join(finalizers, ", "))
	if err := d.waitFor(ctx, fmt.Sprintf("its %s evicted (drained)", plural(len(evicted), "pod")), time.Minute, func(ctx context.Context) (bool, error) {
		return len(filter(d.pods(ctx), func(p corev1.Pod) bool { return p.Spec.NodeName == node.Name })) == 0, nil
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "its Linode deleted", time.Minute, func(context.Context) (bool, error) {
		return !slices.ContainsFunc(d.cluster.Emulator.Instances(), func(in emulator.InstanceInfo) bool { return in.Label == node.Name }), nil
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "the node is gone", time.Minute, func(ctx context.Context) (bool, error) {
		err := d.kube.Get(ctx, client.ObjectKeyFromObject(&node), &corev1.Node{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, fmt.Sprintf("%d/%d pods running again elsewhere", d.replicas, d.replicas), 3*time.Minute, func(ctx context.Context) (bool, error) {
		return d.runningPods(ctx) == d.replicas, nil
	}); err != nil {
		return err
	}
	return d.waitFor(ctx, "every Linode has a NodeClaim, every NodeClaim exactly one node", 30*time.Second, d.consistent)
}

func (d *demo) scaleDown(ctx context.Context) error {
	claims, err := d.nodeClaims(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("  kubectl delete deployment %s   (%s now)\n", deploymentName, plural(len(claims), "node"))
	if err := d.kube.Delete(ctx, inflate(), client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "its pods are gone", time.Minute, func(ctx context.Context) (bool, error) {
		return len(d.pods(ctx)) == 0, nil
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, fmt.Sprintf("consolidation removed the empty %s", plural(len(claims), "node")), 3*time.Minute, func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := d.kube.List(ctx, &nodes, client.HasLabels{karpv1.NodePoolLabelKey}); err != nil {
			return false, err
		}
		remaining, err := d.nodeClaims(ctx)
		return len(nodes.Items) == 0 && len(remaining) == 0, err
	}); err != nil {
		return err
	}
	if err := d.waitFor(ctx, "no Linode and no LKE pool left in the account", time.Minute, func(context.Context) (bool, error) {
		return d.cluster.CheckNoLinodeResources() == nil, nil
	}); err != nil || d.mode != localcluster.ModeInstance {
		return err
	}
	return d.waitFor(ctx, "no bootstrap token left in kube-system", time.Minute, func(ctx context.Context) (bool, error) {
		return d.cluster.CheckNoBootstrapTokens(ctx) == nil, nil
	})
}

// plural is "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func all[T any](items []T, pred func(T) bool) bool {
	for _, item := range items {
		if !pred(item) {
			return false
		}
	}
	return true
}

func filter[T any](items []T, pred func(T) bool) []T {
	var out []T
	for _, item := range items {
		if pred(item) {
			out = append(out, item)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
