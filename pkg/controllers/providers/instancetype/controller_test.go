package instancetype_test

import (
	"context"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/cache"
	controller "github.com/linode/karpenter-provider-linode/pkg/controllers/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestRefreshOutlivesAnOutage: the controller keeps retrying, sooner than the refresh interval
// and backing off, while the API fails, and returns to the interval once a read succeeds.
func TestRefreshOutlivesAnOutage(t *testing.T) {
	ctx := context.Background()
	e := test.StartEmulatorForTest(t)
	provider := instancetype.NewDefaultProvider(e.Client, test.Region, mode.LKE, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL))
	nodeClass := test.LinodeNodeClass()
	refresh := controller.NewController(provider, 12*time.Hour)

	outage := e.InjectFault(emulator.Fault{Method: "GET", Route: "/linode/types", ErrorRate: 1, ErrorStatus: 503})
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		result, err := refresh.Reconcile(ctx)
		if err != nil {
			t.Fatalf("Reconcile returned an error during an outage: %v", err)
		}
		if result.RequeueAfter != want {
			t.Errorf("retry after %v, want %v", result.RequeueAfter, want)
		}
		if _, err := provider.List(ctx, nodeClass); !instancetype.IsNoCatalogue(err) {
			t.Fatalf("List with no catalogue read: got %v, want ErrNoCatalogue", err)
		}
	}

	e.RemoveFault(outage)
	result, err := refresh.Reconcile(ctx)
	if err != nil || result.RequeueAfter != 12*time.Hour {
		t.Fatalf("after the outage: %v, %v; want the 12h interval", result, err)
	}
	if instanceTypes, err := provider.List(ctx, nodeClass); err != nil || len(instanceTypes) == 0 {
		t.Fatalf("List after a successful refresh: %d instance types, %v", len(instanceTypes), err)
	}

	e.InjectFault(emulator.Fault{Method: "GET", Route: "/regions", ErrorRate: 1, Count: 1})
	if result, _ := refresh.Reconcile(ctx); result.RequeueAfter != 10*time.Second {
		t.Errorf("a new outage starts retrying after %v, want 10s", result.RequeueAfter)
	}
	if _, err := provider.List(ctx, nodeClass); err != nil {
		t.Errorf("List lost the last good catalogue during an outage: %v", err)
	}

	short := controller.NewController(provider, time.Minute)
	e.InjectFault(emulator.Fault{Method: "GET", Route: "/linode/types", ErrorRate: 1, Count: 3})
	for range 3 {
		if result, _ := short.Reconcile(ctx); result.RequeueAfter > time.Minute {
			t.Errorf("retry after %v is longer than the 1m refresh interval", result.RequeueAfter)
		}
	}
}
