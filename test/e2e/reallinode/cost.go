package reallinode

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/linodego"
)

// Catalogue is the hourly prices, in a region, of the Linode plans and the LKE control planes,
// as the account's API serves them (GET /linode/types, GET /lke/types).
type Catalogue struct {
	Region string
	plans  map[string]float64
	vcpus  map[string]int
	lke    map[string]float64
}

// LoadCatalogue reads the prices in region, a region's own price where it has one.
func LoadCatalogue(ctx context.Context, linode *linodego.Client, region string) (*Catalogue, error) {
	types, err := linode.ListTypes(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the plans' prices: %w", err)
	}
	lkeTypes, err := linode.ListLKETypes(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the LKE control planes' prices: %w", err)
	}
	c := &Catalogue{Region: region, plans: map[string]float64{}, vcpus: map[string]int{}, lke: map[string]float64{}}
	for _, t := range types {
		if t.Price == nil {
			continue
		}
		hourly := float64(t.Price.Hourly)
		if i := slices.IndexFunc(t.RegionPrices, func(p linodego.LinodeRegionPrice) bool { return p.ID == region }); i >= 0 {
			hourly = float64(t.RegionPrices[i].Hourly)
		}
		c.plans[t.ID] = hourly
		c.vcpus[t.ID] = t.VCPUs
	}
	for _, t := range lkeTypes {
		hourly := t.Price.Hourly
		if i := slices.IndexFunc(t.RegionPrices, func(p linodego.LKETypeRegionPrice) bool { return p.ID == region }); i >= 0 {
			hourly = t.RegionPrices[i].Hourly
		}
		c.lke[t.ID] = hourly
	}
	return c, nil
}

// VCPUs is how many vCPUs a Linode of the plan has.
func (c *Catalogue) VCPUs(plan string) (int, error) {
	vcpus, ok := c.vcpus[plan]
	if !ok || vcpus == 0 {
		return 0, fmt.Errorf("the catalogue has no plan %q", plan)
	}
	return vcpus, nil
}

// ControlPlaneType is the LKE type (GET /lke/types) a cluster of the tier is billed as, without
// high availability: lke-sa for the standard tier, lke-e for the enterprise tier.
func ControlPlaneType(tier string) string {
	if tier == TierEnterprise {
		return "lke-e"
	}
	return "lke-sa"
}

// Price is what one thing the run runs costs an hour, by the catalogue.
type Price struct {
	// What it is, e.g. "Linode 123 (node of pool 45)" or "standard control plane".
	What string
	// Type is its plan or LKE type.
	Type string
	// Hourly is its price in US dollars; Known is false when the catalogue does not list Type, and
	// then the statement says so instead of guessing.
	Hourly float64
	Known  bool
}

// PlanPrice is the plan's price.
func (c *Catalogue) PlanPrice(what, plan string) Price {
	hourly, ok := c.plans[plan]
	return Price{What: what, Type: plan, Hourly: hourly, Known: ok}
}

// ControlPlanePrice is the price of a cluster of the tier's control plane.
func (c *Catalogue) ControlPlanePrice(what, tier string) Price {
	hourly, ok := c.lke[ControlPlaneType(tier)]
	return Price{What: what, Type: ControlPlaneType(tier), Hourly: hourly, Known: ok}
}

// billedHours is how many hours Linode bills for something that ran for d: each hour begun, at
// least one.
func billedHours(d time.Duration) int {
	return max(1, int(math.Ceil(d.Hours())))
}

// Line is one priced thing in a statement: ran for Hours billed hours.
type Line struct {
	Price
	Hours int
}

// Cost is the line's cost; zero when its price is unknown.
func (l Line) Cost() float64 { return l.Hourly * float64(l.Hours) }

// Statement prices a run (the estimate before it, what it ran after it): its lines, then the total
// and the lines whose price the catalogue does not give.
func Statement(title string, lines []Line) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (prices from the Linode API's catalogue; Linode bills each hour begun):\n", title)
	total := 0.0
	var unknown []string
	for _, line := range lines {
		if !line.Known {
			fmt.Fprintf(&b, "  %-44s %-16s %3d h  price not in the catalogue\n", line.What, line.Type, line.Hours)
			unknown = append(unknown, line.Type)
			continue
		}
		fmt.Fprintf(&b, "  %-44s %-16s %3d h × $%.4f = $%.4f\n", line.What, line.Type, line.Hours, line.Hourly, line.Cost())
		total += line.Cost()
	}
	fmt.Fprintf(&b, "  total $%.2f", total)
	if len(unknown) > 0 {
		slices.Sort(unknown)
		fmt.Fprintf(&b, ", plus what Linode charges for %s, which its catalogue does not list", strings.Join(slices.Compact(unknown), ", "))
	}
	b.WriteString("\n")
	return b.String()
}

