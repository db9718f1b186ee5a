package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// FaultSharedAccount is the shared-account scenario: one Linode account holding an LKE-mode
// cluster, two instance-mode clusters and Linodes of no cluster, each controller scaling up,
// consolidating, collecting its garbage and scaling to zero beside the others.
const FaultSharedAccount = "shared-account"

// sharedAccountFault runs the scenario in place of a fault of one cluster: it starts clusters of
// its own (runSharedAccount).
var sharedAccountFault = chaosFault{name: FaultSharedAccount, title: "one Linode account shared by three clusters and Linodes of none"}

// sharedAccountScale is the scenario's workload and timings.
type sharedAccountScale struct {
	// peak and low are each cluster's pod counts.
	peak, low int
	// gracePeriod is every controller's GARBAGE_COLLECTION_GRACE_PERIOD.
	gracePeriod time.Duration
	// phaseWait bounds each phase.
	phaseWait time.Duration
}

var (
	fullSharedAccount  = sharedAccountScale{peak: 24, low: 8, gracePeriod: 2 * time.Minute, phaseWait: 4 * time.Minute}
	quickSharedAccount = sharedAccountScale{peak: 6, low: 2, gracePeriod: 20 * time.Second, phaseWait: 2 * time.Minute}
)

// Names of the tenants, the account's clusters with a controller.
const (
	tenantLKE       = "lke"
	tenantInstanceA = "instance-a"
	tenantInstanceB = "instance-b"
)

// sharedRegion is the region of every cluster and Linode of the account: the local clusters'.
const sharedRegion = "us-ord"

// lostNodeClaim names the NodeClaim every cluster's lost node was launched for: one name in three
// clusters, as NodePools of one name give NodeClaims of like names.
const lostNodeClaim = chaosPool + "-lost"

// SharedAccount is what the scenario measured, beyond its row.
type SharedAccount struct {
	Tenants []Tenant `json:"tenants"`
	// Strangers are the Linodes and LKE pools of no cluster's Karpenter; StrangersChanged those
	// that are gone or were retagged at the end.
	Strangers        int      `json:"strangers"`
	StrangersChanged []string `json:"strangersChanged,omitempty"`
	// Took is how long the scenario ran, from the account's creation to the last fleet's end.
	Took string `json:"took"`
	// Workload says what each cluster ran; GracePeriodSeconds is every controller's garbage
	// collection grace period.
	Workload           string  `json:"workload"`
	GracePeriodSeconds float64 `json:"gracePeriodSeconds"`
}

// Tenant is one cluster of the account, and what its controller did.
type Tenant struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Requests and Writes are what its controller sent the account, OwnWrites its writes to its
	// own Linodes and LKE cluster; Launched and Deleted its successful creates and deletes of
	// Linodes or LKE pools.
	Requests  int `json:"requests"`
	Writes    int `json:"writes"`
	OwnWrites int `json:"ownWrites"`
	Launched  int `json:"launched"`
	Deleted   int `json:"deleted"`
	// LostCollectedSeconds is how long after it was planted its lost node was gone; nil when it
	// was not, or sooner than the grace period.
	LostCollectedSeconds *float64 `json:"lostCollectedSeconds"`
	// Refusals are the LinodeNotOwned events on the NodeClaim that recorded another's Linode.
	Refusals int `json:"refusals"`
	// OthersTouched are its writes to Linodes or LKE clusters of another tenant or of no
	// cluster; Unresolved its writes to a Linode the account's ledger never saw.
	OthersTouched []string `json:"othersTouched"`
	Unresolved    int      `json:"unresolved"`
	Leaked        int      `json:"leaked"`
	Duplicates    int      `json:"duplicates"`
}

