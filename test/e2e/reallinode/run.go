package reallinode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/linode/linodego"
	corev1 "k8s.io/api/core/v1"

	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Waits on Linode: a node boots in 2-3 minutes, a new cluster's API answers in a few; asking
// every 10 s stays far inside Linode's rate limits (200 paginated GETs a minute).
const (
	nodeTimeout     = 15 * time.Minute
	clusterTimeout  = 20 * time.Minute
	poll            = 10 * time.Second
	ledgerInterval  = 30 * time.Second
	controllerBuild = "controller"
)

// Run is one run against the account: its tag, its clusters, and what it ran.
type Run struct {
	Config Config
	// Tag is on everything the run makes (RunTag).
	Tag     string
	Started time.Time
	// WorkDir holds the controller binary, the kubeconfigs, the token file and the logs.
	WorkDir   string
	Catalogue *Catalogue
	Ledger    *Ledger
	// Out hears what the run does: the sweep, the clusters, the estimate and the statement.
	Out io.Writer

	// account is a client at v4beta, which serves both tiers' clusters, for the sweeps.
	account *linodego.Client

	mu       sync.Mutex
	clusters []*Cluster
}

// NewRun prepares a run: its tag, and the catalogue's prices in the configured region.
func NewRun(ctx context.Context, cfg Config, workDir string, out io.Writer, now time.Time) (*Run, error) {
	account := NewLinodeClient(cfg, APIVersion(TierEnterprise))
	catalogue, err := LoadCatalogue(ctx, account, cfg.Region)
	if err != nil {
		return nil, err
	}
	return &Run{Config: cfg, Tag: NewRunTag(now), Started: now, WorkDir: workDir, Catalogue: catalogue, Ledger: NewLedger(), Out: out, account: account}, nil
}

// Estimate is the statement of what the run is expected to cost, before it starts.
func (r *Run) Estimate() string {
	var tiers []TierPlan
	for _, tier := range r.Config.Tiers {
		tiers = append(tiers, TierPlan{Tier: tier, CreatesCluster: r.Config.Clusters[tier] == ""})
	}
	return Statement("Estimated cost of this run, if it ends within the hour", Estimate(r.Catalogue, r.Config.Plan, tiers))
}

// SweepKilledRuns deletes what runs killed before they could clean up left in the account.
func (r *Run) SweepKilledRuns(ctx context.Context) error {
	deleted, err := Sweep(ctx, r.account, KilledRuns(time.Now()))
	for _, line := range deleted {
		fmt.Fprintf(r.Out, "swept, left by a killed run: %s\n", line)
	}
	return err
}

// Cleanup deletes everything carrying the run's tag, and prints the cost statement of what the
// run ran. It runs at the end and on an interrupt; what a run killed outright leaves, the next
// run sweeps (SweepKilledRuns).
func (r *Run) Cleanup(ctx context.Context) error {
	r.mu.Lock()
	clusters := append([]*Cluster(nil), r.clusters...)
	r.mu.Unlock()
	var errs []error
	for _, cluster := range clusters {
		// A last look, so that the statement counts the Linodes until now.
		errs = append(errs, SeeCluster(ctx, r.account, r.Catalogue, r.Ledger, cluster, ThisRun(r.Tag), time.Now()))
	}
	deleted, err := Sweep(ctx, r.account, ThisRun(r.Tag))
	errs = append(errs, err)
	for _, line := range deleted {
		fmt.Fprintf(r.Out, "deleted: %s\n", line)
	}
	fmt.Fprint(r.Out, Statement("Cost of this run", r.Ledger.Lines()))
	return errors.Join(errs...)
}

