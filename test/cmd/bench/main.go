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
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/bench"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

func main() {
	command := harness.NewCommand("bench")
	var (
		quick = flag.Bool("quick", false, "smaller, shorter scenarios (under 5 minutes), for CI")
		only  = flag.String("scenarios", "", "comma-separated scenarios to run, of "+strings.Join(allScenarios(), ", ")+" (default all)")
		mixes = flag.String("mixes", "", "comma-separated workload mixes of the cost scenarios, of "+strings.Join(bench.CostMixNames(), ", ")+" (default the run's)")
		logs  = flag.String("logs", "", "directory that keeps the local clusters' logs, a directory per cluster named after its provider (default temporary ones, removed)")
		seed  = flag.Int64("seed", 1, "seed of the cost-random scenario's mixes")
		count = flag.Int("random-mixes", 40, "how many mixes the cost-random scenario draws (-quick: 6)")
		trace = flag.String("trace", "", "the day scenario's trace file, YAML or JSON (docs/benchmarks.md; default test/bench/testdata/day.yaml)")
		day   = flag.Duration("day", 0, "how long the day scenario's day lasts on the clock (default 24m, -quick 2m)")
		env   = flag.String("controller-env", "", "comma-separated KEY=VALUE settings added to every cluster's controller, ours and core's kwok provider (e.g. PREFERENCE_POLICY=Ignore)")
		where = flag.String("providers", "", "comma-separated providers the cluster scenarios run, of "+strings.Join(harness.ProviderNames(), ", ")+" (default all)")
	)
	flag.Parse()
	sel := selection{
		quick:     *quick,
		scenarios: command.Names("scenario", *only, allScenarios()),
		mixes:     command.Names("mix", *mixes, bench.CostMixNames()),
		providers: command.Names("provider", *where, harness.ProviderNames()),
		logs:      *logs,
		seed:      *seed,
		random:    *count,
		trace:     *trace,
		day:       *day,
	}
	if *env != "" {
		sel.controllerEnv = strings.Split(*env, ",")
	}
	if sel.quick && !flagSet("random-mixes") {
		sel.random = 6
	}
	command.Run(func(ctx context.Context) error { return run(ctx, command, sel) })
}

// selection is what the command line asked to run.
type selection struct {
	quick     bool
	scenarios []string
	mixes     []string
	providers []string
	logs      string
	// seed and random are the cost-random scenario's seed and mix count.
	seed   int64
	random int
	// trace and day are the day scenario's trace file and length on the clock.
	trace string
	day   time.Duration
	// controllerEnv is added to every cluster's controller.
	controllerEnv []string
}