func (s *SharedAccount) meetsTargets() bool {
	for _, t := range s.Tenants {
		if t.LostCollectedSeconds != nil && *t.LostCollectedSeconds < s.GracePeriodSeconds {
			return false
		}
		// Every tenant deletes Linodes or pools of its own: a ledger that saw none of those writes
		// could not have seen others' either.
		if t.OwnWrites == 0 || len(t.OthersTouched) > 0 || t.Unresolved > 0 || t.Leaked > 0 || t.Duplicates > 0 || t.LostCollectedSeconds == nil || t.Refusals == 0 {
			return false
		}
	}
	return len(s.StrangersChanged) == 0
}

// Markdown renders the tenants' table.
func (s *SharedAccount) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## One Linode account, three clusters (took %s)\n\n%s\n\n", s.Took, s.Workload)
	b.WriteString("| Cluster | Mode | Requests | Writes (to its own) | Launched | Deleted | Lost node collected after | Refusals | Linodes and pools of others touched | Leaked | Duplicates |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range s.Tenants {
		collected := "not collected"
		if t.LostCollectedSeconds != nil {
			collected = fmt.Sprintf("%.0f s", *t.LostCollectedSeconds)
		}
		touched := fmt.Sprint(len(t.OthersTouched))
		if len(t.OthersTouched) > 0 {
			touched += ": " + oneLine(strings.Join(firstOf(t.OthersTouched, 3), "; "))
		}
		if t.Unresolved > 0 {
			touched += fmt.Sprintf(" (and %d writes to Linodes never seen)", t.Unresolved)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d (%d) | %d | %d | %s | %d | %s | %d | %d |\n",
			t.Name, t.Mode, t.Requests, t.Writes, t.OwnWrites, t.Launched, t.Deleted, collected, t.Refusals, touched, t.Leaked, t.Duplicates)
	}
	changed := "none changed"
	if len(s.StrangersChanged) > 0 {
		changed = "changed: " + strings.Join(s.StrangersChanged, "; ")
	}
	fmt.Fprintf(&b, "\nLinodes and LKE pools of no cluster's Karpenter: %d, %s. Targets: 0 touched, 0 leaked, 0 duplicates, each lost node collected by its own controller, "+
		"each NodeClaim recording another's Linode refused with an event.\n", s.Strangers, changed)
	return b.String()
}

// tenant is one cluster of the account while the scenario runs.
type tenant struct {
	name, mode string
	run        *chaosRun
	proxy      interface{ Close() }
	monitor    *lossMonitor
	// lost names the cluster's lost node: the provider ID of its Linode, or lke-pool/<id>; planted
	// is when it was.
	lost    string
	planted time.Time
}

