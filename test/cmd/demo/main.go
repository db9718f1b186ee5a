// Command demo is `make demo`: the README's walk-through, for real, on this machine and without a
// Linode account. It starts a local cluster (package localcluster: real Kubernetes components,
// kwok kubelets, the Linode API emulator and the controller), then
//
//  1. applies the default LinodeNodeClass and NodePool (examples/default.yaml),
//  2. asks karpenter-linode plan's planner what Karpenter will launch for inflate's 5 replicas,
//     then deploys inflate (pause containers asking for 1 CPU each) and scales it to 5,
//  3. waits for every pod to run and shows the nodes Karpenter launched, with their prices,
//  4. deletes a node by hand and follows the finalizer as it drains the node and the Linode goes,
//  5. deletes the deployment and follows consolidation as it removes the empty nodes,
//
// and ends with a timeline of the scale-up, the fleet's cost, and the planner's answer beside the
// fleet Karpenter launched. It exits 0 only when every step happened and the emulator's account
// is empty at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

func main() {
	var (
		keep      = flag.Bool("keep", false, "leave the cluster running at the end, for kubectl, until Ctrl-C")
		timeScale = flag.Float64("time-scale", localcluster.DefaultDelayScale, "multiply Linode's boot delays (about 160 s from create to running) by this factor")
		mode      = flag.String("mode", localcluster.ModeLKE, "controller mode: lke (LKE node pools) or instance (plain Linodes)")
		replicas  = flag.Int("replicas", 5, "replicas of the inflate deployment")
	)
	flag.Parse()
	// envtest and the clients log through controller-runtime; the steps are this command's output
	// and the components keep their own logs.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *mode, *timeScale, *replicas, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, mode string, timeScale float64, replicas int, keep bool) (err error) {
	start := time.Now()
	fmt.Printf("Karpenter on Linode, the README walk-through on a local cluster (%s mode).\n", mode)
	fmt.Printf("Linode boot delays are scaled by %g: a node takes about %.0f s from launch to running instead of about 160 s.\n\n",
		timeScale, 160*timeScale)

	if err := localcluster.EnsureBinaries(ctx, os.Stdout); err != nil {
		return err
	}
	workDir, err := os.MkdirTemp("", "karpenter-linode-demo-")
	if err != nil {
		return err
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Mode: mode, DelayScale: timeScale, WorkDir: workDir,
		Progress: localcluster.ConsoleProgress(os.Stdout, start),
	})
	if err != nil {
		return fmt.Errorf("starting the local cluster: %w (logs in %s)", err, workDir)
	}
	fmt.Printf("\nkubectl works too: export KUBECONFIG=%s; alias kubectl=%s\n", cluster.KubeconfigPath, cluster.Kubectl)
	defer func() {
		if keep && err == nil {
			fmt.Printf("\n--keep: the cluster keeps running; Ctrl-C stops it.\n  export KUBECONFIG=%s\n  alias kubectl=%s\n", cluster.KubeconfigPath, cluster.Kubectl)
			<-ctx.Done()
		}
		if stopErr := cluster.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		} else if err == nil {
			_ = os.RemoveAll(workDir)
		}
		if err != nil {
			err = fmt.Errorf("%w\ncomponent and controller logs: %s", err, workDir)
		}
	}()

	d := newDemo(ctx, mode, cluster, replicas, timeScale)
	return d.run(ctx)
}
