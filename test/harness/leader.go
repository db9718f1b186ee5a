package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// LeaderTakeover is what the loss of the leader took.
type LeaderTakeover struct {
	// Killed is the replica that led and was killed.
	Killed int
	// At is when the standby took the lease (the Lease's acquire time), After the kill.
	At    time.Time
	After time.Duration
	// Lease is the lease's duration, the longest a standby waits for a holder that stopped.
	Lease time.Duration
}

// KillLeader kills the replica that leads and waits until another holds the lease.
func KillLeader(ctx context.Context, cluster *localcluster.Cluster) (LeaderTakeover, error) {
	var takeover LeaderTakeover
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		takeover.Killed, err = cluster.Leader(ctx)
		return err == nil, nil //nolint:nilerr // a replica slow to answer: ask again
	})
	if err != nil {
		return takeover, fmt.Errorf("finding the replica that leads: %w", err)
	}
	lease, ok, err := cluster.LeaderLease(ctx)
	if err != nil || !ok {
		return takeover, errors.Join(err, errors.New("the leader election's Lease is missing"))
	}
	takeover.Lease = lease.Duration
	if err := cluster.KillReplica(takeover.Killed); err != nil {
		return takeover, err
	}
	killed := time.Now()
	var taken localcluster.Lease
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		now, _, err := cluster.LeaderLease(ctx)
		if err != nil || now.Holder == "" || now.Holder == lease.Holder {
			return false, nil //nolint:nilerr // kube-apiserver busy: look again
		}
		taken = now
		leader, err := cluster.Leader(ctx)
		return err == nil && leader != takeover.Killed, nil
	})
	if err != nil {
		return takeover, fmt.Errorf("no standby held the lease within 2 minutes of the leader's kill: %w", err)
	}
	// The new holder stamps the lease when it takes it; the same clock killed the leader.
	takeover.At = taken.Acquired
	takeover.After = takeover.At.Sub(killed)
	return takeover, nil
}
