// Package linode is the provider's only door to the Linode API: a narrow interface over the
// linodego client, the client's construction, and the classification of its errors.
//
// Everything else in the project depends on API, never on *linodego.Client, so a reader sees
// in one place every Linode call the provider can make, and each request body it sends.
package linode

import (
	"context"

	"github.com/linode/linodego"
)

// API is the Linode API as the provider uses it: linodego's calls, and the provider's own request
// bodies where linodego's would send what Linode refuses (requests.go). Client implements it;
// tests use the same client aimed at the emulator (test/emulator), never a mock.
type API interface {
	CatalogueAPI
	LKEAPI
	InstanceAPI
	NetworkingAPI
	AccountAPI
}

// CatalogueAPI reads what Linode sells and where.
type CatalogueAPI interface {
	ListTypes(ctx context.Context, opts *linodego.ListOptions) ([]linodego.LinodeType, error)
	ListRegions(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Region, error)
	GetRegion(ctx context.Context, regionID string) (*linodego.Region, error)
	ListRegionsAvailability(ctx context.Context, opts *linodego.ListOptions) ([]linodego.RegionAvailability, error)
	ListImages(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Image, error)
	GetImage(ctx context.Context, imageID string) (*linodego.Image, error)
	ListLKEVersions(ctx context.Context, opts *linodego.ListOptions) ([]linodego.LKEVersion, error)
}

// LKEAPI manages LKE clusters' node pools and their nodes.
type LKEAPI interface {
	ListLKEClusters(ctx context.Context, opts *linodego.ListOptions) ([]linodego.LKECluster, error)
	GetLKECluster(ctx context.Context, clusterID int) (*linodego.LKECluster, error)
	ListLKENodePools(ctx context.Context, clusterID int, opts *linodego.ListOptions) ([]linodego.LKENodePool, error)
	GetLKENodePool(ctx context.Context, clusterID, poolID int) (*linodego.LKENodePool, error)
	CreateLKENodePool(ctx context.Context, clusterID int, opts NodePoolCreateOptions) (*linodego.LKENodePool, error)
	UpdateLKENodePool(ctx context.Context, clusterID, poolID int, opts linodego.LKENodePoolUpdateOptions) (*linodego.LKENodePool, error)
	DeleteLKENodePool(ctx context.Context, clusterID, poolID int) error
	GetLKENodePoolNode(ctx context.Context, clusterID int, nodeID string) (*linodego.LKENodePoolLinode, error)
	DeleteLKENodePoolNode(ctx context.Context, clusterID int, nodeID string) error
}

// InstanceAPI manages plain Linodes (instance mode) and reboots LKE nodes' Linodes.
type InstanceAPI interface {
	ListInstances(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Instance, error)
	GetInstance(ctx context.Context, linodeID int) (*linodego.Instance, error)
	CreateInstance(ctx context.Context, opts InstanceCreateOptions) (*linodego.Instance, error)
	DeleteInstance(ctx context.Context, linodeID int) error
	RebootInstance(ctx context.Context, linodeID int, configID int) error
	ListInstanceConfigs(ctx context.Context, linodeID int, opts *linodego.ListOptions) ([]linodego.InstanceConfig, error)
	ListInterfaces(ctx context.Context, linodeID int, opts *linodego.ListOptions) ([]linodego.LinodeInterface, error)
	GetInstanceIPAddresses(ctx context.Context, linodeID int) (*linodego.InstanceIPAddressResponse, error)
	InstanceDiskAPI
}

// InstanceDiskAPI adds a new Linode's data disks to its boot profile before it first boots.
type InstanceDiskAPI interface {
	ListInstanceDisks(ctx context.Context, linodeID int, opts *linodego.ListOptions) ([]linodego.InstanceDisk, error)
	CreateInstanceDisk(ctx context.Context, linodeID int, opts linodego.InstanceDiskCreateOptions) (*linodego.InstanceDisk, error)
	UpdateInstanceDisk(ctx context.Context, linodeID int, diskID int, opts linodego.InstanceDiskUpdateOptions) (*linodego.InstanceDisk, error)
	UpdateInstanceConfig(ctx context.Context, linodeID, configID int, opts ConfigUpdateOptions) (*linodego.InstanceConfig, error)
	BootInstance(ctx context.Context, linodeID int, configID int) error
}

// NetworkingAPI resolves the firewalls, VPC subnets and placement groups a NodeClass names, and
// routes the IPv6 ranges it asks for.
type NetworkingAPI interface {
	GetFirewall(ctx context.Context, firewallID int) (*linodego.Firewall, error)
	ListVPCs(ctx context.Context, opts *linodego.ListOptions) ([]linodego.VPC, error)
	ListVPCSubnets(ctx context.Context, vpcID int, opts *linodego.ListOptions) ([]linodego.VPCSubnet, error)
	GetVPCSubnet(ctx context.Context, vpcID, subnetID int) (*linodego.VPCSubnet, error)
	ListPlacementGroups(ctx context.Context, opts *linodego.ListOptions) ([]linodego.PlacementGroup, error)
	GetPlacementGroup(ctx context.Context, id int) (*linodego.PlacementGroup, error)
	CreatePlacementGroup(ctx context.Context, opts linodego.PlacementGroupCreateOptions) (*linodego.PlacementGroup, error)
	CreateIPv6Range(ctx context.Context, opts linodego.IPv6RangeCreateOptions) (*linodego.IPv6Range, error)
}

// AccountAPI reads what Linode reports about the account's Linodes: scheduled host maintenance,
// and events such as a host restarting a Linode; and the account's settings, such as the
// interface generations new Linodes may have.
type AccountAPI interface {
	GetAccountSettings(ctx context.Context) (*linodego.AccountSettings, error)
	ListMaintenances(ctx context.Context, opts *linodego.ListOptions) ([]linodego.AccountMaintenance, error)
	ListEvents(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Event, error)
}