// Tier is the lifecycle specs' set-up for the tier: its cluster found or created, its
// kubeconfig fetched through the Linode API, the CRDs installed and the controller started, the
// run's ledger kept; each undone by the clean-up it returns.
func (r *Run) Tier(ctx context.Context, tier string) (*lifecycle.Environment, func(context.Context) error, error) {
	linode := NewLinodeClient(r.Config, APIVersion(tier))
	var cluster *Cluster
	var err error
	if label := r.Config.Clusters[tier]; label != "" {
		cluster, err = FindCluster(ctx, linode, label, tier)
	} else {
		cluster, err = CreateCluster(ctx, linode, r.Config.Region, tier, r.Tag, time.Now())
	}
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	r.clusters = append(r.clusters, cluster)
	r.mu.Unlock()
	fmt.Fprintf(r.Out, "%s tier: LKE cluster %d (%s)\n", tier, cluster.ID, cluster.Label)

	watchCtx, stopWatching := context.WithCancel(context.WithoutCancel(ctx))
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if err := SeeCluster(watchCtx, linode, r.Catalogue, r.Ledger, cluster, ThisRun(r.Tag), time.Now()); err != nil && watchCtx.Err() == nil {
				fmt.Fprintf(r.Out, "reading the run's Linodes for the statement: %v\n", err)
			}
			select {
			case <-watchCtx.Done():
				return
			case <-time.After(ledgerInterval):
			}
		}
	}()
	var controller *Controller
	// A cluster the run created goes as soon as its tier's specs are done, rather than run on
	// through the next tier's; Cleanup's sweep takes it if this fails.
	cleanUp := func(ctx context.Context) error {
		stopWatching()
		<-watched
		var errs []error
		if controller != nil {
			errs = append(errs, controller.Stop())
		}
		if cluster.Created {
			errs = append(errs, SeeCluster(ctx, linode, r.Catalogue, r.Ledger, cluster, ThisRun(r.Tag), time.Now()))
			if err := linode.DeleteLKECluster(ctx, cluster.ID); err != nil && !linodego.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting LKE cluster %d (%s): %w", cluster.ID, cluster.Label, err))
			} else {
				fmt.Fprintf(r.Out, "deleted: LKE cluster %d (%s, %s tier)\n", cluster.ID, cluster.Label, cluster.Tier)
			}
		}
		return errors.Join(errs...)
	}

	env, err := r.startTier(ctx, linode, cluster, func(c *Controller) { controller = c })
	if err != nil {
		// The set-up may have failed because it was interrupted: the clean-up goes on regardless.
		return nil, nil, errors.Join(err, cleanUp(context.WithoutCancel(ctx)))
	}
	return env, cleanUp, nil
}

func (r *Run) startTier(ctx context.Context, linode *linodego.Client, cluster *Cluster, started func(*Controller)) (*lifecycle.Environment, error) {
	waitCtx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	kubeconfig, err := Kubeconfig(waitCtx, linode, cluster.ID, poll)
	if err != nil {
		return nil, err
	}
	vcpus, err := r.Catalogue.VCPUs(r.Config.Plan)
	if err != nil {
		return nil, err
	}
	kube, err := KubeClient(kubeconfig)
	if err != nil {
		return nil, err
	}
	// A new cluster's API server answers some minutes after its kubeconfig is served.
	for {
		var nodes corev1.NodeList
		err := kube.List(waitCtx, &nodes)
		if err == nil {
			break
		}
		select {
		case <-waitCtx.Done():
			return nil, fmt.Errorf("waiting for LKE cluster %d's API server: %w", cluster.ID, err)
		case <-time.After(poll):
		}
	}
	if err := InstallCRDs(ctx, kube); err != nil {
		return nil, err
	}
	binary := filepath.Join(r.WorkDir, controllerBuild)
	if err := localcluster.BuildController(ctx, binary); err != nil {
		return nil, err
	}
	controller, err := StartController(ctx, binary, r.WorkDir, r.Config, cluster.Label, cluster.Tier, kubeconfig)
	if err != nil {
		return nil, err
	}
	started(controller)
	return &lifecycle.Environment{
		Kube:         kube,
		Linode:       linode,
		LKEClusterID: cluster.ID,
		RunTag:       r.Tag,
		Plan:         r.Config.Plan,
		PodCPU:       lifecycle.PodCPU(vcpus),
		NodeTimeout:  nodeTimeout,
		Poll:         poll,
	}, nil
}
