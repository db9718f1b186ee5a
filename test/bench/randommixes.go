package bench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
)

const randomCostScenario = "Cost efficiency, random mixes"

// randomMixes are count workload mixes drawn from seed, the same for the same seed: each of one
// to four Deployments of 1 to 80 identical pods, 100m to 8 CPUs and 512Mi to 16Gi per CPU (at
// least 64Mi), one in six spread over hostnames. They check that the sizing policy holds beyond
// the eight mixes it was measured on.
func randomMixes(seed int64, count int) []costMix {
	//nolint:gosec // Reproducible mixes, not security.
	r := rand.New(rand.NewSource(seed))
	milliCPUs := []int{100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000}
	mibPerCPU := []int{512, 1024, 2048, 4096, 8192, 16384}
	mixes := make([]costMix, count)
	for i := range mixes {
		mixes[i].name = fmt.Sprintf("random-%d-%d", seed, i)
		for d := range 1 + r.Intn(4) {
			milliCPU := milliCPUs[r.Intn(len(milliCPUs))]
			mib := max(64, milliCPU*mibPerCPU[r.Intn(len(mibPerCPU))]/1000)
			mixes[i].deployments = append(mixes[i].deployments, costDeployment{
				name:     fmt.Sprintf("d%d", d),
				replicas: 1 + r.Intn(80),
				requests: requests(fmt.Sprintf("%dm", milliCPU), fmt.Sprintf("%dMi", mib)),
				spread:   r.Intn(6) == 0,
			})
		}
	}
	return mixes
}

// RandomCostEfficiency provisions count random mixes (randomMixes) in process, as the cost
// scenario does the eight, for the NodePool open to every plan and the README's, and reports
// for each the geometric mean, the worst mix, and how many mixes miss the per-mix targets.
func RandomCostEfficiency(ctx context.Context, seed int64, count int) ([]Row, error) {
	variants, err := inProcessFleets(ctx, randomMixes(seed, count))
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, v := range variants {
		rows = append(rows, randomSummaryRows(v.fleets, seed, variantName(v.name))...)
	}
	return rows, nil
}

// randomSummaryRows sum up the random mixes' fleets for one NodePool variant.
func randomSummaryRows(fleets []mixFleet, seed int64, pools string) []Row {
	what := fmt.Sprintf("%d random mixes of seed %d (%s)", len(fleets), seed, pools)
	logSum, unspreadLogSum, unspread := 0.0, 0.0, 0
	var aboveBound, dearer, spread, dearerSpread []string
	for _, f := range fleets {
		logSum += math.Log(f.ratio())
		spreads := f.mix.spreadsOverHostnames()
		if !spreads {
			unspreadLogSum += math.Log(f.ratio())
			unspread++
		}
		if f.ratio() > 1.2 {
			aboveBound = append(aboveBound, fmt.Sprintf("%s %.2f×", f.mix.name, f.ratio()))
			if spreads {
				spread = append(spread, f.mix.name)
			}
		}
		if f.price > f.onePlan.Price+1e-9 {
			dearer = append(dearer, fmt.Sprintf("%s ($%.3f against $%.3f)", f.mix.name, f.price, f.onePlan.Price))
			if spreads {
				dearerSpread = append(dearerSpread, f.mix.name)
			}
		}
	}
	// 0 when every mix has spread pods.
	unspreadMean := 0.0
	if unspread > 0 {
		unspreadMean = math.Exp(unspreadLogSum / float64(unspread))
	}
	worst := slices.MaxFunc(fleets, func(a, b mixFleet) int { return cmp.Compare(a.ratio(), b.ratio()) })
	return append([]Row{
		{Scenario: randomCostScenario, Metric: what + ": geometric mean of fleet ÷ lower bound", Value: math.Exp(logSum / float64(len(fleets))), Unit: "×", Target: costTargetMean},
		{Scenario: randomCostScenario, Metric: what + ": worst fleet ÷ lower bound", Value: worst.ratio(), Unit: "×",
			Note: fmt.Sprintf("%s: %s; %s", worst.mix.name, worst.mix.describe(), worst.row("in process").Note)},
		{Scenario: randomCostScenario, Metric: what + ": mixes above 1.2× their bound", Value: float64(len(aboveBound)),
			Note: fmt.Sprintf("%s; of them with pods spread over hostnames (one a node, as core places them): %d", joinOrNone(aboveBound), len(spread))},
		{Scenario: randomCostScenario, Metric: what + ": geometric mean of fleet ÷ lower bound without pods spread over hostnames", Value: unspreadMean, Unit: "×",
			Note: fmt.Sprintf("the %d mixes none of whose Deployments is spread over hostnames", unspread)},
		{Scenario: randomCostScenario, Metric: what + ": mixes dearer than the cheapest fleet of one plan", Value: float64(len(dearer)),
			Note: fmt.Sprintf("%s; of them with pods spread over hostnames: %d", joinOrNone(dearer), len(dearerSpread))},
	}, corePlacementRows(fleets, randomCostScenario, what)...)
}

func joinOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
