package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/test/harness"
)

func TestReportMarkdownAndJSON(t *testing.T) {
	kwok := 4.0
	report := &Report{
		Started:  time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC),
		Duration: "12m3s",
		Command:  "go run ./test/cmd/bench",
		Machine:  harness.Machine{CPU: "test CPU", Cores: 2, MemoryGiB: 24, OS: "linux", Arch: "amd64", Go: "go1.27.3"},
		Settings: map[string]string{"Boot delay": "5s", "Batching": "defaults"},
		Rows: []Row{
			{Scenario: "1. Time to capacity", Metric: "5 pods: pending -> running, p50", Value: 10.126, Unit: "s", Kwok: &kwok, Note: "5 pods"},
			{Scenario: "2. Duplicates", Metric: "NodeClaims beyond", Value: 0, Target: "0"},
			{Scenario: "Go", Metric: "solve", Value: 1234.5, Unit: "ns/op", Command: "go test -bench ."},
		},
	}
	md := report.Markdown()
	for _, want := range []string{
		"- Command: `go run ./test/cmd/bench`",
		"- Machine: test CPU, 2 cores, 24.0 GiB, linux/amd64, go1.27.3",
		// Settings in key order.
		"- Batching: defaults\n- Boot delay: 5s\n",
		"| 1. Time to capacity | 5 pods: pending -> running, p50 | 10.13 s | 4 s | 2.53 |  | 5 pods |",
		"| 2. Duplicates | NodeClaims beyond | 0 |  |  | 0 |  |",
		"| Go | solve | 1234 ns/op |  |  |  | (`go test -bench .`) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}

	dir := filepath.Join(t.TempDir(), "new")
	if err := report.Write(dir); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || string(written) != md {
		t.Errorf("report.md differs from Markdown() (%v)", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 3 || back.Rows[0].Kwok == nil || *back.Rows[0].Kwok != 4 || back.Rows[1].Kwok != nil {
		t.Errorf("report.json does not round-trip the rows: %+v", back.Rows)
	}
}
