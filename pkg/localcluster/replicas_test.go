package localcluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Two replicas run as the chart runs them: one leads, and when it is killed as a lost node would
// kill it, the other takes the lease once it runs out, with nothing the chart's RBAC refuses.
func TestTheStandbyTakesTheLeaseWhenTheLeaderIsKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err := Start(ctx, Options{WorkDir: t.TempDir(), ControllerReplicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})
	leader := awaitLeader(ctx, t, cluster)
	lease, ok, err := cluster.LeaderLease(ctx)
	if err != nil || !ok || lease.Holder == "" {
		t.Fatalf("replica %d leads, but the Lease has no holder: %+v %v %v", leader, lease, ok, err)
	}

	if err := cluster.KillReplica(leader); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	standby := awaitLeader(ctx, t, cluster)
	takeover := time.Since(killed)
	if standby == leader {
		t.Fatalf("replica %d was killed and still leads", leader)
	}
	after, _, err := cluster.LeaderLease(ctx)
	if err != nil || after.Holder == "" || after.Holder == lease.Holder {
		t.Errorf("the Lease's holder went from %q to %q (%v); want the standby's identity", lease.Holder, after.Holder, err)
	}
	// The standby retries every 2 s, so it holds the lease at most that long after it ran out.
	if limit := lease.Duration + 3*time.Second; takeover > limit {
		t.Errorf("the standby took the lease %v after the leader was killed; want within %v (the lease, %v, and a retry)", takeover, limit, lease.Duration)
	}
	if err := cluster.CheckHealthy(); err != nil {
		t.Errorf("the killed leader counts as a failure: %v", err)
	}
	refusals, err := cluster.ControllerRefusals()
	if err != nil || len(refusals) > 0 {
		t.Errorf("the chart's RBAC refused the replicas: %v %v", refusals, err)
	}
	t.Logf("lease %v; the standby led %.1f s after the leader was killed", lease.Duration, takeover.Seconds())
}

func awaitLeader(ctx context.Context, t *testing.T, cluster *Cluster) int {
	t.Helper()
	for {
		leader, err := cluster.Leader(ctx)
		if err == nil {
			return leader
		}
		if !errors.Is(err, ErrNoLeader) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("no replica led")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