// runSharedAccount starts one emulator account with Linodes of no cluster, and three clusters
// sharing it, each with its controller behind a proxy that names it in its requests, and takes
// every controller through a scale-up, a NodeClaim that records another's Linode, the garbage
// collection of a lost node, a consolidation and a scale to zero; then it counts, from the
// emulator's request log, each controller's writes to what is not its cluster's.
func runSharedAccount(ctx context.Context, cfg Config, _ chaosScale, f chaosFault) (row Row, err error) {
	row.Fault = f.title
	scale := fullSharedAccount
	if cfg.Quick {
		scale = quickSharedAccount
	}
	start := time.Now()
	emu := emulator.New(emulator.WithDelayScale(localcluster.DefaultDelayScale), emulator.WithRequestLogSize(500_000))
	if err := emu.Start(); err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, emu.Close()) }()
	strangers, err := seedStrangers(ctx, emu)
	if err != nil {
		return row, err
	}

	var tenants []*tenant
	lkeClusterID := 0
	book := newLedger(emu, func(in emulator.InstanceInfo) string {
		for _, t := range tenants {
			if t.run.env.Cluster.Owns(in) {
				return t.name
			}
		}
		return noTenant
	})
	logDir, err := os.MkdirTemp("", "karpenter-linode-chaos-"+f.name+"-")
	if err != nil {
		return row, err
	}
	defer func() {
		for _, t := range tenants {
			if t.monitor != nil {
				t.monitor.stop()
			}
			err = errors.Join(err, t.run.env.Stop())
			t.proxy.Close()
		}
		if err == nil && row.MeetsTargets() && !cfg.KeepLogs {
			err = os.RemoveAll(logDir)
			return
		}
		var kept []string
		for _, t := range tenants {
			dir, keepErr := keepLogs(t.run.env.Cluster.LogDir, cfg.LogDir, filepath.Join(f.name, t.name))
			err = errors.Join(err, keepErr)
			kept = append(kept, dir)
		}
		row.Note = strings.TrimPrefix(row.Note+"; logs in "+strings.Join(kept, ", "), "; ")
	}()
	cfg.progress("  starting three clusters sharing one Linode account")
	tenants, err = startTenants(ctx, cfg, scale, emu, book, logDir)
	if err != nil {
		return row, err
	}
	for _, t := range tenants {
		if t.name == tenantLKE {
			lkeClusterID = t.run.env.Cluster.LKEClusterID
		}
	}
	book.lkeOwners[lkeClusterID] = tenantLKE
	stopWatching := make(chan struct{})
	watched := make(chan struct{})
	go func() { book.watch(250*time.Millisecond, stopWatching); close(watched) }()
	defer func() { close(stopWatching); <-watched }()
	if err := plantLostNodes(ctx, emu, tenants, lkeClusterID); err != nil {
		return row, err
	}
	watchCtx, stopLostWatch := context.WithCancel(ctx)
	defer stopLostWatch()
	lost := watchLostNodes(watchCtx, emu, tenants)

	for _, t := range tenants {
		if t.monitor, err = startLossMonitor(ctx, t.run.env.Cluster); err != nil {
			return row, err
		}
	}
	cfg.progress("  every cluster scales up to %d pods", scale.peak)
	if err := eachTenant(tenants, func(t *tenant) error { return t.phase(ctx, "the scale-up", scale.peak, scale.phaseWait) }); err != nil {
		return row, err
	}
	if row.PodsNeverRunning, err = podsNotRunning(ctx, tenants); err != nil {
		return row, err
	}
	cfg.progress("  a NodeClaim in each cluster records another's Linode, and is deleted")
	refusals, err := intrude(ctx, tenants, strangers)
	if err != nil {
		return row, err
	}
	cfg.progress("  every cluster scales down to %d pods and consolidates", scale.low)
	if err := eachTenant(tenants, func(t *tenant) error {
		if err := t.phase(ctx, "the scale-down", scale.low, scale.phaseWait); err != nil {
			return err
		}
		return t.awaitConsolidated(ctx, scale.low, scale.phaseWait)
	}); err != nil {
		return row, err
	}
	collected := lost.await(scale.gracePeriod + scale.phaseWait)
	cfg.progress("  every cluster scales to zero")
	zeroAt := time.Now()
	if err := eachTenant(tenants, func(t *tenant) error { return t.phase(ctx, "the scale to zero", 0, scale.phaseWait) }); err != nil {
		return row, err
	}
	if err := eachTenant(tenants, func(t *tenant) error { return t.awaitEmpty(ctx, scale.phaseWait) }); err != nil {
		return row, err
	}
	row.RecoveryMinutes = ptr.To(math.Round(time.Since(zeroAt).Minutes()*10) / 10)
	row.WaitedMinutes = scale.phaseWait.Minutes()

	result := &SharedAccount{Strangers: strangers.len(), Took: time.Since(start).Round(time.Second).String(), GracePeriodSeconds: scale.gracePeriod.Seconds(),
		Workload: fmt.Sprintf("One emulator account (one token) holds an LKE-mode cluster on the enterprise tier (its pools' tags go to their Linodes), two instance-mode clusters, "+
			"three Linodes of no cluster (one carrying a NodeClaim's tag and no cluster's) and an LKE cluster no Karpenter manages, with a pool. "+
			"Each cluster has a NodePool %[1]q of %[2]d-vCPU plans consolidating after 0 s, and a lost node (a Linode or pool tagged for it and for a NodeClaim %[3]q that no cluster has); "+
			"each controller sends its requests through a proxy that names it in the user agent, and runs with GARBAGE_COLLECTION_GRACE_PERIOD=%[4]v. "+
			"Each cluster scales to %[5]d one-CPU pods; then a NodeClaim of each, written while its controller is down, records another's Linode "+
			"(instance-a: the LKE cluster's node, named as its NodeClaim; instance-b: instance-a's, likewise; lke: a Linode of no cluster) and is deleted; "+
			"each scales down to %[6]d pods and consolidates, collects its lost node, and scales to zero. "+
			"Writes are the controller's POST, PUT and DELETE requests, and a write touched another's when the Linode or LKE cluster it names is another cluster's or no cluster's "+
			"(by the owner the account showed when the Linode was first seen); the lost node's time is from its planting, at least the grace period.",
			chaosPool, chaosNodeCPUs, lostNodeClaim, scale.gracePeriod, scale.peak, scale.low)}
	tallies, err := book.tally([]string{tenantLKE, tenantInstanceA, tenantInstanceB})
	if err != nil {
		return row, err
	}
	for _, t := range tenants {
		t.monitor.stop()
		row.PodsLostUndrained += t.monitor.lostCount()
		tally := tallies[t.name]
		counted := Tenant{Name: t.name, Mode: t.mode, Requests: tally.requests, Writes: tally.writes, OwnWrites: tally.own, Launched: tally.launched, Deleted: tally.deleted,
			Refusals: refusals[t.name], OthersTouched: tally.othersTouched, Unresolved: tally.unresolved}
		if at, ok := collected[t.name]; ok {
			counted.LostCollectedSeconds = ptr.To(math.Round(at.Sub(t.planted).Seconds()))
		}
		if counted.Leaked, counted.Duplicates, err = harness.FleetMismatches(ctx, t.run.env.Cluster); err != nil {
			return row, err
		}
		row.LinodesLeaked += counted.Leaked
		row.DuplicateNodes += counted.Duplicates
		result.Tenants = append(result.Tenants, counted)
	}
	result.StrangersChanged = strangers.changed(emu)
	row.SharedAccount = result
	touched := 0
	for _, t := range result.Tenants {
		touched += len(t.OthersTouched)
	}
	row.Note = fmt.Sprintf("Linodes and pools of the others touched: %d; the scenario took %s", touched, result.Took)
	return row, nil
}

