package bench

import (
	"context"
	"fmt"
	"testing"
)

func TestZZCost(t *testing.T) {
	rows, err := CostEfficiency(context.Background())
	for _, r := range rows {
		fmt.Printf("%.3f | %s\n      %s\n", r.Value, r.Metric, r.Note)
	}
	if err != nil {
		t.Fatal(err)
	}
}
