package emulator

import (
	"net/http"
	"slices"
	"time"
)

// recycle is LKE replacing a cluster's nodes "on a rolling basis": one node at a time, each
// drained, then deleted with its Linode and replaced by a new node (new id, new Linode, new
// name) that installs the cluster's version (standard tier) or its pool's (enterprise tier); the
// next node's turn comes once the replacement's Linode is running.
type recycle struct {
	// queue holds the ids of the nodes waiting for their turn, in order.
	queue []string
	// draining is the node being drained, "" when none.
	draining string
	// replacement is the new node the next turn waits for, "" when none.
	replacement string
}

func (e *Emulator) recycleOf(clusterID int) *recycle {
	r, ok := e.st.recycles[clusterID]
	if !ok {
		r = &recycle{}
		e.st.recycles[clusterID] = r
	}
	return r
}

// enqueueRecycle queues nodes for replacement and starts the first turn if none is under way.
func (e *Emulator) enqueueRecycle(c *lkeCluster, nodes []*lkeNode, now time.Time) {
	r := e.recycleOf(c.ID)
	for _, n := range nodes {
		if n.ID != r.draining && !slices.Contains(r.queue, n.ID) {
			r.queue = append(r.queue, n.ID)
		}
	}
	if r.draining == "" && r.replacement == "" {
		e.nextRecycle(c.ID, now)
	}
}

// nextRecycle starts draining the next queued node that still exists. A node without a Linode
// yet has nothing to drain and is replaced at once.
func (e *Emulator) nextRecycle(clusterID int, now time.Time) {
	r := e.recycleOf(clusterID)
	for len(r.queue) > 0 {
		nodeID := r.queue[0]
		r.queue = r.queue[1:]
		_, n := e.poolOfNode(clusterID, nodeID)
		if n == nil {
			continue
		}
		r.draining = nodeID
		in, ok := e.st.instances[n.InstanceID]
		if !ok {
			e.replaceRecycledNode(clusterID, nodeID, now)
			return
		}
		e.emit(InstanceDraining, in, now)
		e.st.at(now.Add(e.cfg.delays.RecycleDrainTimeout), func(at time.Time) {
			e.replaceRecycledNode(clusterID, nodeID, at)
		})
		return
	}
}

// replaceRecycledNode ends a node's drain: LKE deletes it and its Linode and adds a new node.
func (e *Emulator) replaceRecycledNode(clusterID int, nodeID string, now time.Time) {
	r := e.recycleOf(clusterID)
	if r.draining != nodeID {
		return
	}
	c, ok := e.st.clusters[clusterID]
	p, n := e.poolOfNode(clusterID, nodeID)
	if !ok || n == nil {
		r.draining = ""
		e.nextRecycle(clusterID, now)
		return
	}
	r.draining = ""
	e.removeNode(p, n, now)
	r.replacement = e.addNode(c, p, now).ID
}

// recycledNodeReady moves the recycle on once a replacement's Linode is running.
func (e *Emulator) recycledNodeReady(clusterID int, n *lkeNode, now time.Time) {
	if r, ok := e.st.recycles[clusterID]; ok && r.replacement == n.ID {
		r.replacement = ""
		e.nextRecycle(clusterID, now)
	}
}

// recycledNodeGone keeps a recycle from waiting for a node deleted meanwhile.
func (e *Emulator) recycledNodeGone(clusterID int, n *lkeNode, now time.Time) {
	r, ok := e.st.recycles[clusterID]
	if !ok {
		return
	}
	r.queue = slices.DeleteFunc(r.queue, func(id string) bool { return id == n.ID })
	if r.draining == n.ID || r.replacement == n.ID {
		r.draining, r.replacement = "", ""
		e.nextRecycle(clusterID, now)
	}
}

// FinishDrain tells the emulator that the Kubernetes node of a Linode LKE is recycling is
// drained, so LKE replaces it now instead of at the drain timeout. A simulated cluster calls it
// after it handled the Linode's InstanceDraining event.
func (e *Emulator) FinishDrain(instanceID int) {
	e.writing(func() {
		in, ok := e.st.instances[instanceID]
		if ok && in.NodeID != "" {
			e.replaceRecycledNode(in.LKEClusterID, in.NodeID, e.clock.Now())
		}
	})
	e.deliver()
}

func (e *Emulator) recyclePool(r *http.Request) (any, *apiError) {
	c, p, err := e.lookupPool(r)
	if err != nil {
		return nil, err
	}
	e.enqueueRecycle(c, p.Nodes, e.clock.Now())
	return emptyObject{}, nil
}

func (e *Emulator) recycleNodeHandler(r *http.Request) (any, *apiError) {
	c, _, n, err := e.lookupNode(r)
	if err != nil {
		return nil, err
	}
	e.enqueueRecycle(c, []*lkeNode{n}, e.clock.Now())
	return emptyObject{}, nil
}

func (e *Emulator) recycleCluster(r *http.Request) (any, *apiError) {
	c, err := e.lookupCluster(r)
	if err != nil {
		return nil, err
	}
	var nodes []*lkeNode
	for _, p := range e.poolsOfCluster(c.ID) {
		nodes = append(nodes, p.Nodes...)
	}
	e.enqueueRecycle(c, nodes, e.clock.Now())
	return emptyObject{}, nil
}
