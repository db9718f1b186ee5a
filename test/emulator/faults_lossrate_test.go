package emulator

import (
	"context"
	"testing"

	"github.com/linode/linodego"
)

// TestFaultLosesAShareOfAnswers: two faults of one route, losing answers at 30% with a 502 and
// at half of the rest by dropping the connection, lose about 30% and 35%; every create is applied.
func TestFaultLosesAShareOfAnswers(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	cluster, _ := e.AddLKECluster("lossy", "us-east", "")
	route := "/lke/clusters/{clusterId}/pools"
	e.InjectFault(Fault{Method: "POST", Route: route, LoseResponse: LoseWith502, LossRate: 0.3})
	e.InjectFault(Fault{Method: "POST", Route: route, LoseResponse: LoseByDroppingConnection, LossRate: 0.5})
	const creates = 200
	answered, badGateway, dropped := 0, 0, 0
	for range creates {
		_, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
		switch {
		case err == nil:
			answered++
		case linodego.ErrHasStatus(err, 502):
			badGateway++
		default:
			dropped++
		}
	}
	if got := len(e.Pools(cluster)); got != creates {
		t.Fatalf("%d pools for %d creates: a create whose answer was lost was not applied", got, creates)
	}
	for name, n := range map[string]struct{ got, low, high int }{
		"502": {badGateway, 40, 80}, "dropped": {dropped, 45, 95}, "answered": {answered, 45, 95},
	} {
		if n.got < n.low || n.got > n.high {
			t.Errorf("%s: %d of %d creates, want %d to %d", name, n.got, creates, n.low, n.high)
		}
	}
}
