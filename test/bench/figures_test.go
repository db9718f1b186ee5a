package bench

import (
	"math"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		p      float64
		want   float64
	}{
		{[]float64{3}, 50, 3},
		{[]float64{3}, 95, 3},
		// Nearest rank: p95 of five values is the largest, p50 the third.
		{[]float64{5, 1, 4, 2, 3}, 50, 3},
		{[]float64{5, 1, 4, 2, 3}, 95, 5},
		{[]float64{4, 1, 3, 2}, 50, 2},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 95, 19},
		{[]float64{1, 2, 3}, 0, 1},
		{[]float64{1, 2, 3}, 100, 3},
	} {
		if got := harness.Percentile(tc.values, tc.p); got != tc.want {
			t.Errorf("harness.Percentile(%v, %g) = %g, want %g", tc.values, tc.p, got, tc.want)
		}
	}
	if got := harness.Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile of nothing = %g, want NaN", got)
	}
	values := []float64{3, 1, 2}
	harness.Percentile(values, 50)
	if values[0] != 3 || values[1] != 1 {
		t.Errorf("percentile sorted its argument: %v", values)
	}
}

func TestFirstAtOrAfter(t *testing.T) {
	base := time.Now()
	sorted := []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second)}
	if got, ok := firstAtOrAfter(sorted, base.Add(time.Second)); !ok || !got.Equal(sorted[1]) {
		t.Errorf("at a time in the list: got %v %v, want the same time", got, ok)
	}
	if got, ok := firstAtOrAfter(sorted, base.Add(500*time.Millisecond)); !ok || !got.Equal(sorted[1]) {
		t.Errorf("between two times: got %v %v, want the later", got, ok)
	}
	if _, ok := firstAtOrAfter(sorted, base.Add(3*time.Second)); ok {
		t.Error("after every time: found one")
	}
}

func TestWithBaseline(t *testing.T) {
	ours := []Row{
		{Scenario: "s", Metric: "a", Value: 2, Note: "same"},
		{Scenario: "s", Metric: "b", Value: 3, Note: "ours"},
		{Scenario: "s", Metric: "only ours", Value: 4},
	}
	kwok := []Row{
		{Scenario: "s", Metric: "a", Value: 1, Note: "same"},
		{Scenario: "s", Metric: "b", Value: 6, Note: "theirs"},
		{Scenario: "other", Metric: "a", Value: 9},
	}
	got := withBaseline(ours, kwok)
	if len(got) != 4 {
		t.Fatalf("got %d rows, want ours (3) and kwok's that none of ours stands beside (1)", len(got))
	}
	if alone := got[3]; alone.Scenario != "other"+kwokSuffix || alone.Value != 9 || alone.Kwok != nil {
		t.Errorf("kwok's row without ours: %+v, want it on its own, named so", alone)
	}
	if got[0].Kwok == nil || *got[0].Kwok != 1 || got[0].Note != "same" {
		t.Errorf("row a: kwok %v note %q, want 1 and the shared note once", got[0].Kwok, got[0].Note)
	}
	if ratio, ok := got[1].Ratio(); !ok || ratio != 0.5 || got[1].Note != "ours; kwok: theirs" {
		t.Errorf("row b: ratio %g %v note %q, want 0.5 and both notes", ratio, ok, got[1].Note)
	}
	if got[2].Kwok != nil {
		t.Errorf("a row kwok did not measure got kwok's %g", *got[2].Kwok)
	}
}

func TestRateLimitBudget(t *testing.T) {
	for route, want := range map[string]string{
		"POST /linode/instances":                          budgetCreate,
		"GET /linode/instances":                           budgetPaginated,
		"GET /lke/clusters/{clusterId}/pools":             budgetPaginated,
		"GET /regions/availability":                       budgetPaginated,
		"GET /lke/clusters/{clusterId}/pools/{poolId}":    budgetOther,
		"GET /regions/{regionId}/availability":            budgetOther,
		"POST /lke/clusters/{clusterId}/pools":            budgetOther,
		"DELETE /lke/clusters/{clusterId}/nodes/{nodeId}": budgetOther,
	} {
		if got := rateLimitBudget(route); got != want {
			t.Errorf("rateLimitBudget(%q) = %q, want %q", route, got, want)
		}
	}
}

func TestLaunchFloor(t *testing.T) {
	for _, tc := range []struct {
		provider harness.Provider
		nodes    int
		want     time.Duration
	}{
		// Linode creates: 20 per 15 s, so the 21st waits a window and the 450th 22 windows.
		{harness.LinodeInstance, 20, 30 * time.Second},
		{harness.LinodeInstance, 21, 45 * time.Second},
		{harness.LinodeInstance, 450, 22*15*time.Second + 30*time.Second},
		// LKE pool creates share the 1,600 a minute of other requests.
		{harness.Linode, 450, 30 * time.Second},
		{harness.Linode, 1601, time.Minute + 30*time.Second},
	} {
		e := &env{&harness.Env{Provider: tc.provider, BootDelay: 30 * time.Second}}
		if got, _ := e.launchFloor(tc.nodes); got != tc.want {
			t.Errorf("%s, %d nodes: floor %v, want %v", tc.provider, tc.nodes, got, tc.want)
		}
	}
}
