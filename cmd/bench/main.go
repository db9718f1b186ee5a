// Command bench is `make bench` (and `make bench-quick`, with -quick): it measures the provider
// on local clusters and in process, next to Karpenter core's kwok provider, and writes a report,
// report.md and report.json, into a results directory. The scenarios live in package test/bench;
// this command builds the two controllers they run, runs them and writes what they measured.
// It exits 1 when a scenario failed, after writing the figures of those that did not.
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
		quick = flag.Bool("quick", false, "smaller, shorter scenarios (under 5 minutes), for CI")
		out   = flag.String("out", "", "results directory (default results/bench-<UTC time>)")
		only  = flag.String("scenarios", "", "comma-separated scenarios to run, of "+strings.Join(allScenarios(), ", ")+" (default all)")
	)
	flag.Parse()
	var scenarios []string
	if *only != "" {
		scenarios = strings.Split(*only, ",")
		for _, s := range scenarios {
			if !slices.Contains(allScenarios(), s) {
				fmt.Fprintf(os.Stderr, "bench: unknown scenario %q; known: %s\n", s, strings.Join(allScenarios(), ", "))
				os.Exit(2)
			}
		}
	}
	start := time.Now()
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", "bench-"+start.UTC().Format("20060102T150405Z"))
	}
	// Informers and core's code log through controller-runtime; the figures are the output here.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, start, *quick, scenarios, dir); err != nil {
		fmt.Fprintf(os.Stderr, "\nbench: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, start time.Time, quick bool, scenarios []string, dir string) error {
	// make bench and make bench-quick run this command; the report names it with its flags.
	command := strings.Join(append([]string{"go run ./cmd/bench"}, os.Args[1:]...), " ")
	progress := localcluster.ConsoleProgress(os.Stdout, start)
	report := &bench.Report{Started: start, Command: command, Machine: bench.ThisMachine()}

	var errs []error
	if runsAny(scenarios, bench.ClusterScenarios) {
		rows, settings, err := runClusterScenarios(ctx, quick, scenarios, progress)
		report.Settings, report.Rows = settings, rows
		errs = append(errs, err)
	}
	for _, s := range inProcess(quick) {
		if !runsAny(scenarios, []string{s.name}) {
			continue
		}
		progress(s.title)
		got, err := s.run(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
		report.Rows = append(report.Rows, got...)
	}

	report.Duration = time.Since(start).Round(time.Second).String()
	if err := report.Write(dir); err != nil {
		return errors.Join(append(errs, err)...)
	}
	fmt.Printf("\n%s\nReport written to %s (report.md, report.json)\n", report.Markdown(), strings.TrimSuffix(dir, "/"))
	return errors.Join(errs...)
}

// runClusterScenarios builds the two controllers the local clusters run and runs bench.Run.
func runClusterScenarios(ctx context.Context, quick bool, scenarios []string, progress func(string)) ([]bench.Row, map[string]string, error) {
	binDir, err := os.MkdirTemp("", "karpenter-linode-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(binDir)
	cfg := bench.Config{
		Quick:              quick,
		Scenarios:          scenarios,
		ControllerBinary:   filepath.Join(binDir, "controller"),
		KwokProviderBinary: filepath.Join(binDir, "karpenter-kwok"),
		Progress:           progress,
	}
	progress("building the controller (cmd/controller) and core's kwok provider (sigs.k8s.io/karpenter/kwok)")
	if err := localcluster.BuildController(ctx, cfg.ControllerBinary); err != nil {
		return nil, nil, err
	}
	if err := localcluster.BuildKwokProvider(ctx, cfg.KwokProviderBinary); err != nil {
		return nil, nil, err
	}
	return bench.Run(ctx, cfg)
}

// inProcessScenario is a scenario that needs no cluster.
type inProcessScenario struct {
	name, title string
	run         func(context.Context) ([]bench.Row, error)
}

func inProcess(quick bool) []inProcessScenario {
	return []inProcessScenario{
		{"scheduling", "Scheduling throughput", func(ctx context.Context) ([]bench.Row, error) {
			return bench.SchedulingThroughput(ctx, schedulingPods(quick))
		}},
		{"cost", "Cost efficiency", bench.CostEfficiency},
		{"go", "Go benchmarks of the hot paths", func(ctx context.Context) ([]bench.Row, error) { return bench.GoBenchmarks(ctx, quick) }},
	}
}

func allScenarios() []string {
	names := slices.Clone(bench.ClusterScenarios)
	for _, s := range inProcess(false) {
		names = append(names, s.name)
	}
	return names
}

// runsAny tells whether any of names was asked for; every scenario is when none was named.
func runsAny(asked, names []string) bool {
	return len(asked) == 0 || slices.ContainsFunc(names, func(n string) bool { return slices.Contains(asked, n) })
}

// schedulingPods are the batch sizes the scheduling-throughput scenario solves.
func schedulingPods(quick bool) []int {
	if quick {
		return []int{100, 1000}
	}
	return []int{100, 1000, 5000}
}
