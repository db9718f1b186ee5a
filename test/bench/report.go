// Package bench measures the provider the way a user would notice it: time to capacity, duplicate
// launches, Linode API cost, scale, scheduling throughput and cost efficiency, side by side with
// core's kwok provider where the issue asks for a baseline. test/cmd/bench runs the scenarios and
// writes the report this file defines (Markdown for people, JSON for tools).
package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
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

// Report is a whole run.
type Report struct {
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	// Command is the command that produced the report, e.g. "make bench".
	Command string          `json:"command"`
	Machine harness.Machine `json:"machine"`
	// Settings are the knobs in effect: boot delay, batching, pod counts.
	Settings map[string]string `json:"settings"`
	Rows     []Row             `json:"rows"`
}

// Markdown renders the report as a table per run, with the machine and settings above it.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark report\n\n")
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Started: %s, took %s\n", r.Started.UTC().Format(time.RFC3339), r.Duration)
	fmt.Fprintf(&b, "- Machine: %s, %d cores, %.1f GiB, %s/%s, %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.OS, r.Machine.Arch, r.Machine.Go)
	for _, key := range harness.SortedKeys(r.Settings) {
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
func (r *Report) Write(dir string) error { return harness.WriteReport(dir, r, r.Markdown()) }

func formatValue(v float64, unit string) string {
	precision := 2
	if v >= 100 || v == float64(int64(v)) {
		precision = 0
	}
	return strings.TrimSpace(strconv.FormatFloat(v, 'f', precision, 64) + " " + unit)
}
