package emulator

import (
	"crypto/rand"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

type poolCreateRequest struct {
	Count          int               `json:"count"`
	Type           string            `json:"type"`
	Disks          []poolDisk        `json:"disks"`
	Tags           []string          `json:"tags"`
	Labels         map[string]string `json:"labels"`
	Taints         []poolTaint       `json:"taints"`
	Label          *string           `json:"label"`
	Autoscaler     *poolAutoscaler   `json:"autoscaler"`
	FirewallID     *int              `json:"firewall_id"`
	K8sVersion     *string           `json:"k8s_version"`
	UpdateStrategy *string           `json:"update_strategy"`
	DiskEncryption *string           `json:"disk_encryption"`
}

type clusterCreateRequest struct {
	Label        string              `json:"label"`
	Region       string              `json:"region"`
	K8sVersion   string              `json:"k8s_version"`
	Tier         string              `json:"tier"`
	Tags         []string            `json:"tags"`
	NodePools    []poolCreateRequest `json:"node_pools"`
	ControlPlane *struct {
		HighAvailability *bool       `json:"high_availability"`
		AuditLogsEnabled *bool       `json:"audit_logs_enabled"`
		ACL              *aclRequest `json:"acl"`
	} `json:"control_plane"`
	VPCID     *int   `json:"vpc_id"`
	SubnetID  *int   `json:"subnet_id"`
	StackType string `json:"stack_type"`
}

// LKE stack types: the nodes' addresses on the cluster's network.
const (
	stackIPv4     = "ipv4"
	stackDualIPv6 = "ipv4-ipv6"
)

type poolUpdateRequest struct {
	Count          int                `json:"count"`
	Tags           *[]string          `json:"tags"`
	Labels         *map[string]string `json:"labels"`
	Taints         *[]poolTaint       `json:"taints"`
	Label          *string            `json:"label"`
	Autoscaler     *poolAutoscaler    `json:"autoscaler"`
	FirewallID     *int               `json:"firewall_id"`
	K8sVersion     *string            `json:"k8s_version"`
	UpdateStrategy *string            `json:"update_strategy"`
}

func (e *Emulator) lookupCluster(r *http.Request) (*lkeCluster, *apiError) {
	return e.st.clusters.lookup(r, "clusterId")
}

func (e *Emulator) lookupPool(r *http.Request) (*lkeCluster, *lkePool, *apiError) {
	c, err := e.lookupCluster(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := e.st.pools.lookup(r, "poolId")
	if err != nil || p.ClusterID != c.ID {
		return nil, nil, errNotFound()
	}
	return c, p, nil
}

// lookupNode finds a node the pool currently lists; enterprise nodes still
// hidden by the listing lag are not found either.
func (e *Emulator) lookupNode(r *http.Request) (*lkeCluster, *lkePool, *lkeNode, *apiError) {
	c, err := e.lookupCluster(r)
	if err != nil {
		return nil, nil, nil, err
	}
	p, n := e.poolOfNode(c.ID, r.PathValue("nodeId"))
	if n == nil || n.VisibleAt.After(e.clock.Now()) {
		return nil, nil, nil, errNotFound()
	}
	return c, p, n, nil
}

func (e *Emulator) createCluster(r *http.Request) (any, *apiError) {
	var req clusterCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if len(req.NodePools) == 0 {
		return nil, errInvalid("node_pools", "At least one node pool is required")
	}
	c, err := e.createClusterLocked(req)
	if err != nil {
		return nil, err
	}
	return clusterToWire(c), nil
}

// createClusterLocked validates and creates a cluster with its pools. It
// checks capacity for all pools before taking any, so a refused cluster
// leaves no trace.
func (e *Emulator) createClusterLocked(req clusterCreateRequest) (*lkeCluster, *apiError) {
	if req.Tier == "" {
		req.Tier = tierStandard
	}
	if req.Tier != tierStandard && req.Tier != tierEnterprise {
		return nil, errInvalid("tier", "Must be one of standard, enterprise")
	}
	if len(req.Label) < 1 || len(req.Label) > 32 {
		return nil, errInvalid("label", "Length must be 1-32 characters")
	}
	needed := capKubernetes
	if req.Tier == tierEnterprise {
		needed = capKubernetesEnterprise
	}
	reg, err := e.validateRegion("region", req.Region, needed)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(e.cat.lkeVersions[req.Tier], req.K8sVersion) {
		return nil, errInvalid("k8s_version", fmt.Sprintf("%q is not a supported %s tier Kubernetes version", req.K8sVersion, req.Tier))
	}
	if err := validateTags("tags", req.Tags); err != nil {
		return nil, err
	}
	if err := e.validateClusterNetwork(req, reg.ID); err != nil {
		return nil, err
	}
	var acl *controlPlaneACL
	if req.ControlPlane != nil && req.ControlPlane.ACL != nil {
		var err *apiError
		if acl, err = newACL("control_plane.acl", *req.ControlPlane.ACL); err != nil {
			return nil, err
		}
	}
	c := &lkeCluster{Region: reg.ID, Tier: req.Tier, VPCID: req.VPCID, SubnetID: req.SubnetID, StackType: req.StackType}
	if c.StackType == "" {
		c.StackType = stackIPv4
	}
	need := map[string]int{}
	for i, p := range req.NodePools {
		prefix := fmt.Sprintf("node_pools[%d].", i)
		if err := e.validatePoolCreate(prefix, c, &p); err != nil {
			return nil, err
		}
		need[p.Type] += p.Count
		if left, limited := e.st.capacity[capacityKey{reg.ID, p.Type}]; limited && left < need[p.Type] {
			return nil, errCapacity()
		}
	}
	now := e.clock.Now()
	c.ID = e.st.nextID("cluster")
	c.Label, c.K8sVersion, c.Tags = req.Label, req.K8sVersion, slices.Clone(req.Tags)
	c.HighAvailability = req.Tier == tierEnterprise
	if req.ControlPlane != nil && req.ControlPlane.HighAvailability != nil {
		c.HighAvailability = *req.ControlPlane.HighAvailability
	}
	if req.ControlPlane != nil && req.ControlPlane.AuditLogsEnabled != nil {
		c.AuditLogsEnabled = *req.ControlPlane.AuditLogsEnabled
	}
	c.EndpointID, c.AdminToken = endpointID(c.ID), rand.Text()
	if req.ControlPlane != nil && req.ControlPlane.ACL != nil {
		c.ACL = acl
	}
	c.Created, c.Updated = now, now
	e.st.clusters[c.ID] = c
	for _, p := range req.NodePools {
		// Cannot fail: capacity was checked for all pools above.
		_ = e.st.takeCapacity("type", reg.ID, p.Type, p.Count)
		e.createPoolLocked(c, p, now)
	}
	return c, nil
}

// validateClusterNetwork checks the network a cluster request brings: a stack type Linode knows,
// and a VPC (and subnet of it) in the cluster's region.
func (e *Emulator) validateClusterNetwork(req clusterCreateRequest, regionID string) *apiError {
	switch req.StackType {
	case "", stackIPv4, stackDualIPv6:
	default:
		return errInvalid("stack_type", "Must be one of ipv4, ipv4-ipv6")
	}
	if req.SubnetID != nil && req.VPCID == nil {
		return errInvalid("subnet_id", "A subnet requires its VPC's vpc_id")
	}
	if req.VPCID == nil {
		return nil
	}
	v, ok := e.st.vpcs[*req.VPCID]
	if !ok || v.Region != regionID {
		return errInvalid("vpc_id", "VPC not found in the cluster's region")
	}
	if req.SubnetID != nil {
		if s, ok := e.st.subnets[*req.SubnetID]; !ok || s.VPCID != v.ID {
			return errInvalid("subnet_id", "Subnet not found in the VPC")
		}
	}
	return nil
}

// validatePoolCreate checks a pool request for cluster c; field names are
// prefixed with prefix ("" for POST .../pools, "node_pools[i]." inside a
// cluster create).
func (e *Emulator) validatePoolCreate(prefix string, c *lkeCluster, p *poolCreateRequest) *apiError {
	if p.Count < 1 || p.Count > 100 {
		return errInvalid(prefix+"count", "Must be 1-100")
	}
	if err := e.validateLKEPlan(prefix+"type", p.Type, c.Region); err != nil {
		return err
	}
	if err := validateTags(prefix+"tags", p.Tags); err != nil {
		return err
	}
	if err := validateTaints(prefix+"taints", p.Taints); err != nil {
		return err
	}
	if p.FirewallID != nil {
		if err := e.validateFirewall(prefix+"firewall_id", *p.FirewallID); err != nil {
			return err
		}
	}
	if p.Autoscaler != nil {
		if err := validateAutoscaler(prefix+"autoscaler", *p.Autoscaler); err != nil {
			return err
		}
	}
	if c.Tier != tierEnterprise && (p.K8sVersion != nil || p.UpdateStrategy != nil) {
		return errInvalid(prefix+"k8s_version", "Per-pool versions are only supported on the enterprise tier")
	}
	if p.UpdateStrategy != nil {
		if err := validateUpdateStrategy(prefix+"update_strategy", *p.UpdateStrategy); err != nil {
			return err
		}
	}
	if p.DiskEncryption != nil && *p.DiskEncryption != "enabled" && *p.DiskEncryption != "disabled" {
		return errInvalid(prefix+"disk_encryption", "Must be one of enabled, disabled")
	}
	return nil
}

// createPoolLocked stores a validated pool and starts its nodes; capacity
// has already been taken.
func (e *Emulator) createPoolLocked(c *lkeCluster, req poolCreateRequest, now time.Time) *lkePool {
	p := &lkePool{
		ID: e.st.nextID("pool"), ClusterID: c.ID, Type: req.Type, Count: req.Count,
		Disks: slices.Clone(req.Disks), Labels: maps.Clone(req.Labels), Taints: slices.Clone(req.Taints),
		Tags: slices.Clone(req.Tags), DiskEncryption: "enabled", FirewallID: req.FirewallID,
		Autoscaler: poolAutoscaler{Min: req.Count, Max: req.Count},
	}
	setIfGiven(&p.Label, req.Label)
	setIfGiven(&p.Autoscaler, req.Autoscaler)
	setIfGiven(&p.DiskEncryption, req.DiskEncryption)
	if c.Tier == tierEnterprise {
		version, strategy := c.K8sVersion, "rolling_update"
		setIfGiven(&version, req.K8sVersion)
		setIfGiven(&strategy, req.UpdateStrategy)
		p.K8sVersion, p.UpdateStrategy = &version, &strategy
	}
	e.st.pools[p.ID] = p
	for range req.Count {
		e.addNode(c, p, now)
	}
	return p
}

// deleteCluster removes the cluster with its pools and their Linodes.
func (e *Emulator) deleteCluster(c *lkeCluster) {
	now := e.clock.Now()
	for _, p := range e.poolsOfCluster(c.ID) {
		e.removePool(p, now)
	}
	delete(e.st.clusters, c.ID)
	delete(e.st.recycles, c.ID)
}

type clusterUpdateRequest struct {
	Label      *string   `json:"label"`
	K8sVersion *string   `json:"k8s_version"`
	Tags       *[]string `json:"tags"`
}

// updateCluster renames a cluster or upgrades its control plane. An upgrade leaves existing
// nodes on their version: standard-tier nodes until they are recycled, enterprise-tier pools
// until their own version is updated.
func (e *Emulator) updateCluster(c *lkeCluster, req clusterUpdateRequest) (any, *apiError) {
	if req.Label != nil && (len(*req.Label) < 1 || len(*req.Label) > 32) {
		return nil, errInvalid("label", "Length must be 1-32 characters")
	}
	if req.K8sVersion != nil {
		versions := e.cat.lkeVersions[c.Tier]
		offered := slices.Index(versions, *req.K8sVersion)
		if offered < 0 {
			return nil, errInvalid("k8s_version", fmt.Sprintf("%q is not a supported %s tier Kubernetes version", *req.K8sVersion, c.Tier))
		}
		// Versions are listed newest first: a later index is an older version.
		if current := slices.Index(versions, c.K8sVersion); current >= 0 && offered > current {
			return nil, errInvalid("k8s_version", "Kubernetes versions cannot be downgraded")
		}
	}
	if req.Tags != nil {
		if err := validateTags("tags", *req.Tags); err != nil {
			return nil, err
		}
		c.Tags = slices.Clone(*req.Tags)
	}
	setIfGiven(&c.Label, req.Label)
	setIfGiven(&c.K8sVersion, req.K8sVersion)
	c.Updated = e.clock.Now()
	return clusterToWire(c), nil
}

// poolsToWire is the cluster's pools as listed.
func (e *Emulator) poolsToWire(c *lkeCluster) []poolWire {
	now := e.clock.Now()
	var items []poolWire
	for _, p := range e.poolsOfCluster(c.ID) {
		items = append(items, poolToWire(c, p, now))
	}
	return items
}

func (e *Emulator) getPool(r *http.Request) (any, *apiError) {
	c, p, err := e.lookupPool(r)
	if err != nil {
		return nil, err
	}
	return poolToWire(c, p, e.clock.Now()), nil
}

func (e *Emulator) createPool(c *lkeCluster, req poolCreateRequest) (any, *apiError) {
	if err := e.validatePoolCreate("", c, &req); err != nil {
		return nil, err
	}
	if err := e.st.takeCapacity("type", c.Region, req.Type, req.Count); err != nil {
		return nil, err
	}
	now := e.clock.Now()
	return poolToWire(c, e.createPoolLocked(c, req, now), now), nil
}

func (e *Emulator) updatePool(at found[*lkeCluster, *lkePool], req poolUpdateRequest) (any, *apiError) {
	c, p := at.parent, at.child
	if err := e.validatePoolUpdate(c, &req); err != nil {
		return nil, err
	}
	if req.Count > p.Count {
		if err := e.st.takeCapacity("type", c.Region, p.Type, req.Count-p.Count); err != nil {
			return nil, err
		}
	}
	now := e.clock.Now()
	if req.Count != 0 && req.Count != p.Count {
		e.resizePool(c, p, req.Count, now)
	}
	if req.Tags != nil {
		p.Tags = slices.Clone(*req.Tags)
	}
	if req.Labels != nil {
		p.Labels = maps.Clone(*req.Labels)
	}
	if req.Taints != nil {
		p.Taints = slices.Clone(*req.Taints)
	}
	setIfGiven(&p.Label, req.Label)
	setIfGiven(&p.Autoscaler, req.Autoscaler)
	if req.FirewallID != nil {
		p.FirewallID = req.FirewallID
	}
	if req.UpdateStrategy != nil {
		p.UpdateStrategy = req.UpdateStrategy
	}
	if req.K8sVersion != nil && (p.K8sVersion == nil || *req.K8sVersion != *p.K8sVersion) {
		p.K8sVersion = req.K8sVersion
		// "rolling_update" replaces the pool's nodes with nodes of the new version now;
		// "on_recycle" leaves that to the next recycle.
		if p.UpdateStrategy != nil && *p.UpdateStrategy == "rolling_update" {
			e.enqueueRecycle(c, p.Nodes, now)
		}
	}
	return poolToWire(c, p, now), nil
}

func (e *Emulator) validatePoolUpdate(c *lkeCluster, req *poolUpdateRequest) *apiError {
	if req.Count != 0 && (req.Count < 1 || req.Count > 100) {
		return errInvalid("count", "Must be 1-100")
	}
	if req.Tags != nil {
		if err := validateTags("tags", *req.Tags); err != nil {
			return err
		}
	}
	if req.Taints != nil {
		if err := validateTaints("taints", *req.Taints); err != nil {
			return err
		}
	}
	if req.Autoscaler != nil {
		if err := validateAutoscaler("autoscaler", *req.Autoscaler); err != nil {
			return err
		}
	}
	if req.FirewallID != nil {
		if err := e.validateFirewall("firewall_id", *req.FirewallID); err != nil {
			return err
		}
	}
	if c.Tier != tierEnterprise && (req.K8sVersion != nil || req.UpdateStrategy != nil) {
		return errInvalid("k8s_version", "Per-pool versions are only supported on the enterprise tier")
	}
	if req.UpdateStrategy != nil {
		return validateUpdateStrategy("update_strategy", *req.UpdateStrategy)
	}
	return nil
}

func (e *Emulator) deletePool(r *http.Request) (any, *apiError) {
	_, p, err := e.lookupPool(r)
	if err != nil {
		return nil, err
	}
	e.removePool(p, e.clock.Now())
	return emptyObject{}, nil
}

func (e *Emulator) getNode(r *http.Request) (any, *apiError) {
	_, _, n, err := e.lookupNode(r)
	if err != nil {
		return nil, err
	}
	return nodeToWire(n), nil
}

// deleteNode removes exactly that node and its Linode, and shrinks the pool.
func (e *Emulator) deleteNode(r *http.Request) (any, *apiError) {
	_, p, n, err := e.lookupNode(r)
	if err != nil {
		return nil, err
	}
	e.removeNode(p, n, e.clock.Now())
	p.Count--
	return emptyObject{}, nil
}
