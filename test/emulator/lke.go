package emulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LKE node statuses.
const (
	nodeNotReady = "not_ready"
	nodeReady    = "ready"
)

type lkeCluster struct {
	ID               int
	Label            string
	Region           string
	K8sVersion       string
	Tier             string
	Tags             []string
	HighAvailability bool
	AuditLogsEnabled bool
	// VPCID and SubnetID are the VPC and subnet the user brought for the nodes, if any.
	VPCID, SubnetID *int
	StackType       string
	// ACL limits access to the control plane; nil when disabled.
	ACL *controlPlaneACL
	// EndpointID names the control plane's endpoints; AdminToken is its kubeconfig's token.
	EndpointID, AdminToken string
	Created, Updated       time.Time
}

type poolDisk struct {
	Size int    `json:"size"`
	Type string `json:"type"`
}

type poolAutoscaler struct {
	Enabled bool `json:"enabled"`
	Min     int  `json:"min"`
	Max     int  `json:"max"`
}

type poolTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type lkePool struct {
	ID             int
	ClusterID      int
	Type           string
	Label          string
	Count          int
	Nodes          []*lkeNode
	Disks          []poolDisk
	Autoscaler     poolAutoscaler
	Labels         map[string]string
	Taints         []poolTaint
	Tags           []string
	DiskEncryption string
	FirewallID     *int
	K8sVersion     *string
	UpdateStrategy *string
}

type lkeNode struct {
	ID         string
	InstanceID int // 0 until the node's Linode exists
	Status     string
	// VisibleAt is when the node starts to appear in its pool's "nodes"
	// (later than creation on the enterprise tier).
	VisibleAt time.Time
	// K8sVersion is the Kubernetes version the node's Linode installs: the
	// cluster's when the node was created (standard tier), or its pool's
	// (enterprise tier).
	K8sVersion string
}

type clusterWire struct {
	ID           int     `json:"id"`
	Status       string  `json:"status"`
	Created      apiTime `json:"created"`
	Updated      apiTime `json:"updated"`
	Label        string  `json:"label"`
	Region       string  `json:"region"`
	K8sVersion   string  `json:"k8s_version"`
	Tier         string  `json:"tier"`
	ControlPlane struct {
		HighAvailability bool `json:"high_availability"`
		AuditLogsEnabled bool `json:"audit_logs_enabled"`
	} `json:"control_plane"`
	APLEnabled bool     `json:"apl_enabled"`
	VPCID      *int     `json:"vpc_id"`
	SubnetID   *int     `json:"subnet_id"`
	StackType  string   `json:"stack_type"`
	Tags       []string `json:"tags"`
	Locks      []string `json:"locks"`
}

func clusterToWire(c *lkeCluster) clusterWire {
	w := clusterWire{
		ID: c.ID, Status: "ready", Created: apiTime(c.Created), Updated: apiTime(c.Updated),
		Label: c.Label, Region: c.Region, K8sVersion: c.K8sVersion, Tier: c.Tier,
		VPCID: c.VPCID, SubnetID: c.SubnetID, StackType: c.StackType, Tags: nonNil(c.Tags), Locks: []string{},
	}
	w.ControlPlane.HighAvailability = c.HighAvailability
	w.ControlPlane.AuditLogsEnabled = c.AuditLogsEnabled
	return w
}

type nodeWire struct {
	ID         string `json:"id"`
	InstanceID *int   `json:"instance_id"`
	Status     string `json:"status"`
}

func nodeToWire(n *lkeNode) nodeWire {
	w := nodeWire{ID: n.ID, Status: n.Status}
	if n.InstanceID != 0 {
		id := n.InstanceID
		w.InstanceID = &id
	}
	return w
}

type poolWire struct {
	ID             int               `json:"id"`
	Type           string            `json:"type"`
	Label          string            `json:"label"`
	Count          int               `json:"count"`
	Nodes          []nodeWire        `json:"nodes"`
	Disks          []poolDisk        `json:"disks"`
	Autoscaler     poolAutoscaler    `json:"autoscaler"`
	Labels         map[string]string `json:"labels"`
	Taints         []poolTaint       `json:"taints"`
	Tags           []string          `json:"tags"`
	DiskEncryption string            `json:"disk_encryption"`
	Locks          []string          `json:"locks"`
	// FirewallID is the pool's firewall: on the enterprise tier null without one, on the
	// standard tier left out without one.
	FirewallID     json.RawMessage `json:"firewall_id,omitempty"`
	K8sVersion     *string         `json:"k8s_version,omitempty"`
	UpdateStrategy *string         `json:"update_strategy,omitempty"`
}

func poolToWire(c *lkeCluster, p *lkePool, now time.Time) poolWire {
	w := poolWire{
		ID: p.ID, Type: p.Type, Label: p.Label, Count: p.Count, Nodes: []nodeWire{},
		Disks: nonNil(p.Disks), Autoscaler: p.Autoscaler, Labels: p.Labels,
		Taints: nonNil(p.Taints), Tags: nonNil(p.Tags), DiskEncryption: p.DiskEncryption,
		Locks: []string{}, K8sVersion: p.K8sVersion, UpdateStrategy: p.UpdateStrategy,
	}
	switch {
	case p.FirewallID != nil:
		w.FirewallID = json.RawMessage(strconv.Itoa(*p.FirewallID))
	case c.Tier == tierEnterprise:
		w.FirewallID = json.RawMessage("null")
	}
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	for _, n := range p.visibleNodes(now) {
		w.Nodes = append(w.Nodes, nodeToWire(n))
	}
	return w
}

