package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

// cluster is what a live cluster holds for the plan, and its nodes.
type cluster struct {
	planner.Manifests
	nodes []corev1.Node
}

// region is the region the cluster's nodes are in, "" when they are in none or several.
func (c *cluster) region() string {
	region := ""
	for _, node := range c.nodes {
		switch r := node.Labels[corev1.LabelTopologyRegion]; {
		case r == "" || (region != "" && r != region):
			return ""
		default:
			region = r
		}
	}
	return region
}

// readCluster reads the cluster's pending and running pods (not those of DaemonSets, nor static
// pods, nor pods on their way out), of namespace only when it is not empty, and its DaemonSets
// (of every namespace: they run on every node), NodePools, LinodeNodeClasses and nodes.
func readCluster(ctx context.Context, config *rest.Config, namespace string) (*cluster, error) {
	kube, err := client.New(config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	var pods corev1.PodList
	if err := kube.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		if pod := &pods.Items[i]; runsOnItsOwn(pod) {
			c.Pods = append(c.Pods, asPending(pod))
		}
	}
	var daemonSets appsv1.DaemonSetList
	if err := kube.List(ctx, &daemonSets); err != nil {
		return nil, fmt.Errorf("listing DaemonSets: %w", err)
	}
	for i := range daemonSets.Items {
		c.DaemonSets = append(c.DaemonSets, &daemonSets.Items[i])
	}
	// A cluster without Karpenter's CRDs has no NodePool: the README's is planned for.
	var nodePools karpv1.NodePoolList
	if err := kube.List(ctx, &nodePools); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing NodePools: %w", err)
	}
	for i := range nodePools.Items {
		c.NodePools = append(c.NodePools, &nodePools.Items[i])
	}
	var nodeClasses v1.LinodeNodeClassList
	if err := kube.List(ctx, &nodeClasses); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing LinodeNodeClasses: %w", err)
	}
	for i := range nodeClasses.Items {
		c.NodeClasses = append(c.NodeClasses, &nodeClasses.Items[i])
	}
	var nodes corev1.NodeList
	if err := kube.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	c.nodes = nodes.Items
	return c, nil
}

// runsOnItsOwn says whether a pod needs a node of its own making: pending or running, not being
// deleted, neither a DaemonSet's (DaemonSets are planned as such) nor a static pod's mirror.
func runsOnItsOwn(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodPending && pod.Status.Phase != corev1.PodRunning {
		return false
	}
	if pod.DeletionTimestamp != nil {
		return false
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, owner := range pod.OwnerReferences {
		if owner.Kind == "DaemonSet" {
			return false
		}
	}
	return true
}

// asPending is the pod as it was before any node held it, without its owners, which the planner's
// cluster does not hold.
func asPending(pod *corev1.Pod) *corev1.Pod {
	pending := &corev1.Pod{Spec: *pod.Spec.DeepCopy()}
	pending.Name, pending.Namespace = pod.Name, pod.Namespace
	pending.Labels, pending.Annotations = pod.Labels, pod.Annotations
	pending.Spec.NodeName = ""
	return pending
}