// startTenants starts the three clusters on the account, one after the other (three control
// planes starting at once on two cores may not start in time), each controller behind its own
// proxy, with the scenario's grace period.
func startTenants(ctx context.Context, cfg Config, scale sharedAccountScale, emu *emulator.Emulator, book *ledger, logDir string) ([]*tenant, error) {
	specs := []struct {
		name     string
		provider harness.Provider
		tune     func(*localcluster.Options)
	}{
		// The enterprise tier passes a pool's tags to its Linodes: its Karpenter nodes carry
		// NodeClaim tags like instance mode's.
		{tenantLKE, harness.Linode, func(o *localcluster.Options) { o.ClusterName, o.Tier = "shared-lke", "enterprise" }},
		{tenantInstanceA, harness.LinodeInstance, func(*localcluster.Options) {}},
		{tenantInstanceB, harness.LinodeInstance, func(*localcluster.Options) {}},
	}
	var tenants []*tenant
	for _, spec := range specs {
		proxy, err := book.proxy(spec.name)
		if err != nil {
			return tenants, err
		}
		env, err := harness.Start(ctx, harness.Config{ControllerBinary: cfg.ControllerBinary, Progress: cfg.Progress, WorkDir: logDir}, spec.provider, 5*time.Second,
			func(o *localcluster.Options) {
				o.Emulator, o.LinodeURL = emu, proxy.URL
				o.ControllerEnv = append(o.ControllerEnv, "GARBAGE_COLLECTION_GRACE_PERIOD="+scale.gracePeriod.String())
				spec.tune(o)
			})
		if err != nil {
			proxy.Close()
			return tenants, fmt.Errorf("%s: %w", spec.name, err)
		}
		mode := localcluster.ModeLKE
		if spec.provider == harness.LinodeInstance {
			mode = localcluster.ModeInstance
		}
		tenants = append(tenants, &tenant{name: spec.name, mode: mode, run: &chaosRun{env: env}, proxy: proxy})
	}
	for _, t := range tenants {
		if err := createSharedPool(ctx, t); err != nil {
			return tenants, err
		}
		if _, err := t.run.env.Deploy(ctx, chaosPool, 0); err != nil {
			return tenants, err
		}
	}
	return tenants, nil
}

