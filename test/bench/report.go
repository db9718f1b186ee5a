// Package bench measures the provider the way a user would notice it: time to capacity, duplicate
// launches, Linode API cost, scale, scheduling throughput and cost efficiency, side by side with
// core's kwok provider where the issue asks for a baseline. test/cmd/bench runs the scenarios and
// writes the report this file defines (Markdown for people, JSON for tools).
package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Row is one measured figure.
type Row struct {
	// Scenario names the scenario, e.g. "Time to capacity".
	Scenario string `json:"scenario"`
	// Metric says what was measured, e.g. "50 pods: pending -> all running, p95".
	Metric string `json:"metric"`
	// Value is our figure, in Unit.
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Kwok is the same figure with core's kwok provider on the same cluster, when measured.
	Kwok *float64 `json:"kwok,omitempty"`
	// Target is what the issue or core asks for, e.g. "0" or "<= 120 s".
	Target string `json:"target,omitempty"`
	// Command reproduces the figure when it is not the report's own command (a go test -bench).
	Command string `json:"command,omitempty"`
	// Note qualifies the figure: the boot delay in effect, the sample size.
	Note string `json:"note,omitempty"`
}

// Ratio is ours divided by kwok's, when both exist and kwok's is not zero.
func (r Row) Ratio() (float64, bool) {
	if r.Kwok == nil || *r.Kwok == 0 {
		return 0, false
	}
	return r.Value / *r.Kwok, true
}

// Machine describes where the figures were measured.
type Machine struct {
	CPU       string  `json:"cpu"`
	Cores     int     `json:"cores"`
	MemoryGiB float64 `json:"memoryGiB"`
	OS        string  `json:"os"`
	Arch      string  `json:"arch"`
	Go        string  `json:"go"`
}

// Report is a whole run.
type Report struct {
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	// Command is the command that produced the report, e.g. "make bench".
	Command string  `json:"command"`
	Machine Machine `json:"machine"`
	// Settings are the knobs in effect: boot delay, batching, pod counts.
	Settings map[string]string `json:"settings"`
	Rows     []Row             `json:"rows"`
}

// ThisMachine reads the CPU model and memory from /proc where it can.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64); err == nil {
					m.MemoryGiB = kib / (1 << 20)
				}
			}
		}
	}
	return m
}

// Markdown renders the report as a table per run, with the machine and settings above it.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark report\n\n")
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Started: %s, took %s\n", r.Started.UTC().Format(time.RFC3339), r.Duration)
	fmt.Fprintf(&b, "- Machine: %s, %d cores, %.1f GiB, %s/%s, %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.OS, r.Machine.Arch, r.Machine.Go)
	for _, key := range sortedKeys(r.Settings) {
		fmt.Fprintf(&b, "- %s: %s\n", key, r.Settings[key])
	}
	b.WriteString("\n| Scenario | Metric | Linode | kwok | Linode/kwok | Target | Note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		kwok, ratio := "", ""
		if row.Kwok != nil {
			kwok = formatValue(*row.Kwok, row.Unit)
		}
		if q, ok := row.Ratio(); ok {
			ratio = strconv.FormatFloat(q, 'f', 2, 64)
		}
		note := row.Note
		if row.Command != "" {
			note = strings.TrimSpace(note + " (`" + row.Command + "`)")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Scenario, row.Metric, formatValue(row.Value, row.Unit), kwok, ratio, row.Target, note)
	}
	return b.String()
}

// Write writes report.md and report.json into dir, creating it.
func (r *Report) Write(dir string) error { return writeReport(dir, r, r.Markdown()) }

// writeReport writes report.json (report) and report.md (markdown) into dir, creating it.
func writeReport(dir string, report any, markdown string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(markdown), 0o644)
}

func formatValue(v float64, unit string) string {
	precision := 2
	if v >= 100 || v == float64(int64(v)) {
		precision = 0
	}
	return strings.TrimSpace(strconv.FormatFloat(v, 'f', precision, 64) + " " + unit)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
