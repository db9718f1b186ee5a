package localcluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Two replicas run as the chart runs them: one leads, and when it is killed as a lost node would
// kill it, the other takes the lease once it runs out and keeps it when the killed one comes
// back after its back-off, as its Deployment's pod would, with nothing the chart's RBAC refuses.
func TestTheStandbyTakesTheLeaseWhenTheLeaderIsKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster := startReplicas(ctx, t)
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
	// Its pod comes back by itself, as its Deployment would bring it back, and stands by.
	awaitReady(ctx, t, cluster, leader, 1)
	if now, err := cluster.Leader(ctx); err != nil || now != standby {
		t.Errorf("after the killed replica came back, replica %d leads (%v); want the standby, %d, to keep the lease", now, err, standby)
	}
	refusals, err := cluster.ControllerRefusals()
	if err != nil || len(refusals) > 0 {
		t.Errorf("the chart's RBAC refused the replicas: %v %v", refusals, err)
	}
	t.Logf("lease %v; the standby led %.1f s after the leader was killed", lease.Duration, takeover.Seconds())
}

// A leader frozen past its renew deadline, as on a machine too loaded to run it, loses the lease
// to the standby and exits, as controller-runtime does; it comes back as the kubelet would bring
// its container back, and leads again once the other replica is lost, without CheckHealthy
// counting the lost lease as a failure. A replica that cannot start is reported, although it
// keeps being started again.
func TestAReplicaThatExitsIsStartedAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cluster := startReplicas(ctx, t)
	leader := awaitLeader(ctx, t, cluster)
	lease, _, err := cluster.LeaderLease(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Frozen until the standby has taken the lease, the leader finds it taken when it runs again.
	thaw, err := cluster.FreezeReplica(leader)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		now, _, err := cluster.LeaderLease(ctx)
		return err == nil && now.Holder != "" && now.Holder != lease.Holder, nil
	})
	if thawErr := thaw(); err != nil || thawErr != nil {
		t.Fatalf("the standby did not take the lease of the frozen leader within a minute: %v %v", err, thawErr)
	}
	// It says it leads until it finds out it does not and exits: wait for its return first.
	awaitReady(ctx, t, cluster, leader, 1)
	standby := awaitLeader(ctx, t, cluster)
	if standby == leader {
		t.Fatalf("replica %d was frozen past the lease and still leads", leader)
	}
	if !strings.Contains(readFile(t, cluster.ReplicaLog(leader)), lostLeaseMessage) {
		t.Errorf("replica %d was started again, but its log does not say it lost the leader election", leader)
	}
	if err := cluster.CheckHealthy(); err != nil {
		t.Errorf("a lost lease counts as a failure: %v", err)
	}
	if err := cluster.KillReplica(standby); err != nil {
		t.Fatal(err)
	}
	if again := awaitLeader(ctx, t, cluster); again != leader {
		t.Errorf("with replica %d killed, replica %d leads; want replica %d, started again, to lead", standby, again, leader)
	}

	// A setting the controller refuses, as a chart value mistyped on an upgrade would give it.
	broken := RestartOptions{Env: []string{"BATCH_MAX_DURATION=ten seconds"}}
	if err := cluster.RestartReplica(ctx, standby, broken); err == nil {
		t.Fatalf("replica %d started with BATCH_MAX_DURATION=ten seconds", standby)
	}
	restarts := cluster.ReplicaRestarts(standby)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, restartInitialDelay+time.Minute, true, func(context.Context) (bool, error) {
		return cluster.ReplicaRestarts(standby) > restarts && !cluster.ReplicaReady(standby), nil
	})
	if err != nil {
		t.Fatalf("replica %d, refusing its settings, was not started again after the back-off: %v", standby, err)
	}
	if err := cluster.CheckHealthy(); err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("CheckHealthy says %v about a replica that refuses its settings at every start; want it reported", err)
	}
	if now, err := cluster.Leader(ctx); err != nil || now != leader {
		t.Errorf("while the other replica cannot start, replica %d leads (%v); want replica %d", now, err, leader)
	}
}

func startReplicas(ctx context.Context, t *testing.T) *Cluster {
	t.Helper()
	cluster, err := Start(ctx, Options{WorkDir: t.TempDir(), ControllerReplicas: 2, Progress: func(step string) { t.Log(step) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cluster
}

// awaitReady waits until replica i has been started again restarts times and is ready.
func awaitReady(ctx context.Context, t *testing.T, cluster *Cluster, i, restarts int) {
	t.Helper()
	_, err := cluster.Await(ctx, restartInitialDelay+2*time.Minute, 200*time.Millisecond, func(context.Context) (bool, error) {
		return cluster.ReplicaRestarts(i) == restarts && cluster.ReplicaReady(i), nil
	})
	if err != nil {
		t.Fatalf("replica %d was not ready after %d restarts (it has %d): %v", i, restarts, cluster.ReplicaRestarts(i), err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
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
