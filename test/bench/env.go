package bench

import (
	"context"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Config says how to run the scenarios.
type Config struct {
	// Config starts the clusters: the binaries they run, progress, where their logs go.
	harness.Config
	// Quick runs smaller and shorter versions of every scenario, for CI.
	Quick bool
	// Scenarios names the cluster scenarios to run (ClusterScenarios); empty runs them all.
	Scenarios []string
	// Mixes names the cost fleets' mixes (of CostMixNames), instead of the plan's.
	Mixes []string
	// Providers names the providers the scenarios run with (of harness.ProviderNames); empty runs
	// them all.
	Providers []string
	// Trace is the day scenario's trace file; the default trace (test/bench/testdata/day.yaml)
	// when empty. DayLength, when not zero, is how long its day lasts on the clock.
	Trace     string
	DayLength time.Duration
	// ReportDir is the directory the report is written to, where scenarios put the files they
	// write beside it (the day's plot); none are written when empty.
	ReportDir string
	// WhileCounting is work that may share the machine with the counted scenarios, whose figures
	// are counts, but not with the timed ones: compiling the Go benchmarks. Run runs it beside
	// the counted scenarios (or first, when none runs) and waits for it before the timed ones.
	WhileCounting func(context.Context)
}

// env is a local cluster running one provider, which the scenarios below measure.
type env struct{ *harness.Env }

// startEnv starts a local cluster for the provider, with nodes that take bootDelay to register;
// tune changes the cluster's options further.
func startEnv(ctx context.Context, cfg Config, provider harness.Provider, bootDelay time.Duration, tune ...func(*localcluster.Options)) (*env, error) {
	e, err := harness.Start(ctx, cfg.Config, provider, bootDelay, tune...)
	if err != nil {
		return nil, err
	}
	return &env{e}, nil
}