// flagSet tells whether the command line set the flag.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func run(ctx context.Context, command *harness.Command, sel selection) error {
	quick, scenarios, start := sel.quick, sel.scenarios, command.Started()
	progress := localcluster.ConsoleProgress(os.Stdout, start)
	report := &bench.Report{Started: start, Command: command.Line(), Machine: harness.ThisMachine()}

	// The controllers the clusters run and the Go benchmarks' test binaries.
	binDir, err := os.MkdirTemp("", "karpenter-linode-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	goBenchmarks := bench.NewGoBenchmarks(filepath.Join(binDir, "go-benchmarks"))

	var errs []error
	if runsAny(scenarios, bench.ClusterScenarios) {
		cfg := bench.Config{
			Quick:     quick,
			Scenarios: scenarios,
			Mixes:     sel.mixes,
			Providers: sel.providers,
			Trace:     sel.trace,
			DayLength: sel.day,
			ReportDir: command.Dir(),
			Config: harness.Config{
				WorkDir:            sel.logs,
				ControllerBinary:   filepath.Join(binDir, "controller"),
				KwokProviderBinary: filepath.Join(binDir, "karpenter-kwok"),
				ControllerEnv:      sel.controllerEnv,
				Progress:           progress,
			},
		}
		if runsAny(scenarios, []string{goScenario}) {
			// Its error, if any, comes back when the Go benchmarks run.
			cfg.WhileCounting = func(ctx context.Context) { _ = goBenchmarks.Compile(ctx) }
		}
		rows, settings, err := runClusterScenarios(ctx, cfg)
		report.Settings, report.Rows = settings, rows
		errs = append(errs, err)
	}
	for _, s := range inProcess(sel, goBenchmarks) {
		if !runsAny(scenarios, []string{s.name}) || (quick && s.fullRunOnly && !slices.Contains(scenarios, s.name)) {
			continue
		}
		progress(s.title)
		got, err := s.run(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
		report.Rows = append(report.Rows, got...)
	}

	if runsAny(scenarios, []string{bench.ScenarioCostFleets, costScenario, costRandomScenario}) {
		if report.Settings == nil {
			report.Settings = map[string]string{}
		}
		report.Settings["Yardsticks"] = bench.CostYardsticks
	}
	if len(sel.controllerEnv) > 0 {
		if report.Settings == nil {
			report.Settings = map[string]string{}
		}
		report.Settings["Controller environment"] = "added to every cluster's controller, ours and kwok's: " + strings.Join(sel.controllerEnv, ", ")
	}
	report.Duration = time.Since(start).Round(time.Second).String()
	errs = append(errs, command.WriteReport(report))
	return errors.Join(errs...)
}

// runClusterScenarios builds the two controllers the local clusters run and runs bench.Run.
func runClusterScenarios(ctx context.Context, cfg bench.Config) ([]bench.Row, map[string]string, error) {
	cfg.Progress("building the controller (cmd/controller) and core's kwok provider (sigs.k8s.io/karpenter/kwok)")
	// Side by side: each build ends in a link that keeps only one core busy.
	var controllerErr, kwokErr error
	var builds sync.WaitGroup
	builds.Go(func() { controllerErr = localcluster.BuildController(ctx, cfg.ControllerBinary) })
	builds.Go(func() { kwokErr = localcluster.BuildKwokProvider(ctx, cfg.KwokProviderBinary) })
	builds.Wait()
	if err := errors.Join(controllerErr, kwokErr); err != nil {
		return nil, nil, err
	}
	return bench.Run(ctx, cfg)
}

// inProcessScenario is a scenario that needs no cluster.
type inProcessScenario struct {
	name, title string
	run         func(context.Context) ([]bench.Row, error)
	// fullRunOnly leaves the scenario out of -quick unless -scenarios names it: it costs more of
	// CI's budget than it is worth there.
	fullRunOnly bool
}

// Names of the in-process scenarios: the hot paths' Go benchmarks and the cost of the eight
// mixes and of random ones.
const (
	goScenario         = "go"
	costScenario       = "cost"
	costRandomScenario = "cost-random"
	// sizingLatencyScenario is the sizing policy's time per GetInstanceTypes, and
	// distinctShapesScenario the same with pods of as many shapes.
	sizingLatencyScenario  = "sizing-latency"
	distinctShapesScenario = "sizing-latency-distinct"
)

func inProcess(sel selection, goBenchmarks *bench.GoBenchmarks) []inProcessScenario {
	return []inProcessScenario{
		{"scheduling", "Scheduling throughput", func(ctx context.Context) ([]bench.Row, error) {
			return bench.SchedulingThroughput(ctx, schedulingPods(sel.quick))
		}, false},
		{costScenario, "Cost efficiency", func(ctx context.Context) ([]bench.Row, error) { return bench.CostEfficiency(ctx, sel.mixes) }, false},
		{costRandomScenario, "Cost efficiency of random mixes", func(ctx context.Context) ([]bench.Row, error) {
			return bench.RandomCostEfficiency(ctx, sel.seed, sel.random)
		}, false},
		// Creating 5,000 pods takes most of its 45 s on a loaded 2-core machine, over the 20 s
		// the quick run can give it.
		{sizingLatencyScenario, "Sizing policy latency", func(ctx context.Context) ([]bench.Row, error) {
			misses, hits := sizingCalls(sel.quick)
			return bench.SizingLatency(ctx, misses, hits)
		}, true},
		// The quick run keeps it, with fewer calls: it is what bounds the work any pod can cause.
		{distinctShapesScenario, "Sizing policy latency, distinct shapes", func(ctx context.Context) ([]bench.Row, error) {
			misses, hits := distinctShapesCalls(sel.quick)
			return bench.SizingLatencyDistinctShapes(ctx, misses, hits)
		}, false},
		{goScenario, "Go benchmarks of the hot paths", func(ctx context.Context) ([]bench.Row, error) { return goBenchmarks.Run(ctx, sel.quick) }, false},
	}
}

func allScenarios() []string {
	names := slices.Clone(bench.ClusterScenarios)
	for _, s := range inProcess(selection{}, nil) {
		names = append(names, s.name)
	}
	return names
}

// runsAny tells whether any of names was asked for; every scenario is when none was named.
func runsAny(asked, names []string) bool {
	return len(asked) == 0 || slices.ContainsFunc(names, func(n string) bool { return slices.Contains(asked, n) })
}

// sizingCalls are how many calls the sizing-latency scenario times on a memo miss and on a hit.
// A quick run that names it keeps the 5,000 pending pods, whose set-up takes most of its time,
// and times fewer calls.
func sizingCalls(quick bool) (misses, hits int) {
	if quick {
		return 100, 200
	}
	return 300, 1000
}

// distinctShapesCalls are how many calls the distinct-shapes case times on a memo miss and on a
// hit; the quick run times a few, since setting up the 6,000 pods takes most of its time.
func distinctShapesCalls(quick bool) (misses, hits int) {
	if quick {
		return 30, 30
	}
	return 300, 1000
}

// schedulingPods are the batch sizes the scheduling-throughput scenario solves.
func schedulingPods(quick bool) []int {
	if quick {
		return []int{100, 1000}
	}
	return []int{100, 1000, 5000}
}
