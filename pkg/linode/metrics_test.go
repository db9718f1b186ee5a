package linode_test

import (
	"context"
	"testing"

	"github.com/linode/linodego"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestAPIBudgetsAsTheAPICountsThem: each call is counted against the budget the API (the
// emulator, with Linode's published limits) charges it to, so the limit and remaining requests
// the controller reports for a budget are the API's own figures for it.
func TestAPIBudgetsAsTheAPICountsThem(t *testing.T) {
	emu := emulator.New(emulator.WithDelayScale(0))
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	options := linode.DefaultClientOptions()
	options.URL, options.Credentials = emu.URL(), linode.StaticCredentials(emulator.DefaultToken)
	client, err := linode.NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	limits := emulator.DefaultRateLimits()
	for _, call := range []struct {
		name      string
		budget    string
		limit     int
		do        func() error
		remaining int
	}{
		{name: "list plans", budget: "list", limit: limits.ListsPerMinute, remaining: limits.ListsPerMinute - 1, do: func() error {
			_, err := client.ListTypes(ctx, nil)
			return err
		}},
		{name: "list a Linode's configs", budget: "list", limit: limits.ListsPerMinute, remaining: limits.ListsPerMinute - 2, do: func() error {
			_, err := client.ListInstanceConfigs(ctx, 1, nil)
			return err
		}},
		{name: "read a region", budget: "other", limit: limits.OtherPerMinute, remaining: limits.OtherPerMinute - 1, do: func() error {
			_, err := client.GetRegion(ctx, "us-ord")
			return err
		}},
		{name: "read a plan", budget: "other", limit: limits.OtherPerMinute, remaining: limits.OtherPerMinute - 2, do: func() error {
			_, err := client.GetType(ctx, "g6-standard-2")
			return err
		}},
		{name: "create a Linode", budget: "linode_create", limit: limits.LinodeCreates, remaining: limits.LinodeCreates - 1, do: func() error {
			_, err := client.CreateInstance(ctx, linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}})
			return err
		}},
	} {
		before := counter(t, "karpenter_linode_api_requests_total", call.budget)
		_ = call.do()
		if got := counter(t, "karpenter_linode_api_requests_total", call.budget); got != before+1 {
			t.Errorf("%s: %v requests counted against %s, want 1", call.name, got-before, call.budget)
		}
		if got := labelledGauge(t, "karpenter_linode_api_rate_limit", call.budget); got != float64(call.limit) {
			t.Errorf("%s: rate limit of %s is %v, want the API's %d", call.name, call.budget, got, call.limit)
		}
		if got := labelledGauge(t, "karpenter_linode_api_rate_limit_remaining", call.budget); got != float64(call.remaining) {
			t.Errorf("%s: %v requests left in %s, want the API's %d", call.name, got, call.budget, call.remaining)
		}
	}
}

// counter sums the counter's series of one budget, over every status.
func counter(t *testing.T, name, budget string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "budget" && label.GetValue() == budget {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// labelledGauge is the gauge's value for one budget, -1 when it has none.
func labelledGauge(t *testing.T, name, budget string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "budget" && label.GetValue() == budget {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
