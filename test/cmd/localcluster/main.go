// Command localcluster runs the whole system on this machine, without a Linode account, and
// leaves it running for kubectl until interrupted: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager, kwok, the Linode API emulator with an LKE cluster, the node simulator
// and the controller (see package localcluster).
//
//	go run ./test/cmd/localcluster --time-scale 0.03
//	export KUBECONFIG=<the path it prints>
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts localcluster.Options
	flag.StringVar(&opts.ClusterName, "cluster-name", "demo", "label of the LKE cluster seeded in the emulator")
	flag.StringVar(&opts.Region, "region", "us-ord", "region of the LKE cluster")
	flag.StringVar(&opts.Tier, "tier", "standard", "LKE tier: standard or enterprise")
	flag.StringVar(&opts.Mode, "mode", localcluster.ModeLKE, "controller mode: lke or instance")
	flag.Float64Var(&opts.DelayScale, "time-scale", localcluster.DefaultDelayScale,
		"multiply Linode's boot delays (160 s from create to running) by this factor")
	flag.StringVar(&opts.ControllerBinary, "controller", "", "controller binary to run (default: build cmd/controller)")
	workDir := flag.String("workdir", "", "directory for the kubeconfig and logs (default: a new temporary directory)")
	flag.Parse()
	// envtest and the clients log through controller-runtime; the components keep their own logs.
	ctrllog.SetLogger(logr.Discard())

	if *workDir == "" {
		dir, err := os.MkdirTemp("", "karpenter-linode-cluster-")
		if err != nil {
			return err
		}
		*workDir = dir
	}
	opts.WorkDir = *workDir
	opts.Progress = localcluster.ConsoleProgress(os.Stdout, time.Now())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localcluster.EnsureBinaries(ctx, os.Stdout); err != nil {
		return err
	}
	cluster, err := localcluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf(`
The cluster is running (Kubernetes %s, Linode API emulator at %s).

  export KUBECONFIG=%s
  alias kubectl=%s
  kubectl apply -f examples/default.yaml

The controller runs as the chart's ServiceAccount, with the chart's RBAC; its kubeconfig is
%s (kubectl --kubeconfig=... auth can-i --list).

Logs:  %s
Ctrl-C stops everything.
`, component.KubernetesVersion, cluster.Emulator.URL(), cluster.KubeconfigPath, cluster.Kubectl,
		cluster.ControllerKubeconfigPath, filepath.Join(cluster.LogDir, "*.log"))

	select {
	case <-ctx.Done():
	case <-exited(cluster):
		fmt.Fprintln(os.Stderr, cluster.CheckHealthy())
	}
	fmt.Println("stopping...")
	return cluster.Stop()
}

// exited is closed when a component or the controller has died, so that a broken cluster does
// not sit there looking alive.
func exited(cluster *localcluster.Cluster) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for cluster.CheckHealthy() == nil {
			time.Sleep(time.Second)
		}
		close(done)
	}()
	return done
}
