package sizing

import (
	"context"
	"fmt"
	"hash"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
)

// daemonPods are the pods the cluster's DaemonSets would run on a new node, and a key that
// changes when they change.
func (p *Policy) daemonPods(ctx context.Context) ([]*corev1.Pod, string, error) {
	var list appsv1.DaemonSetList
	if err := p.kubeClient.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, "", fmt.Errorf("listing DaemonSets: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	keys := make([]string, 0, len(list.Items))
	for i := range list.Items {
		ds := &list.Items[i]
		pods = append(pods, daemonset.PodForDaemonSet(ds))
		keys = append(keys, fmt.Sprintf("%s/%d", ds.UID, ds.Generation))
	}
	slices.Sort(keys)
	return pods, strings.Join(keys, ","), nil
}

// inputsHash identifies everything a NodePool's answer depends on: its spec, the instance types
// (their plans, capacity and offerings' prices and availability: the provider may rebuild some
// of them and keep others), the DaemonSets, the NodePool's node count, whether it still counts
// as large from an earlier burst, the room on its starting nodes and the pending pods by shape,
// in core's queue order, with how many of each group are still to come.
func inputsHash(nodePool *karpv1.NodePool, instanceTypes []*cloudprovider.InstanceType, daemonsKey string, existing int, wasLarge bool, starting []startingNode, queue []groupRun) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%s/%d/%t|", nodePool.UID, nodePool.Generation, daemonsKey, existing, wasLarge)
	hashInstanceTypes(h, instanceTypes)
	hashStartingNodes(h, starting)
	// The queue holds every group, in an order fixed by the pods: where groups ask for the same
	// CPU and memory, how core's queue interleaves them counts too. Pods still to come count
	// apart from those pending: they decide the floor a burst gets.
	for _, r := range queue {
		fmt.Fprintf(h, "|%s#%d#%d#%t#%t", r.of.shape.key, r.pods, r.of.coming, r.of.deferred, r.of.elsewhere)
	}
	return h.Sum64()
}

// hashInstanceTypes adds what the simulation reads of the instance types to h.
func hashInstanceTypes(h hash.Hash64, instanceTypes []*cloudprovider.InstanceType) {
	for _, it := range instanceTypes {
		fmt.Fprintf(h, "%s", it.Name)
		overhead := corev1.ResourceList{}
		if it.Overhead != nil {
			overhead = it.Overhead.Total()
		}
		for _, list := range []corev1.ResourceList{it.Capacity, overhead} {
			for _, name := range slices.Sorted(maps.Keys(list)) {
				quantity := list[name]
				fmt.Fprintf(h, ",%s=%d", name, quantity.MilliValue())
			}
			fmt.Fprint(h, ";")
		}
		for _, o := range it.Offerings {
			fmt.Fprintf(h, "%s/%s/%g/%t;", o.Zone(), o.CapacityType(), o.Price, o.Available)
		}
		fmt.Fprint(h, "|")
	}
}

// restrict returns the instance types with every available offering dearer than ceiling or
// cheaper than floor, and those of the plans passed over at the ceiling's price, marked
// unavailable. Instance types it changes are copies: the provider's are shared.
func restrict(instanceTypes, priced []*cloudprovider.InstanceType, floor, ceiling float64, passedOver []string) []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, len(instanceTypes))
	for i, it := range instanceTypes {
		skipped := slices.Contains(passedOver, it.Name)
		// Core prices an offering with the NodePool's overlays, which keep the offerings' order.
		outside := func(j int) bool {
			o := priced[i].Offerings[j]
			return o.Available && (skipped || o.Price > ceiling || o.Price < floor)
		}
		restricted := false
		for j := range it.Offerings {
			restricted = restricted || outside(j)
		}
		if !restricted {
			out[i] = it
			continue
		}
		offerings := make(cloudprovider.Offerings, len(it.Offerings))
		for j, o := range it.Offerings {
			offerings[j] = o
			if outside(j) {
				offerings[j] = o.DeepCopy()
				offerings[j].Available = false
			}
		}
		out[i] = &cloudprovider.InstanceType{
			Name:                   it.Name,
			Requirements:           it.Requirements,
			Offerings:              offerings,
			Capacity:               it.Capacity,
			Overhead:               it.Overhead,
			VolumeAttachmentLimits: it.VolumeAttachmentLimits,
			DynamicResources:       it.DynamicResources,
		}
	}
	return out
}