// createSharedPool creates the cluster's node class and NodePool as the fault matrix's, with the
// image instance mode boots.
func createSharedPool(ctx context.Context, t *tenant) error {
	kube := t.run.env.Cluster.Kube
	nodeClass := test.LinodeNodeClass(v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: chaosPool}})
	if t.mode == localcluster.ModeInstance {
		nodeClass.Spec.Image = ptr.To(harness.InstanceImage)
	}
	nodePool := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: chaosPool}}
	nodePool.Spec.Disruption = karpv1.Disruption{
		ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		ConsolidateAfter:    karpv1.MustParseNillableDuration("0s"),
		Budgets:             []karpv1.Budget{{Nodes: "50%"}},
	}
	nodePool.Spec.Template.Spec.NodeClassRef = test.NodeClassRef(chaosPool)
	nodePool.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard", "dedicated"}},
		{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprint(chaosNodeCPUs)}},
	}
	if err := kube.Create(ctx, nodeClass); err != nil {
		return fmt.Errorf("%s: creating the node class: %w", t.name, err)
	}
	if err := kube.Create(ctx, nodePool); err != nil {
		return fmt.Errorf("%s: creating the NodePool: %w", t.name, err)
	}
	return t.run.env.WaitFor(ctx, t.name+": NodePool "+chaosPool+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool); err != nil {
			return false, err
		}
		return nodePool.StatusConditions().Root().IsTrue(), nil
	})
}

// phase scales the cluster's workload to replicas and waits until it settled.
func (t *tenant) phase(ctx context.Context, what string, replicas int, timeout time.Duration) error {
	if err := t.run.scaleTo(ctx, replicas); err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	if _, ok, err := t.run.awaitSettled(ctx, t.name+": "+what, timeout); err != nil || !ok {
		return errors.Join(err, fmt.Errorf("%s: %s did not settle within %v", t.name, what, timeout))
	}
	return nil
}

// podsPerNode is how many of the workload's one-CPU pods a node of chaosNodeCPUs holds.
const podsPerNode = chaosNodeCPUs - 1

// awaitConsolidated waits until the cluster runs no more nodes than its replicas need.
func (t *tenant) awaitConsolidated(ctx context.Context, replicas int, timeout time.Duration) error {
	needed := (replicas + podsPerNode - 1) / podsPerNode
	return t.run.env.WaitFor(ctx, fmt.Sprintf("%s: consolidated to %d nodes", t.name, needed), timeout, func(ctx context.Context) (bool, error) {
		var claims karpv1.NodeClaimList
		if err := t.run.env.Cluster.Kube.List(ctx, &claims); err != nil {
			return false, err
		}
		return len(claims.Items) <= needed && t.run.settled(ctx), nil
	})
}

