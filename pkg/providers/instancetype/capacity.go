package instancetype

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// learnedCapacity is the memory registered Nodes of each plan reported. A plan's memory as a
// node sees it depends on the hypervisor and the guest kernel, which no API states; the first
// node of a plan tells, and later launches of the plan use what it said.
type learnedCapacity struct {
	mu sync.RWMutex
	// memoryBytes is the smallest memory capacity a Node of the plan reported: nodes of one plan
	// can differ by a few KiB across kernels, and promising the smaller keeps pods that fit on
	// paper from failing to fit on a node.
	memoryBytes map[string]int64
	seq         atomic.Uint64
}

func newLearnedCapacity() *learnedCapacity {
	return &learnedCapacity{memoryBytes: map[string]int64{}}
}

func (c *learnedCapacity) memory(instanceType string) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	bytes, ok := c.memoryBytes[instanceType]
	return bytes, ok
}

func (c *learnedCapacity) seqNum() uint64 { return c.seq.Load() }

// record keeps bytes as the plan's memory if it is the smallest seen; it reports whether the
// plan's memory changed.
func (c *learnedCapacity) record(instanceType string, bytes int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if known, ok := c.memoryBytes[instanceType]; ok && known <= bytes {
		return false
	}
	c.memoryBytes[instanceType] = bytes
	c.seq.Add(1)
	return true
}

// UpdateCapacityFromNode learns a plan's real memory from a registered Node of the plan (label
// node.kubernetes.io/instance-type). Reports that cannot be true for the plan (more memory than
// the plan has, or less than half of it) are ignored: they come from a Node that is not what its
// label says.
func (p *DefaultProvider) UpdateCapacityFromNode(ctx context.Context, node *corev1.Node) {
	instanceType := node.Labels[corev1.LabelInstanceTypeStable]
	reported, ok := node.Status.Capacity[corev1.ResourceMemory]
	cat := p.catalogue.Load()
	if instanceType == "" || !ok || cat == nil {
		return
	}
	planBytes := int64(-1)
	for _, plan := range cat.plans {
		if plan.ID == instanceType {
			planBytes = int64(plan.Memory) * mebibyte
		}
	}
	bytes := reported.Value()
	logger := log.FromContext(ctx).WithValues("Node", node.Name, "instance-type", instanceType, "memory", reported.String())
	if planBytes < 0 || bytes > planBytes || bytes < planBytes/2 {
		logger.V(1).Info("ignoring memory capacity that does not fit the plan")
		return
	}
	if p.capacity.record(instanceType, bytes) {
		logger.Info("learned the memory capacity of a plan from a registered node")
	}
}
