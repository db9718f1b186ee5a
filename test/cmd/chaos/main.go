// Command chaos is `make chaos` (and, with -quick, CI's short version, `make chaos-quick`): it
// runs the fault matrix of package test/chaos on local clusters, one fault after another, and
// writes a table of what each fault cost a user (pods never running, pods evicted without drain,
// Linodes leaked, duplicate nodes, minutes to recover) into a results directory and to stdout.
// It exits 1 when a fault misses a target or could not be measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linode/karpenter-provider-linode/test/chaos"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

func main() {
	command := harness.NewCommand("chaos")
	var (
		quick  = flag.Bool("quick", false, "CI's short version: three faults, 20 pods, 30-second faults, and the shared account with 6 pods a cluster, all at once")
		faults = flag.String("faults", "", "comma-separated faults to run, of "+strings.Join(chaos.Faults, ", ")+" (default all, or the short version's)")
		modes  = flag.String("modes", "", "comma-separated modes to run each fault in, of lke, instance (default both, or the short version's)")
		keep   = flag.Bool("keep", false, "keep every fault's cluster logs in the results directory (logs/<fault>/), not only those of faults that miss a target")
	)
	flag.Parse()
	names := command.Names("fault", *faults, chaos.Faults)
	var providers []harness.Provider
	for _, mode := range command.Names("mode", *modes, []string{"lke", "instance"}) {
		providers = append(providers, map[string]harness.Provider{"lke": harness.Linode, "instance": harness.LinodeInstance}[mode])
	}
	command.Run(func(ctx context.Context) error { return run(ctx, command, *quick, *keep, names, providers) })
}

func run(ctx context.Context, command *harness.Command, quick, keep bool, faults []string, modes []harness.Provider) error {
	start := command.Started()
	progress := localcluster.ConsoleProgress(os.Stdout, start)
	binDir, err := os.MkdirTemp("", "karpenter-linode-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	cfg := chaos.Config{Quick: quick, Faults: faults, Modes: modes, ControllerBinary: filepath.Join(binDir, "controller"), Progress: progress,
		LogDir: filepath.Join(command.Dir(), "logs"), KeepLogs: keep}
	progress("building the controller (cmd/controller)")
	if err := localcluster.BuildController(ctx, cfg.ControllerBinary); err != nil {
		return err
	}
	rows, settings, runErr := chaos.Run(ctx, cfg)
	report := &chaos.Report{Started: start, Command: command.Line(), Machine: harness.ThisMachine(), Settings: settings, Rows: rows,
		Duration: time.Since(start).Round(time.Second).String()}
	if err := command.WriteReport(report); err != nil {
		return errors.Join(runErr, err)
	}
	var missed []string
	for _, row := range rows {
		if !row.MeetsTargets() {
			missed = append(missed, row.Fault)
		}
	}
	if len(missed) > 0 {
		runErr = errors.Join(runErr, fmt.Errorf("targets missed for: %s", strings.Join(missed, "; ")))
	}
	return runErr
}
