// Command chaos is `make chaos` (and, with -quick, CI's short version in `make bench-quick`): it
// runs the fault matrix of package test/bench on local clusters, one fault after another, and
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
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
	"github.com/linode/karpenter-provider-linode/test/bench"
)

func main() {
	var (
		quick  = flag.Bool("quick", false, "CI's short version: two faults, 20 pods, 30-second faults (about 3 minutes)")
		out    = flag.String("out", "", "results directory (default results/chaos-<UTC time>)")
		faults = flag.String("faults", "", "comma-separated faults to run, of "+strings.Join(bench.ChaosFaults, ", ")+" (default all, or the short version's)")
		keep   = flag.Bool("keep", false, "keep every fault's cluster logs in the results directory (logs/<fault>/), not only those of faults that miss a target")
	)
	flag.Parse()
	var names []string
	if *faults != "" {
		names = strings.Split(*faults, ",")
		for _, name := range names {
			if !slices.Contains(bench.ChaosFaults, name) {
				fmt.Fprintf(os.Stderr, "chaos: unknown fault %q; known: %s\n", name, strings.Join(bench.ChaosFaults, ", "))
				os.Exit(2)
			}
		}
	}
	start := time.Now()
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", "chaos-"+start.UTC().Format("20060102T150405Z"))
	}
	// Informers and core's code log through controller-runtime; the table is the output here.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, start, *quick, *keep, names, dir); err != nil {
		fmt.Fprintf(os.Stderr, "\nchaos: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, start time.Time, quick, keep bool, faults []string, dir string) error {
	command := strings.Join(append([]string{"go run ./cmd/chaos"}, os.Args[1:]...), " ")
	progress := localcluster.ConsoleProgress(os.Stdout, start)
	binDir, err := os.MkdirTemp("", "karpenter-linode-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	cfg := bench.ChaosConfig{Quick: quick, Faults: faults, ControllerBinary: filepath.Join(binDir, "controller"), Progress: progress,
		LogDir: filepath.Join(dir, "logs"), KeepLogs: keep}
	progress("building the controller (cmd/controller)")
	if err := localcluster.BuildController(ctx, cfg.ControllerBinary); err != nil {
		return err
	}
	rows, settings, runErr := bench.RunChaos(ctx, cfg)
	report := &bench.ChaosReport{Started: start, Command: command, Machine: bench.ThisMachine(), Settings: settings, Rows: rows,
		Duration: time.Since(start).Round(time.Second).String()}
	if err := report.Write(dir); err != nil {
		return errors.Join(runErr, err)
	}
	fmt.Printf("\n%s\nReport written to %s (report.md, report.json)\n", report.Markdown(), strings.TrimSuffix(dir, "/"))
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
