package sizing

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// TestInputsHashCoversEveryInput: a NodePool's memo answers only for the inputs it was computed
// from. Each case changes one input the decision depends on and must change the key; before,
// pods still to come counted with the pending ones, a catalogue whose first plan was kept
// counted as unchanged, and the large-NodePool state a burst leaves was not counted at all.
func TestInputsHashCoversEveryInput(t *testing.T) {
	instanceTypes := usOrdPlans(t)
	nodePool := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "default", Generation: 1}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("500m"),
	}}}}}}
	queue := func(pending, coming int) []groupRun {
		g := &podGroup{shape: shapeOf(pod, false), pods: pending + coming, coming: coming}
		return []groupRun{{of: g, pods: g.pods}}
	}
	key := func(instanceTypes []*cloudprovider.InstanceType, wasLarge bool, q []groupRun) uint64 {
		return inputsHash(nodePool, instanceTypes, "", 0, wasLarge, nil, q)
	}
	base := key(instanceTypes, false, queue(10, 0))
	if again := key(slices.Clone(instanceTypes), false, queue(10, 0)); again != base {
		t.Fatal("the same inputs give another key")
	}

	if key(instanceTypes, false, queue(5, 5)) == base {
		t.Error("5 pods pending and 5 to come have the key of 10 pending: a burst's floor depends on the pods to come")
	}

	// The provider rebuilds the plan whose offering ran out of capacity and keeps the others.
	soldOut := slices.Clone(instanceTypes)
	last := len(soldOut) - 1
	kept := soldOut[last]
	rebuilt := &cloudprovider.InstanceType{Name: kept.Name, Requirements: kept.Requirements, Offerings: slices.Clone(kept.Offerings), Capacity: kept.Capacity, Overhead: kept.Overhead}
	offering := *rebuilt.Offerings[0]
	offering.Available = false
	rebuilt.Offerings[0] = &offering
	soldOut[last] = rebuilt
	if key(soldOut, false, queue(10, 0)) == base {
		t.Errorf("%s running out of capacity leaves the key unchanged", rebuilt.Name)
	}

	if key(instanceTypes, true, queue(10, 0)) == base {
		t.Error("a NodePool still counting as large from an earlier burst has the key of one that does not")
	}
}
