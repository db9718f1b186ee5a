package bench

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
)

func TestRandomMixes(t *testing.T) {
	mixes := randomMixes(7, 50)
	if !reflect.DeepEqual(mixes, randomMixes(7, 50)) {
		t.Fatal("the same seed drew different mixes")
	}
	if reflect.DeepEqual(mixes, randomMixes(8, 50)) {
		t.Fatal("another seed drew the same mixes")
	}
	spread := 0
	for _, m := range mixes {
		if n := len(m.deployments); n < 1 || n > 4 {
			t.Fatalf("%s has %d Deployments, want 1 to 4", m.name, n)
		}
		for _, d := range m.deployments {
			cpu, memory := d.requests.Cpu().MilliValue(), d.requests.Memory().Value()
			if d.replicas < 1 || d.replicas > 80 || cpu < 100 || cpu > 8000 || memory < 64<<20 || memory > 16<<30*cpu/1000 {
				t.Fatalf("%s: %d× %s out of range", m.name, d.replicas, planner.FormatRequests(d.requests))
			}
			if d.spread {
				spread++
			}
		}
	}
	if spread == 0 {
		t.Fatal("no Deployment spread over hostnames")
	}
}

// Random mixes provision like the eight: no fleet below its bound, and the rows name the worst.
func TestRandomCostEfficiency(t *testing.T) {
	rows, err := RandomCostEfficiency(context.Background(), 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 16 {
		t.Fatalf("%d rows, want 8 for each of two NodePools", len(rows))
	}
	for _, row := range rows {
		if strings.Contains(row.Metric, "fleet ÷ lower bound") && row.Value < 1-1e-9 {
			t.Errorf("%s: %v, below the lower bound", row.Metric, row.Value)
		}
		if strings.Contains(row.Metric, "worst") && !strings.HasPrefix(row.Note, "random-3-") {
			t.Errorf("%s: note %q does not name the mix", row.Metric, row.Note)
		}
	}
}