// awaitEmpty waits until the cluster has no NodeClaim, and the account no Linode or pool of the
// cluster's.
func (t *tenant) awaitEmpty(ctx context.Context, timeout time.Duration) error {
	cluster := t.run.env.Cluster
	return t.run.env.WaitFor(ctx, t.name+": no NodeClaim, Linode or pool left", timeout, func(ctx context.Context) (bool, error) {
		var claims karpv1.NodeClaimList
		if err := cluster.Kube.List(ctx, &claims); err != nil {
			return false, err
		}
		return len(claims.Items) == 0 && len(cluster.Linodes()) == 0 && len(cluster.Pools()) == 0, nil
	})
}

// eachTenant runs fn for every tenant at once.
func eachTenant(tenants []*tenant, fn func(*tenant) error) error {
	errs := make([]error, len(tenants))
	var running sync.WaitGroup
	for i, t := range tenants {
		running.Go(func() { errs[i] = fn(t) })
	}
	running.Wait()
	return errors.Join(errs...)
}

func podsNotRunning(ctx context.Context, tenants []*tenant) (int, error) {
	total := 0
	for _, t := range tenants {
		n, err := t.run.podsNotRunning(ctx)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// strangers are the account's Linodes and LKE pools of no cluster's Karpenter, as they were made.
type strangers struct {
	linodes map[int][]string
	pools   map[int][]string
	// victim is a Linode of no cluster a NodeClaim records (intrude).
	victim int
}

func (s strangers) len() int { return len(s.linodes) + len(s.pools) }

// seedStrangers fills the account with what no cluster's Karpenter launched: a Linode without
// tags, one with a team's tag, one with a NodeClaim's tag and no cluster's (what the provider once
// took for its own), and an LKE cluster no Karpenter manages, with a pool.
func seedStrangers(ctx context.Context, emu *emulator.Emulator) (strangers, error) {
	s := strangers{linodes: map[int][]string{}, pools: map[int][]string{}}
	api := emu.NewClient()
	for label, tags := range map[string][]string{
		"database": nil,
		"web":      {"team-web"},
		"stray":    {nodeprovider.NodeClaimTag(lostNodeClaim)},
	} {
		created, err := api.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: sharedRegion, Type: "g6-standard-2", Label: label, Tags: tags})
		if err != nil {
			return s, fmt.Errorf("creating a Linode of no cluster: %w", err)
		}
		s.linodes[created.ID] = tags
		if label == "database" {
			s.victim = created.ID
		}
	}
	bystander, err := emu.AddLKECluster("no-karpenter", sharedRegion, "enterprise")
	if err != nil {
		return s, err
	}
	pool, err := api.CreateLKENodePool(ctx, bystander, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2", Tags: []string{"team-batch"}})
	if err != nil {
		return s, fmt.Errorf("creating an LKE pool of no cluster's Karpenter: %w", err)
	}
	s.pools[pool.ID] = pool.Tags
	return s, nil
}

// changed names the strangers that are gone or carry other tags.
func (s strangers) changed(emu *emulator.Emulator) []string {
	var out []string
	instances := emu.Instances()
	for id, tags := range s.linodes {
		in, found := find(instances, func(in emulator.InstanceInfo) bool { return in.ID == id })
		switch {
		case !found:
			out = append(out, fmt.Sprintf("Linode %d is gone", id))
		case !sameTags(in.Tags, tags):
			out = append(out, fmt.Sprintf("Linode %d carries %v, not %v", id, in.Tags, tags))
		}
	}
	pools := emu.Pools(0)
	for id, tags := range s.pools {
		pool, found := find(pools, func(p emulator.PoolInfo) bool { return p.ID == id })
		switch {
		case !found:
			out = append(out, fmt.Sprintf("LKE pool %d is gone", id))
		case !sameTags(pool.Tags, tags):
			out = append(out, fmt.Sprintf("LKE pool %d carries %v, not %v", id, pool.Tags, tags))
		}
	}
	slices.Sort(out)
	return out
}

func find[T any](items []T, match func(T) bool) (T, bool) {
	if i := slices.IndexFunc(items, match); i >= 0 {
		return items[i], true
	}
	var zero T
	return zero, false
}

func sameTags(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// plantLostNodes gives each cluster a node whose NodeClaim was lost mid-launch, tagged as its
// provider tags it, for the NodeClaim lostNodeClaim of each: its garbage collection's to delete
// once its grace period has passed, and no other's.
func plantLostNodes(ctx context.Context, emu *emulator.Emulator, tenants []*tenant, lkeClusterID int) error {
	api := emu.NewClient()
	claimTags := []string{nodeprovider.NodeClaimTag(lostNodeClaim), nodeprovider.NodePoolTag(chaosPool)}
	for _, t := range tenants {
		if t.mode == localcluster.ModeLKE {
			pool, err := api.CreateLKENodePool(ctx, lkeClusterID, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-4",
				Tags: append([]string{nodeprovider.LKEClusterTag(lkeClusterID)}, claimTags...)})
			if err != nil {
				return fmt.Errorf("%s: planting a lost node: %w", t.name, err)
			}
			t.lost, t.planted = fmt.Sprintf("lke-pool/%d", pool.ID), time.Now()
			continue
		}
		// Without an image it never boots: no kubelet of it joins, as none of a launch cut short
		// might.
		in, err := api.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: sharedRegion, Type: "g6-standard-4", Label: t.name + "-" + lostNodeClaim,
			Tags: append([]string{t.run.env.Cluster.OwnershipTag()}, claimTags...)})
		if err != nil {
			return fmt.Errorf("%s: planting a lost node: %w", t.name, err)
		}
		t.lost, t.planted = nodeprovider.ProviderID(in.ID), time.Now()
	}
	return nil
}