func (p *lkePool) visibleNodes(now time.Time) []*lkeNode {
	out := make([]*lkeNode, 0, len(p.Nodes))
	for _, n := range p.Nodes {
		if !n.VisibleAt.After(now) {
			out = append(out, n)
		}
	}
	return out
}

// poolOfNode finds the pool of cluster holding nodeID. Node ids start with
// their pool id ("<poolID>-<hex>").
func (e *Emulator) poolOfNode(clusterID int, nodeID string) (*lkePool, *lkeNode) {
	prefix, _, ok := strings.Cut(nodeID, "-")
	if !ok {
		return nil, nil
	}
	poolID, err := strconv.Atoi(prefix)
	if err != nil {
		return nil, nil
	}
	p, ok := e.st.pools[poolID]
	if !ok || p.ClusterID != clusterID {
		return nil, nil
	}
	for _, n := range p.Nodes {
		if n.ID == nodeID {
			return p, n
		}
	}
	return nil, nil
}

// addNode creates a node without a Linode and schedules the Linode's
// creation. Enterprise pools hide the node from their "nodes" list for a
// while, as the real tier does.
func (e *Emulator) addNode(c *lkeCluster, p *lkePool, now time.Time) *lkeNode {
	n := &lkeNode{
		ID:         fmt.Sprintf("%d-%s0000", p.ID, e.st.hex(8)),
		Status:     nodeNotReady,
		VisibleAt:  now,
		K8sVersion: c.K8sVersion,
	}
	if p.K8sVersion != nil {
		n.K8sVersion = *p.K8sVersion
	}
	if c.Tier == tierEnterprise {
		n.VisibleAt = now.Add(e.cfg.delays.EnterpriseNodeListing)
	}
	p.Nodes = append(p.Nodes, n)
	e.scheduleNodeInstance(p.ID, n.ID, now)
	return n
}

func (e *Emulator) scheduleNodeInstance(poolID int, nodeID string, now time.Time) {
	e.st.at(now.Add(e.cfg.delays.NodeInstance), func(at time.Time) {
		p, ok := e.st.pools[poolID]
		if !ok {
			return
		}
		idx := slices.IndexFunc(p.Nodes, func(n *lkeNode) bool { return n.ID == nodeID })
		if idx < 0 || p.Nodes[idx].InstanceID != 0 {
			return
		}
		e.createNodeInstance(e.st.clusters[p.ClusterID], p, p.Nodes[idx], at)
	})
}

// createNodeInstance creates a pool node's Linode. On the standard tier the
// Linode carries lke_cluster_id but none of the pool's tags; on the
// enterprise tier it gets the pool's tags plus "nodepool=<poolID>" and
// "lke<clusterID>".
func (e *Emulator) createNodeInstance(c *lkeCluster, p *lkePool, n *lkeNode, at time.Time) {
	in := e.newInstance(at, c.Region, p.Type)
	in.Label = fmt.Sprintf("lke%d-%s", c.ID, n.ID)
	in.LKEClusterID, in.LKEPoolID, in.NodeID, in.K8sVersion = c.ID, p.ID, n.ID, n.K8sVersion
	in.DiskEncryption = p.DiskEncryption
	if p.FirewallID != nil {
		e.putBehindFirewall(in, *p.FirewallID)
	}
	if c.Tier == tierEnterprise {
		in.Tags = append(slices.Clone(p.Tags), fmt.Sprintf("nodepool=%d", p.ID), fmt.Sprintf("lke%d", c.ID))
	}
	e.st.instances[in.ID] = in
	n.InstanceID = in.ID
	e.startBoot(in, at)
}

// nodeInstanceRunning marks the node of a Linode that reached "running" as
// ready.
func (e *Emulator) nodeInstanceRunning(in *instance) {
	if in.NodeID == "" {
		return
	}
	if _, n := e.poolOfNode(in.LKEClusterID, in.NodeID); n != nil && n.InstanceID == in.ID {
		n.Status = nodeReady
		e.recycledNodeReady(in.LKEClusterID, n, in.Updated)
	}
}

// replaceLostNode models LKE healing a pool whose node Linode was deleted
// directly: the node loses its Linode and gets a new one.
func (e *Emulator) replaceLostNode(in *instance, now time.Time) {
	if in.NodeID == "" {
		return
	}
	p, n := e.poolOfNode(in.LKEClusterID, in.NodeID)
	if n == nil || n.InstanceID != in.ID {
		return
	}
	n.InstanceID, n.Status = 0, nodeNotReady
	e.scheduleNodeInstance(p.ID, n.ID, now)
}

// removeNode deletes a node and its Linode; the caller adjusts the count.
func (e *Emulator) removeNode(p *lkePool, n *lkeNode, now time.Time) {
	p.Nodes = slices.DeleteFunc(p.Nodes, func(x *lkeNode) bool { return x == n })
	if in, ok := e.st.instances[n.InstanceID]; ok {
		e.removeInstance(in, now)
	}
	e.recycledNodeGone(p.ClusterID, n, now)
}

func (e *Emulator) removePool(p *lkePool, now time.Time) {
	delete(e.st.pools, p.ID)
	for _, n := range slices.Clone(p.Nodes) {
		e.removeNode(p, n, now)
	}
}

// resizePool adds nodes or removes the newest ones until the pool has count.
func (e *Emulator) resizePool(c *lkeCluster, p *lkePool, count int, now time.Time) {
	for len(p.Nodes) < count {
		e.addNode(c, p, now)
	}
	for len(p.Nodes) > count {
		e.removeNode(p, p.Nodes[len(p.Nodes)-1], now)
	}
	p.Count = count
}

func (e *Emulator) poolsOfCluster(clusterID int) []*lkePool {
	return valuesWhere(e.st.pools, func(p *lkePool) bool { return p.ClusterID == clusterID })
}
