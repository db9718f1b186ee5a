package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
)

const scaleScenario = "Scale"

// Core's thresholds for its kwok provider's scale test.
const (
	scaleTargetWall  = "< 2 min"
	scaleTargetHeap  = "< 120 MB"
	scaleTargetCores = "< 0.5 core"
)

// scale deploys pods one-CPU pods at once on an empty NodePool and measures, until all run, the
// wall time and the controller's heap and CPU, sampled from its metrics every 500 ms.
func scale(ctx context.Context, e *env, pods int) ([]Row, error) {
	const pool = "scale"
	if err := e.CreateNodePool(ctx, pool, 0); err != nil {
		return nil, err
	}
	e.Cluster.Emulator.ResetCounters()
	sampler, err := startSampler(ctx, e.Cluster.ControllerMetricsURL(), 500*time.Millisecond)
	if err != nil {
		return nil, err
	}
	start, err := e.Deploy(ctx, pool, pods)
	if err != nil {
		sampler.stop()
		return nil, err
	}
	err = e.WaitRunning(ctx, pool, pods, 10*time.Minute)
	wall := time.Since(start)
	usage := sampler.stop()
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%d one-CPU pods; boot delay %v; NodeClaims: %d", pods, e.BootDelay, len(e.Watch.ClaimsOf(pool)))
	if e.Provider == harness.Linode {
		note += fmt.Sprintf("; rate-limited (429) answers: %d", countStatus(e.ControllerRequests(), http.StatusTooManyRequests))
	}
	samples := fmt.Sprintf("%s; samples every 500 ms: %d (%d missed)", note, len(usage.heap), usage.missed)
	return []Row{
		{Scenario: scaleScenario, Metric: fmt.Sprintf("%d pods: pending -> all running", pods), Value: wall.Seconds(), Unit: "s", Target: scaleTargetWall, Note: note},
		{Scenario: scaleScenario, Metric: "controller heap in use, peak", Value: slices.Max(usage.heap) / 1e6, Unit: "MB", Target: scaleTargetHeap, Note: samples},
		{Scenario: scaleScenario, Metric: "controller heap in use, p95", Value: harness.Percentile(usage.heap, 95) / 1e6, Unit: "MB", Target: scaleTargetHeap, Note: samples},
		{Scenario: scaleScenario, Metric: "controller CPU, mean", Value: usage.cpuSeconds / wall.Seconds(), Unit: "cores", Target: scaleTargetCores,
			Note: note + "; CPU seconds over the wall time"},
	}, nil
}

// sampler reads a Go process's heap in use and CPU time from its Prometheus metrics.
type sampler struct {
	url    string
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	usage usage
}

type usage struct {
	// heap is go_memstats_heap_inuse_bytes at each sample.
	heap []float64
	// cpuSeconds is process_cpu_seconds_total's growth from the first sample to the last.
	cpuSeconds float64
	// missed counts the samples the controller did not answer in time: a controller busy with
	// thousands of pods on a loaded machine can be slow to write its metrics, which voids one
	// sample, not the run.
	missed int
}

// startSampler takes a first sample at once, so a controller that does not serve metrics fails
// the scenario before it starts, then one every interval until stop.
func startSampler(ctx context.Context, url string, interval time.Duration) (*sampler, error) {
	s := &sampler{url: url, done: make(chan struct{})}
	heap, cpu, err := scrape(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("reading the controller's metrics: %w", err)
	}
	s.usage.heap = []float64{heap}
	firstCPU := cpu
	ctx, s.cancel = context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			heap, cpu, err := scrape(ctx, url)
			s.mu.Lock()
			switch {
			case err != nil && ctx.Err() == nil:
				s.usage.missed++
			case err == nil:
				s.usage.heap = append(s.usage.heap, heap)
				s.usage.cpuSeconds = cpu - firstCPU
			}
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// stop takes no more samples and returns what was measured.
func (s *sampler) stop() usage {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// scrape reads go_memstats_heap_inuse_bytes and process_cpu_seconds_total.
func scrape(ctx context.Context, url string) (heap, cpu float64, err error) {
	values, err := scrapeSeries(ctx, url, "go_memstats_heap_inuse_bytes", "process_cpu_seconds_total")
	if err != nil {
		return 0, 0, err
	}
	heap, okHeap := values["go_memstats_heap_inuse_bytes"]
	cpu, okCPU := values["process_cpu_seconds_total"]
	if !okHeap || !okCPU {
		return 0, 0, fmt.Errorf("%s serves no go_memstats_heap_inuse_bytes or process_cpu_seconds_total", url)
	}
	return heap, cpu, nil
}

// scrapeSeries reads the Prometheus endpoint's values of the series named, each named as the
// endpoint writes it (with its labels, if any); a series the endpoint does not serve is absent.
func scrapeSeries(ctx context.Context, url string, series ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	values := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		name, value, ok := strings.Cut(scanner.Text(), " ")
		if !ok || !slices.Contains(series, name) {
			continue
		}
		if values[name], err = strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return values, scanner.Err()
}