// lostGone reports whether the tenant's lost node is gone from the account.
func (t *tenant) lostGone(emu *emulator.Emulator) bool {
	if poolID, ok := strings.CutPrefix(t.lost, "lke-pool/"); ok {
		return !slices.ContainsFunc(emu.Pools(0), func(p emulator.PoolInfo) bool { return fmt.Sprint(p.ID) == poolID })
	}
	return !slices.ContainsFunc(emu.Instances(), func(in emulator.InstanceInfo) bool { return nodeprovider.ProviderID(in.ID) == t.lost })
}

// lostNodes hears when each cluster's lost node went.
type lostNodes struct {
	mu   sync.Mutex
	gone map[string]time.Time
	// done is closed once every lost node is gone, or the scenario ended.
	done chan struct{}
}

// watchLostNodes looks every second, until they are all gone, for the clusters' lost nodes.
func watchLostNodes(ctx context.Context, emu *emulator.Emulator, tenants []*tenant) *lostNodes {
	l := &lostNodes{gone: map[string]time.Time{}, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, t := range tenants {
				if _, seen := l.gone[t.name]; !seen && t.lostGone(emu) {
					l.gone[t.name] = time.Now()
				}
			}
			return len(l.gone) == len(tenants), nil
		})
	}()
	return l
}

// await waits up to timeout for every lost node to go, and returns when each that went did.
func (l *lostNodes) await(timeout time.Duration) map[string]time.Time {
	select {
	case <-l.done:
	case <-time.After(timeout):
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.gone)
}

