package instancetype

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/awslabs/operatorpkg/option"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
)

// Provider answers which Linode plans a NodeClass can launch, at what price, with what
// allocatable resources.
type Provider interface {
	// List returns every plan the mode can launch (unavailable ones too, with no available
	// offering) for the NodeClass. The result for a warm catalogue is memoised: callers must not
	// modify it.
	List(ctx context.Context, nodeClass *v1.LinodeNodeClass) ([]*cloudprovider.InstanceType, error)
	// UpdateCatalogue re-reads plans, regions and availability from the API; on failure it keeps
	// the last good catalogue and returns the error.
	UpdateCatalogue(ctx context.Context) error
}

// ErrNoCatalogue is returned by List until the catalogue has been read once.
var ErrNoCatalogue = errors.New("the Linode plan catalogue has not been read yet; check that the Linode API is reachable and the token valid")

// IsNoCatalogue reports whether err says the catalogue has not been read yet.
func IsNoCatalogue(err error) bool { return errors.Is(err, ErrNoCatalogue) }

// DefaultHypervisorMemoryPercent is the share of a plan's memory the node never sees when nothing
// else is configured; it matches the operator's HYPERVISOR_MEMORY_PERCENT default.
const DefaultHypervisorMemoryPercent = 2.5

// Options tune the default provider.
type Options struct {
	// HypervisorMemoryPercent is the share of a plan's memory kept by the hypervisor and the guest
	// kernel, used until a registered Node of the plan reports its real memory.
	HypervisorMemoryPercent float64
}

// WithHypervisorMemoryPercent sets Options.HypervisorMemoryPercent.
func WithHypervisorMemoryPercent(percent float64) option.Function[Options] {
	return func(o *Options) { o.HypervisorMemoryPercent = percent }
}

// DefaultProvider builds instance types from the catalogue it last read successfully.
type DefaultProvider struct {
	api         linode.CatalogueAPI
	region      string
	mode        mode.Mode
	unavailable *cache.UnavailableOfferings
	options     Options
	capacity    *learnedCapacity

	// catalogue is the last catalogue read successfully; nil until the first success.
	catalogue atomic.Pointer[catalogue]

	mu   sync.RWMutex
	memo map[string]*memoEntry
}

var _ Provider = (*DefaultProvider)(nil)

// memoEntry is one NodeClass's instance types and what they were computed from. The kubelet
// settings are compared by value: they are the only part of a NodeClass that changes a plan's
// allocatable resources, with the class's disk layout, which rules out plans and sizes the
// ephemeral storage.
type memoEntry struct {
	kubelet        *v1.KubeletConfiguration
	disks          diskLayout
	catalogueSeq   uint64
	unavailableSeq uint64
	capacitySeq    uint64
	instanceTypes  []*cloudprovider.InstanceType
}

// NewDefaultProvider returns a provider for the cluster's region. It knows no plans until
// UpdateCatalogue succeeds.
func NewDefaultProvider(api linode.CatalogueAPI, region string, mode mode.Mode, unavailable *cache.UnavailableOfferings, opts ...option.Function[Options]) *DefaultProvider {
	o := option.Resolve(append([]option.Function[Options]{WithHypervisorMemoryPercent(DefaultHypervisorMemoryPercent)}, opts...)...)
	return &DefaultProvider{
		api:         api,
		region:      region,
		mode:        mode,
		unavailable: unavailable,
		options:     *o,
		capacity:    newLearnedCapacity(),
		memo:        map[string]*memoEntry{},
	}
}

// List returns the instance types of every plan the mode can launch, for the NodeClass. In
// instance mode that leaves out the plans whose disk cannot hold the class's disks (DiskNeedMB),
// so that Karpenter never plans a node on one, and a node's ephemeral storage is the disk that
// holds the kubelet's directory.
func (p *DefaultProvider) List(_ context.Context, nodeClass *v1.LinodeNodeClass) ([]*cloudprovider.InstanceType, error) {
	cat := p.catalogue.Load()
	if cat == nil {
		return nil, ErrNoCatalogue
	}
	disks := layoutOf(&nodeClass.Spec, p.mode)
	unavailableSeq, capacitySeq := p.unavailable.SeqNum(), p.capacity.seqNum()
	fresh := func(entry *memoEntry) bool {
		return entry != nil && entry.catalogueSeq == cat.seq && entry.unavailableSeq == unavailableSeq &&
			entry.capacitySeq == capacitySeq && entry.disks == disks && reflect.DeepEqual(entry.kubelet, nodeClass.Spec.Kubelet)
	}
	p.mu.RLock()
	entry := p.memo[nodeClass.Name]
	p.mu.RUnlock()
	if fresh(entry) {
		return entry.instanceTypes, nil
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if entry := p.memo[nodeClass.Name]; fresh(entry) {
		return entry.instanceTypes, nil
	}
	instanceTypes := make([]*cloudprovider.InstanceType, 0, len(cat.plans))
	for _, plan := range cat.plans {
		if plan.Disk < disks.needMB {
			continue
		}
		instanceTypes = append(instanceTypes, p.newInstanceType(cat, plan, nodeClass.Spec.Kubelet, disks))
	}
	p.memo[nodeClass.Name] = &memoEntry{
		kubelet:        nodeClass.Spec.Kubelet.DeepCopy(),
		disks:          disks,
		catalogueSeq:   cat.seq,
		unavailableSeq: unavailableSeq,
		capacitySeq:    capacitySeq,
		instanceTypes:  instanceTypes,
	}
	return instanceTypes, nil
}

// UpdateCatalogue re-reads the plans, the region and its plan availability. On failure the last
// good catalogue stays in use.
func (p *DefaultProvider) UpdateCatalogue(ctx context.Context) error {
	next, err := readCatalogue(ctx, p.api, p.region, p.mode)
	if err != nil {
		return fmt.Errorf("reading the Linode plan catalogue for %s: %w", p.region, err)
	}
	if previous := p.catalogue.Load(); previous != nil {
		next.seq = previous.seq + 1
	}
	p.catalogue.Store(next)
	catalogueLastRefresh.Set(float64(next.readAt.Unix()), nil)
	return nil
}
