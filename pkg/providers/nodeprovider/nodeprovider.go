// Package nodeprovider is the seam between the cloud provider and the two ways of launching a
// node: LKE node pools (pkg/providers/lke) and plain Linodes (pkg/providers/instance). The
// cloud provider speaks only this interface, so everything mode-specific stays in one package.
package nodeprovider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Provider launches, finds and removes the Linodes behind NodeClaims.
type Provider interface {
	// Create launches one node for the NodeClaim on the cheapest launchable offering among
	// instanceTypes. It is idempotent: a retry for the same NodeClaim finds the node an earlier,
	// interrupted attempt launched instead of launching a second one.
	Create(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (*Node, error)
	// Get returns the node with the provider ID, or a cloudprovider.NodeClaimNotFoundError when
	// the API says it no longer exists.
	Get(ctx context.Context, providerID string) (*Node, error)
	// List returns every node this provider launched for this cluster.
	List(ctx context.Context) ([]*Node, error)
	// Delete starts removing the node; it returns a cloudprovider.NodeClaimNotFoundError once the
	// API says the node is gone, and any other error (rate limit, outage) as is, to be retried.
	Delete(ctx context.Context, node *Node) error
	// Reboot restarts the node's Linode in place.
	Reboot(ctx context.Context, node *Node) error
}

// DriftDetector is implemented by providers whose nodes can drift from their NodeClass in ways
// the NodeClass's spec hash cannot see: settings changed on the node behind Karpenter's back, or
// versions that move on the cluster's side.
type DriftDetector interface {
	// IsDrifted returns why the node no longer matches the NodeClass, or "" when it still does.
	IsDrifted(ctx context.Context, nodeClass *v1.LinodeNodeClass, node *Node) (cloudprovider.DriftReason, error)
}

// Node is a Linode launched for a NodeClaim, in either mode.
type Node struct {
	// InstanceID is the Linode's id; 0 while LKE has not yet created the Linode for a pool node.
	InstanceID int
	// Label is the Linode's label, empty while unknown: the NodeClaim's name in instance mode,
	// lke<clusterID>-<nodeID> (its Node's name) in LKE mode.
	Label string
	// NodeClaimName and NodePoolName are the Karpenter objects the node was launched for, read
	// back from the node's tags.
	NodeClaimName string
	NodePoolName  string
	// NodeClaimTag is the tag naming the one NodeClaim the node belongs to (see BelongsTo); empty
	// when it names none, or more than one.
	NodeClaimTag string
	// InstanceType is the Linode plan, e.g. g6-dedicated-8.
	InstanceType string
	// Region is the Linode region, which is also the node's zone.
	Region string
	// Status is the Linode's status (provisioning, booting, running, ...), empty while unknown.
	Status string
	// Tags are all the Linode tags on the node or its pool.
	Tags []string
	// Created is when the node was created; zero when the API does not say (LKE pools carry no
	// creation time).
	Created time.Time
	// LKE identifies the pool and pool node in LKE mode; nil in instance mode.
	LKE *LKENode
	// KubeletVersion is the version the node's kubelet reports, e.g. v1.33.4, read from the
	// Kubernetes Node when the cloud provider checks drift; empty elsewhere and before the node
	// registers.
	KubeletVersion string
	// Instance describes the plain Linode in instance mode; nil in LKE mode.
	Instance *InstanceNode
}

// InstanceNode is what instance mode knows of a node's Linode beyond the common fields.
type InstanceNode struct {
	// Image is the image the Linode was deployed from.
	Image string
	// PlacementGroupID is the Linode's placement group, 0 when none.
	PlacementGroupID int
	// LinodeInterfaces is whether the Linode's network interfaces are its own (Linode
	// interfaces) rather than its configuration profile's.
	LinodeInterfaces bool
	// LKEClusterID is the LKE cluster the Linode is a node of, 0 for a plain Linode: such a
	// Linode is never instance mode's.
	LKEClusterID int
}

// LKENode locates a node inside an LKE cluster.
type LKENode struct {
	ClusterID int
	PoolID    int
	// NodeID is the pool node's id, "<poolID>-<hex>"; empty until LKE lists the node.
	NodeID string
	// PoolSize is how many nodes the pool holds; a pool of more than one node is not ours alone
	// to delete.
	PoolSize int
	// K8sVersion is the pool's Kubernetes version (LKE Enterprise).
	K8sVersion string
	// FirewallID is the pool's firewall, 0 when none.
	FirewallID int
}

// ProviderIDPrefix starts every Linode provider ID.
const ProviderIDPrefix = "linode://"

// ProviderID is the Kubernetes provider ID of the node's Linode, "" while it has none.
func (n *Node) ProviderID() string {
	if n.InstanceID == 0 {
		return ""
	}
	return ProviderID(n.InstanceID)
}

// ProviderID formats a Linode id as a Kubernetes provider ID.
func ProviderID(instanceID int) string {
	return ProviderIDPrefix + strconv.Itoa(instanceID)
}

// ParseProviderID returns the Linode id in a provider ID of the form linode://<id>.
func ParseProviderID(providerID string) (int, error) {
	id, err := strconv.Atoi(strings.TrimPrefix(providerID, ProviderIDPrefix))
	// Only the form ProviderID writes: "linode://+7" or "linode://007" would name Linode 7 too,
	// and core tells Nodes apart by the exact string.
	if err != nil || id <= 0 || ProviderID(id) != providerID {
		return 0, fmt.Errorf("provider ID %q is not of the form %s<linode id>", providerID, ProviderIDPrefix)
	}
	return id, nil
}