// intrude has a NodeClaim of each cluster record another's Linode, as someone who may write
// NodeClaims' status could, and deletes it: in instance-a, the LKE cluster's first Karpenter node,
// named after its NodeClaim; in instance-b, one of instance-a's, likewise; in the LKE cluster, a
// Linode of no cluster. The controller must refuse the deletion with an event on the NodeClaim;
// the NodeClaim is then let go, as its operator would once they read the event. It returns the
// refusals seen, by tenant.
func intrude(ctx context.Context, tenants []*tenant, strangers strangers) (map[string]int, error) {
	byName := map[string]*tenant{}
	for _, t := range tenants {
		byName[t.name] = t
	}
	targetIn := func(owner *tenant) (int, string, error) {
		var claims karpv1.NodeClaimList
		if err := owner.run.env.Cluster.Kube.List(ctx, &claims); err != nil {
			return 0, "", err
		}
		for _, claim := range claims.Items {
			if id, err := nodeprovider.ParseProviderID(claim.Status.ProviderID); err == nil && claim.DeletionTimestamp.IsZero() {
				return id, claim.Name, nil
			}
		}
		return 0, "", fmt.Errorf("%s has no launched NodeClaim", owner.name)
	}
	intrusions := map[string]struct {
		linode int
		name   string
	}{}
	for intruder, owner := range map[string]string{tenantInstanceA: tenantLKE, tenantInstanceB: tenantInstanceA} {
		id, name, err := targetIn(byName[owner])
		if err != nil {
			return nil, err
		}
		intrusions[intruder] = struct {
			linode int
			name   string
		}{id, name}
	}
	intrusions[tenantLKE] = struct {
		linode int
		name   string
	}{strangers.victim, chaosPool + "-intruder"}

	refusals := map[string]int{}
	var mu sync.Mutex
	err := eachTenant(tenants, func(t *tenant) error {
		target := intrusions[t.name]
		n, err := t.intrude(ctx, target.linode, target.name)
		mu.Lock()
		refusals[t.name] = n
		mu.Unlock()
		return err
	})
	return refusals, err
}

// intrude creates, while the controller is down, a NodeClaim named name of the cluster's NodePool
// recording the Linode as launched, deletes it with the controller back, and waits for the
// controller's refusal, then removes the NodeClaim's finalizer; or for the NodeClaim to be gone,
// which means the controller deleted the Linode, which the request log then counts. It returns
// how many refusals the NodeClaim got.
func (t *tenant) intrude(ctx context.Context, linodeID int, name string) (int, error) {
	cluster := t.run.env.Cluster
	kube := cluster.Kube
	if err := cluster.KillController(); err != nil {
		return 0, err
	}
	nodeClaim := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{karpv1.NodePoolLabelKey: chaosPool}, Finalizers: []string{karpv1.TerminationFinalizer}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: test.NodeClassRef(chaosPool),
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}}},
		},
	}
	if err := kube.Create(ctx, nodeClaim); err != nil {
		return 0, fmt.Errorf("%s: creating NodeClaim %s: %w", t.name, name, err)
	}
	nodeClaim.Status.ProviderID = nodeprovider.ProviderID(linodeID)
	nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	if err := kube.Status().Update(ctx, nodeClaim); err != nil {
		return 0, fmt.Errorf("%s: recording Linode %d on NodeClaim %s: %w", t.name, linodeID, name, err)
	}
	if err := kube.Delete(ctx, nodeClaim); err != nil {
		return 0, err
	}
	if err := cluster.RestartController(ctx, localcluster.RestartOptions{}); err != nil {
		return 0, err
	}
	refusals, gone := 0, false
	err := t.run.env.WaitFor(ctx, t.name+": the controller refuses NodeClaim "+name+"'s deletion of Linode "+fmt.Sprint(linodeID)+", or deletes it", time.Minute, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := kube.List(ctx, &events); err != nil {
			return false, err
		}
		refusals = 0
		for _, event := range events.Items {
			if event.Reason == nodeprovider.ReasonLinodeNotOwned && event.InvolvedObject.Name == name {
				refusals++
			}
		}
		err := kube.Get(ctx, client.ObjectKeyFromObject(nodeClaim), &karpv1.NodeClaim{})
		gone = apierrors.IsNotFound(err)
		return refusals > 0 || gone, client.IgnoreNotFound(err)
	})
	if err != nil || gone {
		return refusals, err
	}
	return refusals, deleteWithoutFinalizers(ctx, kube, nodeClaim)
}
