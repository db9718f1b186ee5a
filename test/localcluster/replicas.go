package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaderElectionLease is the Lease the controller's replicas elect their leader with: core's
// default name, which the chart's Role lets the ServiceAccount update, in the release's namespace.
const LeaderElectionLease = "karpenter-leader-election"

// controllerReplica is one process of the controller, as one pod of the chart's Deployment.
type controllerReplica struct {
	// name names its log: controller for the first replica, controller-2 and on for the others.
	name string
	// ports are its metrics, health probe and webhook ports, the same across restarts so that
	// its webhook endpoint stays valid.
	ports []int
	// webhook is its endpoint of the webhook Service, kept on its readiness; nil in the kwok
	// provider's mode, which serves no webhooks.
	webhook *webhookEndpoint
	// starting is held by whoever starts its process, RestartReplica or the restart after an
	// exit, so that one process runs.
	starting sync.Mutex

	// mu guards what follows, and the current run's state.
	mu  sync.Mutex
	run *replicaRun
	// restarts counts the starts after an exit or a kill.
	restarts int
	// lastExit and exitsInARow tell a crash loop: exits on its own, each within
	// restartForgetAfter of the one before.
	lastExit    time.Time
	exitsInARow int
	// failure is the first exit that showed the replica broken, reported by CheckHealthy from
	// then on.
	failure error
}

func newControllerReplica(i int) (*controllerReplica, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	name := "controller"
	if i > 0 {
		name = fmt.Sprintf("controller-%d", i+1)
	}
	return &controllerReplica{name: name, ports: ports}, nil
}

// current is the replica's run: its process, which may have exited; nil before its first start.
func (r *controllerReplica) current() *replicaRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run
}

func (r *controllerReplica) webhookPort() int32 { return int32(r.ports[2]) }

func (r *controllerReplica) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", r.ports[0])
}

func (r *controllerReplica) readyzURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", r.ports[1])
}

// endpointSliceName is the name of the replica's EndpointSlice of the webhook Service.
func (r *controllerReplica) endpointSliceName() string {
	return strings.Replace(r.name, "controller", webhookService, 1)
}

// leading tells whether the replica says, on its metrics endpoint, that it holds the lease
// (controller-runtime's leader_election_master_status).
func (r *controllerReplica) leading(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.metricsURL(), nil)
	if err != nil {
		return false, err
	}
	// A replica busy with thousands of pods on a loaded machine can take seconds to answer.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	leader := fmt.Sprintf("leader_election_master_status{name=%q} 1", LeaderElectionLease)
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for lines.Scan() {
		if lines.Text() == leader {
			return true, nil
		}
	}
	return false, lines.Err()
}

// ControllerReplicas is how many replicas of the controller run.
func (c *Cluster) ControllerReplicas() int { return len(c.replicas) }

// ReplicaMetricsURL is where the controller's replica i serves its Prometheus metrics.
func (c *Cluster) ReplicaMetricsURL(i int) string { return c.replicas[i].metricsURL() }

// ReplicaLog is the path of the log of the controller's replica i; every start of it appends.
func (c *Cluster) ReplicaLog(i int) string { return c.replicaLog(c.replicas[i]) }

func (c *Cluster) replicaLog(replica *controllerReplica) string {
	return filepath.Join(c.LogDir, replica.name+".log")
}

// KillReplica kills the controller's replica i at once (SIGKILL), as the loss of its node would:
// it releases nothing, so its lease runs out before another replica can take it. It comes back
// after the back-off (10 s the first time), as its Deployment's pod would, without CheckHealthy
// reporting it; RestartReplica brings it back at once.
func (c *Cluster) KillReplica(i int) error {
	replica := c.replicas[i]
	replica.mu.Lock()
	run := replica.run
	select {
	case <-run.process.Exited():
		replica.mu.Unlock()
		return run.process.CheckRunning()
	default:
	}
	run.killed = true
	replica.mu.Unlock()
	return run.process.Kill()
}

// Lease is the leader election's Lease as kube-apiserver holds it.
type Lease struct {
	// Holder is the holder's identity (its host name and a random suffix); empty when none.
	Holder string
	// Duration is how long the holder keeps the lease without renewing it.
	Duration time.Duration
	// Acquired is when the holder took it.
	Acquired time.Time
}

// LeaderLease reads the leader election's Lease; ok is false while no replica has created it.
func (c *Cluster) LeaderLease(ctx context.Context) (lease Lease, ok bool, err error) {
	var stored coordinationv1.Lease
	if err := c.Kube.Get(ctx, client.ObjectKey{Namespace: webhookNamespace, Name: LeaderElectionLease}, &stored); err != nil {
		return Lease{}, false, client.IgnoreNotFound(err)
	}
	if stored.Spec.HolderIdentity != nil {
		lease.Holder = *stored.Spec.HolderIdentity
	}
	if stored.Spec.LeaseDurationSeconds != nil {
		lease.Duration = time.Duration(*stored.Spec.LeaseDurationSeconds) * time.Second
	}
	if stored.Spec.AcquireTime != nil {
		lease.Acquired = stored.Spec.AcquireTime.Time
	}
	return lease, true, nil
}

// ErrNoLeader is returned by Leader while no running replica says it leads.
var ErrNoLeader = errors.New("no running replica of the controller leads")

// Leader finds the replica that holds the lease: the one ready replica whose metrics say it
// leads. The Lease's holder identity names a host, which every replica here shares, so the
// replicas' own word tells them apart.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	leader := -1
	for i, replica := range c.replicas {
		// One still starting may not answer yet.
		if !replica.ready() {
			continue
		}
		leading, err := replica.leading(ctx)
		if err != nil {
			return -1, fmt.Errorf("reading the metrics of the %s: %w", replica.name, err)
		}
		if !leading {
			continue
		}
		if leader >= 0 {
			return -1, fmt.Errorf("both the %s and the %s say they lead", c.replicas[leader].name, replica.name)
		}
		leader = i
	}
	if leader < 0 {
		return -1, ErrNoLeader
	}
	return leader, nil
}
