package harness

import (
	"math"
	"slices"
	"time"
)

// Percentile is the p-th percentile (0-100) of values by the nearest-rank method: the smallest
// value at least p% of the values are less than or equal to. Nearest rank always answers with a
// value that was measured, which keeps a p95 over 5 pods honest (it is the slowest pod). NaN
// when there are no values.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Seconds converts durations to seconds, for Percentile.
func Seconds(durations []time.Duration) []float64 {
	out := make([]float64, len(durations))
	for i, d := range durations {
		out[i] = d.Seconds()
	}
	return out
}
