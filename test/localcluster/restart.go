package localcluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// The kubelet's CrashLoopBackOff, with which it starts the chart's controller container again
// when it exits (restartPolicy Always): 10 s, doubling up to 5 minutes (kubelet.go's
// backOffPeriod and MaxContainerBackOff), forgotten after 10 minutes without an exit
// (flowcontrol.Backoff's expiry, at twice the cap).
const (
	restartInitialDelay = 10 * time.Second
	restartMaxDelay     = 5 * time.Minute
	restartForgetAfter  = 2 * restartMaxDelay
)

// crashLoopExits is how many exits in a row, each within restartForgetAfter of the one before,
// make a crash loop: a controller that keeps losing its lease is broken even though each loss
// on its own is not.
const crashLoopExits = 3

// lostLeaseMessage is in the controller's output when it exits because it lost the leader
// election: controller-runtime logs it, and cmd/controller prints it as its error.
const lostLeaseMessage = "leader election lost"

// replicaRun is one run of a replica's process, from its start to its exit.
type replicaRun struct {
	process *component.Process
	started time.Time
	// logOffset is where its output begins in the replica's log, which every run appends to.
	logOffset int64
	// ready is true once it answered its readiness probe. Guarded by the replica's mu, as are
	// stopping and killed.
	ready bool
	// stopping is true when RestartReplica or Stop asked it to exit: it is not started again.
	stopping bool
	// killed is true when KillReplica killed it: it comes back, and is no failure.
	killed bool
}

// superviseRun waits for the run's process to exit and, unless the exit was asked for, starts
// the replica again after the back-off, as the kubelet starts the container of the chart's
// Deployment again. A replica KillReplica killed comes back too. The kubelet starts a
// container's first exit again at once; here the first wait is already 10 s, so that the
// standby of a killed leader, which saw the lease's last renewal while the killed replica was
// down, takes the lease before the killed replica is back to compete for it.
func (c *Cluster) superviseRun(replica *controllerReplica, run *replicaRun) {
	defer c.supervisors.Done()
	select {
	case <-run.process.Exited():
	case <-c.supervising.Done():
		return
	}
	exited := time.Now()
	replica.mu.Lock()
	if run.stopping || replica.run != run {
		replica.mu.Unlock()
		return
	}
	what := replica.recordExit(run, exited, c.replicaLog(replica))
	restart := replica.restarts + 1
	replica.mu.Unlock()

	c.restartBackoff.Next(replica.name, exited)
	delay := c.restartBackoff.Get(replica.name)
	c.opts.Progress(fmt.Sprintf("the %s %s after %v running; starting it again in %v (restart %d)",
		replica.name, what, exited.Sub(run.started).Round(time.Second), delay, restart))
	select {
	case <-time.After(delay):
	case <-c.supervising.Done():
		return
	}
	replica.starting.Lock()
	defer replica.starting.Unlock()
	replica.mu.Lock()
	current := replica.run == run
	if current {
		replica.restarts = restart
	}
	replica.mu.Unlock()
	if !current {
		return // RestartReplica started it meanwhile
	}
	appendLine(c.replicaLog(replica), fmt.Sprintf("localcluster: the %s %s; started again (restart %d)", replica.name, what, restart))
	err := c.startReplica(c.supervising, replica)
	if err == nil || c.supervising.Err() != nil {
		return
	}
	replica.mu.Lock()
	// A process that started and exited is its own run's to judge. One that never started
	// leaves the replica down for good, and one not ready within startReplica's wait is as
	// broken.
	if exited := replica.run != run && replica.run.process.CheckRunning() != nil; !exited && replica.failure == nil {
		replica.failure = fmt.Errorf("starting the %s again: %w", replica.name, err)
	}
	replica.mu.Unlock()
	c.opts.Progress(fmt.Sprintf("the %s did not start again (restart %d): %s", replica.name, restart, strings.SplitN(err.Error(), "\n", 2)[0]))
}

// recordExit judges an exit the replica did not ask for and says what it was. An exit before
// the replica was ready (a setting it refuses, an API it cannot reach), or for another reason
// than the leader election it lost, is a failure CheckHealthy reports from then on; so is a
// crash loop. A lost leader election is not on its own: controller-runtime exits on it by design,
// and the kubelet brings the container back. The caller holds mu.
func (r *controllerReplica) recordExit(run *replicaRun, at time.Time, logPath string) string {
	if at.Sub(r.lastExit) > restartForgetAfter {
		r.exitsInARow = 0
	}
	r.lastExit = at
	if run.killed {
		return "was killed"
	}
	r.exitsInARow++
	exitErr := run.process.CheckRunning()
	var what string
	var failure error
	switch {
	case !run.ready:
		what = "exited before it was ready"
		failure = fmt.Errorf("the %s exited before it was ready, as a controller that cannot start would: %w", r.name, exitErr)
	case logContains(logPath, run.logOffset, lostLeaseMessage):
		what = "lost the leader election and exited"
	default:
		what = "crashed"
		failure = fmt.Errorf("the %s crashed: %w", r.name, exitErr)
	}
	if failure == nil && r.exitsInARow >= crashLoopExits {
		failure = fmt.Errorf("the %s is in a crash loop: it exited %d times in a row, each within %v of the one before: %w",
			r.name, r.exitsInARow, restartForgetAfter, exitErr)
	}
	if r.failure == nil {
		r.failure = failure
	}
	return what
}

// logContains tells whether the part of the log from offset on holds s.
func logContains(path string, offset int64, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	data, err := io.ReadAll(f)
	return err == nil && bytes.Contains(data, []byte(s))
}

// appendLine adds a line to a component's log, between the output of two of its runs.
func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// logSize is the length of a log file, 0 before it exists.
func logSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// ReplicaRestarts is how many times the controller's replica i was started again after it
// exited or was killed, the restart count its pod would show.
func (c *Cluster) ReplicaRestarts(i int) int {
	replica := c.replicas[i]
	replica.mu.Lock()
	defer replica.mu.Unlock()
	return replica.restarts
}

// ReplicaReady tells whether the controller's replica i runs and has answered its readiness
// probe since it last started.
func (c *Cluster) ReplicaReady(i int) bool { return c.replicas[i].ready() }

func (r *controllerReplica) ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run != nil && r.run.ready && r.run.process.CheckRunning() == nil
}

// ControllerRestarts is ReplicaRestarts summed over the replicas.
func (c *Cluster) ControllerRestarts() int {
	total := 0
	for i := range c.replicas {
		total += c.ReplicaRestarts(i)
	}
	return total
}

// FreezeReplica stops the controller's replica i (SIGSTOP) until thaw lets it go on (SIGCONT), as
// a machine too loaded to give it the CPU would: frozen past its renew deadline, a leader loses
// its lease and exits once it runs again.
func (c *Cluster) FreezeReplica(i int) (thaw func() error, err error) {
	process := c.replicas[i].current().process
	if err := process.Signal(syscall.SIGSTOP); err != nil {
		return nil, err
	}
	return func() error { return process.Signal(syscall.SIGCONT) }, nil
}
