package chaos

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// lossRate is the share of creates and deletes whose answers are lost, half with a 502 and half
// by a dropped connection.
const lossRate = 0.3

// writeRoutes are the creates and deletes of both modes: LKE pools and their nodes, and Linodes.
var writeRoutes = []struct{ method, route string }{
	{http.MethodPost, "/lke/clusters/{clusterId}/pools"},
	{http.MethodDelete, "/lke/clusters/{clusterId}/pools/{poolId}"},
	{http.MethodDelete, "/lke/clusters/{clusterId}/nodes/{nodeId}"},
	{http.MethodPost, "/linode/instances"},
	{http.MethodDelete, "/linode/instances/{linodeId}"},
}

// loseAnswersAndTheLeader has Linode apply every create and delete but lose 30% of their answers,
// 15% with a 502 and 15% by dropping the connection, through a burst from the low to the peak, in
// which the leader is killed as soon as Karpenter launches for it, and a scale-down halfway (its
// deletes lose answers too). A create whose answer is lost must not become a second Linode or
// pool when retried, nor a delete's leave one behind.
func loseAnswersAndTheLeader(ctx context.Context, r *chaosRun) (time.Time, error) {
	var (
		wg       sync.WaitGroup
		takeover harness.LeaderTakeover
		killErr  error
	)
	start := time.Now()
	end, err := r.throughout(ctx, r.scale.window, func(ctx context.Context, r *chaosRun) (func(context.Context) error, error) {
		before, err := r.claimNames(ctx)
		if err != nil {
			return nil, err
		}
		var ids []int
		for _, w := range writeRoutes {
			ids = append(ids,
				r.env.Cluster.Emulator.InjectFault(emulator.Fault{Method: w.method, Route: w.route, LoseResponse: emulator.LoseWith502, LossRate: lossRate / 2}),
				r.env.Cluster.Emulator.InjectFault(emulator.Fault{Method: w.method, Route: w.route, LoseResponse: emulator.LoseByDroppingConnection, LossRate: (lossRate / 2) / (1 - lossRate/2)}))
		}
		wg.Go(func() {
			if killErr = r.awaitNewClaim(ctx, before); killErr == nil {
				takeover, killErr = harness.KillLeader(ctx, r.env.Cluster)
			}
		})
		return func(context.Context) error {
			for _, id := range ids {
				r.env.Cluster.Emulator.RemoveFault(id)
			}
			return nil
		}, nil
	})
	wg.Wait()
	if err != nil {
		return end, err
	}
	if killErr != nil {
		return end, fmt.Errorf("killing the leader mid-burst: %w", killErr)
	}
	r.note("replica %d led and was killed; the standby held the lease %.1f s later", takeover.Killed+1, takeover.After.Seconds())
	writes := map[string]bool{}
	for _, w := range writeRoutes {
		writes[w.method+" "+w.route] = true
	}
	sent, lost := 0, 0
	for _, request := range r.env.Cluster.Emulator.Requests() {
		if !writes[request.Route] || request.Time.Before(start) || request.Time.After(end) {
			continue
		}
		sent++
		if request.Status == http.StatusBadGateway || request.Status == 0 {
			lost++
		}
	}
	r.note("%d of the %d creates and deletes sent during the fault lost their answers", lost, sent)
	return end, nil
}
