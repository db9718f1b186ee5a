package emulator

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/linode/linodego"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestRateLimits(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	e := New(WithClock(clk), WithRateLimits(RateLimits{
		ListsPerMinute: 3, OtherPerMinute: 100, LinodeCreates: 2, LinodeCreateWindow: 15 * time.Second,
	}))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := e.NewClient()
	ctx := context.Background()

	for i := range 3 {
		if _, err := c.ListRegions(ctx, nil); err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
	}
	resp, _ := do(t, e, "GET", "/v4/regions", nil, "")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "60" ||
		resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("429: %d %v", resp.StatusCode, resp.Header)
	}
	if reset, _ := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); reset != epoch.Add(time.Minute).Unix() {
		t.Fatalf("reset %d", reset)
	}
	// Gets of single objects have their own budget.
	if _, err := c.GetType(ctx, "g6-standard-1"); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute)
	if _, err := c.ListRegions(ctx, nil); err != nil {
		t.Fatalf("budget not refilled: %v", err)
	}

	opts := linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1"}
	for range 2 {
		if _, err := c.CreateInstance(ctx, opts); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.CreateInstance(ctx, opts)
	wantAPIError(t, err, 429)
	clk.Step(15 * time.Second)
	if _, err := c.CreateInstance(ctx, opts); err != nil {
		t.Fatalf("create budget not refilled: %v", err)
	}
}