// TierPlan is what a run will do on one tier, for the estimate.
type TierPlan struct {
	Tier string
	// CreatesCluster is true when the run creates the tier's cluster: its control plane and base
	// pool are then the run's to pay for.
	CreatesCluster bool
}

// BasePoolPlan and BasePoolSize are the pool a cluster the run creates starts with, for the
// cluster's own pods (DNS, the CNI's, the CSI driver's): LKE creates no cluster without one.
const (
	BasePoolPlan = "g6-standard-2"
	BasePoolSize = 1
)

// SpecLinodes is how many Linodes of the specs' plan a tier's specs launch: two for two pods, and
// one to replace the node left after consolidation when it drifts.
const SpecLinodes = 3

// Estimate prices a run of the tiers, each expected to last under an hour.
func Estimate(c *Catalogue, plan string, tiers []TierPlan) []Line {
	var lines []Line
	for _, tier := range tiers {
		if tier.CreatesCluster {
			lines = append(lines,
				Line{Price: c.ControlPlanePrice(tier.Tier+" control plane", tier.Tier), Hours: 1},
				Line{Price: c.PlanPrice(fmt.Sprintf("%s base pool, %d Linode(s)", tier.Tier, BasePoolSize), BasePoolPlan), Hours: BasePoolSize})
		}
		lines = append(lines, Line{Price: c.PlanPrice(fmt.Sprintf("%s specs' nodes, %d Linodes", tier.Tier, SpecLinodes), plan), Hours: SpecLinodes})
	}
	return lines
}

// Ledger records what a run ran, for how long, at what price: each thing from the moment it was
// first seen to the last; the statement bills each hour begun.
type Ledger struct {
	mu    sync.Mutex
	items map[string]*ledgerItem
	order []string
}

type ledgerItem struct {
	price       Price
	first, last time.Time
}

// NewLedger is an empty ledger.
func NewLedger() *Ledger { return &Ledger{items: map[string]*ledgerItem{}} }

// Saw records that the thing named key (e.g. "linode/123") ran at the moment at, at price.
func (l *Ledger) Saw(key string, price Price, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	item, ok := l.items[key]
	if !ok {
		item = &ledgerItem{price: price, first: at}
		l.items[key] = item
		l.order = append(l.order, key)
	}
	item.last = at
}

// Lines are the ledger's things, in the order they were first seen, each billed by the hours
// begun between its first and last sighting.
func (l *Ledger) Lines() []Line {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := make([]Line, 0, len(l.order))
	for _, key := range l.order {
		item := l.items[key]
		lines = append(lines, Line{Price: item.price, Hours: billedHours(item.last.Sub(item.first))})
	}
	return lines
}

// SeeCluster records, at now, the run's Linodes in the cluster, if it still exists: the nodes of its pools that match
// (the run's), and, when the run created the cluster, its control plane and every pool. Linodes
// of a pool that LKE has not yet listed (the enterprise tier lists them late) are seen on a later
// call.
func SeeCluster(ctx context.Context, linode *linodego.Client, c *Catalogue, ledger *Ledger, cluster *Cluster, match func([]string) bool, now time.Time) error {
	pools, err := linode.ListLKENodePools(ctx, cluster.ID, nil)
	if linodego.IsNotFound(err) {
		// Deleted: it ran until it was last seen.
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the pools of LKE cluster %d: %w", cluster.ID, err)
	}
	if cluster.Created {
		ledger.Saw(fmt.Sprintf("lke/%d", cluster.ID), c.ControlPlanePrice(fmt.Sprintf("%s control plane %d", cluster.Tier, cluster.ID), cluster.Tier), now)
	}
	slices.SortFunc(pools, func(a, b linodego.LKENodePool) int { return cmp.Compare(a.ID, b.ID) })
	for _, pool := range pools {
		if !cluster.Created && !match(pool.Tags) {
			continue
		}
		for _, node := range pool.Linodes {
			if node.InstanceID == 0 {
				continue
			}
			ledger.Saw(fmt.Sprintf("linode/%d", node.InstanceID), c.PlanPrice(fmt.Sprintf("Linode %d (pool %d, %s tier)", node.InstanceID, pool.ID, cluster.Tier), pool.Type), now)
		}
	}
	return nil
}
