package test

import (
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// LinodeNodeClass is a class without options (the NodeClass controller has not resolved it),
// with overrides merged in, as core's test builders do: a random name unless one is given.
func LinodeNodeClass(overrides ...v1.LinodeNodeClass) *v1.LinodeNodeClass {
	merged := coretest.MustMerge(v1.LinodeNodeClass{}, overrides...)
	return &v1.LinodeNodeClass{ObjectMeta: coretest.ObjectMeta(merged.ObjectMeta), Spec: merged.Spec, Status: merged.Status}
}

// ReadyLinodeNodeClass is LinodeNodeClass with every condition of the class's set true, as the
// NodeClass controller (not running in the test) leaves a usable class.
func ReadyLinodeNodeClass(overrides ...v1.LinodeNodeClass) *v1.LinodeNodeClass {
	nodeClass := LinodeNodeClass(overrides...)
	for _, condition := range nodeClass.StatusConditions().List() {
		nodeClass.StatusConditions().SetTrue(condition.Type)
	}
	return nodeClass
}

// NodePool is a NodePool of the class, with overrides merged in as core's test.NodePool merges
// them.
func NodePool(nodeClass *v1.LinodeNodeClass, overrides ...karpv1.NodePool) *karpv1.NodePool {
	return coretest.NodePool(append([]karpv1.NodePool{{
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: NodeClassRef(nodeClass.Name),
		}}},
	}}, overrides...)...)
}

// NodeClassRef refers to the LinodeNodeClass name.
func NodeClassRef(name string) *karpv1.NodeClassReference {
	return &karpv1.NodeClassReference{Group: apis.Group, Kind: v1.Kind, Name: name}
}
