package localcluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Two replicas run as the chart runs them: one leads, and when it is killed as a lost node would
// kill it, the other takes the lease once it runs out and keeps it when the killed one comes
// back, with nothing the chart's RBAC refuses.
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
	// The standby reads the lease every retry period (2 s, plus up to 120% jitter): it saw the
	// last renewal up to one such wait late, times the lease from then, and takes it at the wait
	// after that.
	if limit := lease.Duration + 2*maxRetryWait; takeover > limit {
		t.Errorf("the standby took the lease %v after the leader was killed; want within %v (the lease, %v, and two retries)", takeover, limit, lease.Duration)
	}
	if err := cluster.CheckHealthy(); err != nil {
		t.Errorf("the killed leader counts as a failure: %v", err)
	}
	// Its pod comes back, as its Deployment would bring it back, and stands by.
	if err := cluster.RestartReplica(ctx, leader, RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	if now, err := cluster.Leader(ctx); err != nil || now != standby {
		t.Errorf("after the killed replica came back, replica %d leads (%v); want the standby, %d, to keep the lease", now, err, standby)
	}
	refusals, err := cluster.ControllerRefusals()
	if err != nil || len(refusals) > 0 {
		t.Errorf("the chart's RBAC refused the replicas: %v %v", refusals, err)
	}
	t.Logf("lease %v; the standby led %.1f s after the leader was killed", lease.Duration, takeover.Seconds())
}

// maxRetryWait is the longest wait between two of a standby's looks at the lease: core's retry
// period, 2 s, with client-go's jitter of up to 1.2 times as much again.
const maxRetryWait = 2 * time.Second * 22 / 10

func awaitLeader(ctx context.Context, t *testing.T, cluster *Cluster) int {
	t.Helper()
	leader := -1
	_, err := cluster.Await(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		leader, err = cluster.Leader(ctx)
		if errors.Is(err, ErrNoLeader) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("no replica led: %v", err)
	}
	return leader
}
