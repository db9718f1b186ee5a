package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// Names of the faults, for Config.Faults.
const (
	FaultAPILatency        = "api-latency"
	FaultAPIHang           = "api-hang"
	Fault5xxStorm          = "5xx-storm"
	Fault429Storm          = "429-storm"
	FaultAPIDown           = "api-down"
	FaultTokenRevoked      = "token-revoked"
	FaultAPIServerRestart  = "kube-apiserver-restart"
	FaultControllerKilled  = "controller-killed"
	FaultWebhookDown       = "webhook-down"
	FaultRecycleHalf       = "recycle-half"
	FaultNodeClaimsDeleted = "nodeclaims-deleted"
	FaultLeaderKilled      = "leader-killed"
	FaultLostAnswers       = "lost-answers"
	FaultNodesNotReady     = "nodes-not-ready"
	FaultCSRSignerDown     = "csr-signer-down"
	FaultAPIServerThrottle = "kube-apiserver-throttles"
)

// Faults are the faults, in its order.
var Faults = []string{
	FaultAPILatency, FaultAPIHang, Fault5xxStorm, Fault429Storm, FaultAPIDown, FaultTokenRevoked,
	FaultAPIServerRestart, FaultControllerKilled, FaultWebhookDown, FaultRecycleHalf, FaultNodeClaimsDeleted,
	FaultLeaderKilled, FaultLostAnswers, FaultNodesNotReady, FaultCSRSignerDown, FaultAPIServerThrottle, FaultSharedAccount,
}

// controllerReplicas is how many replicas of the controller a fault's cluster runs: the chart's
// two, with leader election, for the faults that kill or starve the leader; one, as the
// benchmarks run it, for the others.
func controllerReplicas(fault string) int {
	switch fault {
	case FaultLeaderKilled, FaultLostAnswers, FaultAPIServerThrottle:
		return 2
	}
	return 1
}

// chaosFault is one fault and how a run goes through it.
type chaosFault struct {
	name, title string
	// startLow starts the workload at its low rather than its peak, for faults that begin with
	// a scale-up.
	startLow bool
	// run takes the workload through the fault, and returns when the fault ended, with the
	// deployment at its peak.
	run func(context.Context, *chaosRun) (time.Time, error)
}

// apiFault is a fault of every request to Linode's API (the controller's; the simulated
// kubelets do not call the API).
func apiFault(f emulator.Fault) func(context.Context, *chaosRun) (func(context.Context) error, error) {
	return func(_ context.Context, r *chaosRun) (func(context.Context) error, error) {
		id := r.env.Cluster.Emulator.InjectFault(f)
		return func(context.Context) error {
			r.env.Cluster.Emulator.RemoveFault(id)
			return nil
		}, nil
	}
}

func chaosFaultByName(name string) (chaosFault, bool) {
	switch name {
	case FaultAPILatency:
		return chaosFault{name, "API latency 2 s", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.window, apiFault(emulator.Fault{Latency: 2 * time.Second}))
		}}, true
	case FaultAPIHang:
		return chaosFault{name, "API hangs", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.window, apiFault(emulator.Fault{Hang: true}))
		}}, true
	case Fault5xxStorm:
		return chaosFault{name, "5xx storm (9 in 10 requests answered 500)", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.storm, apiFault(emulator.Fault{ErrorRate: 0.9, ErrorStatus: http.StatusInternalServerError}))
		}}, true
	case Fault429Storm:
		return chaosFault{name, "429 storm (every request, Retry-After 1 s)", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.window, apiFault(emulator.Fault{ErrorRate: 1, ErrorStatus: http.StatusTooManyRequests}))
		}}, true
	case FaultAPIDown:
		return chaosFault{name, "API down mid-scale-up", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.midScaleUp(ctx, r.scale.apiDown, apiFault(emulator.Fault{Unreachable: true}))
		}}, true
	case FaultTokenRevoked:
		// Every request answered 401, as Linode answers a revoked token, until it is restored.
		return chaosFault{name, "token revoked, then restored", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.window, apiFault(emulator.Fault{ErrorRate: 1, ErrorStatus: http.StatusUnauthorized}))
		}}, true
	case FaultAPIServerRestart:
		return chaosFault{name, "kube-apiserver restarted mid-scale-up", true, restartAPIServer}, true
	case FaultControllerKilled:
		return chaosFault{name, "controller killed during a delete", false, killControllerDuringDelete}, true
	case FaultWebhookDown:
		return chaosFault{name, "webhook down", true, func(ctx context.Context, r *chaosRun) (time.Time, error) {
			return r.throughout(ctx, r.scale.window, func(ctx context.Context, r *chaosRun) (func(context.Context) error, error) {
				if err := r.env.Cluster.SetWebhookReachable(ctx, false); err != nil {
					return nil, err
				}
				return func(ctx context.Context) error {
					return r.retryKube(ctx, func(ctx context.Context) error { return r.env.Cluster.SetWebhookReachable(ctx, true) })
				}, nil
			})
		}}, true
	case FaultRecycleHalf:
		return chaosFault{name, "recycle of half the nodes", false, recycleHalf}, true
	case FaultNodeClaimsDeleted:
		return chaosFault{name, "NodeClaims deleted behind the controller's back", false, deleteHalfTheNodeClaims}, true
	case FaultLeaderKilled:
		return chaosFault{name, "leader killed mid-scale-up (2 replicas)", true, killLeaderMidScaleUp}, true
	case FaultLostAnswers:
		return chaosFault{name, "creates and deletes lose 30% of their answers (502, dropped connection), leader killed mid-burst (2 replicas)", true, loseAnswersAndTheLeader}, true
	case FaultNodesNotReady:
		return chaosFault{name, "new nodes register but stay not Ready", true, holdNodesNotReady}, true
	case FaultCSRSignerDown:
		return chaosFault{name, "CSR signer down", true, stopTheCSRSigner}, true
	case FaultAPIServerThrottle:
		return chaosFault{name, "kube-apiserver throttles the controller (429s, 2 replicas)", true, throttleTheController}, true
	}
	return chaosFault{}, false
}

// throughout keeps a fault on for d while the workload scales up from its low (Karpenter
// launches) and, halfway, back down (Karpenter consolidates, deleting Linodes); when the fault
// ends, the workload goes back up to its peak.
func (r *chaosRun) throughout(ctx context.Context, d time.Duration,
	inject func(context.Context, *chaosRun) (func(context.Context) error, error)) (time.Time, error) {
	remove, err := inject(ctx, r)
	if err != nil {
		return time.Time{}, err
	}
	start := time.Now()
	if err := r.scaleTo(ctx, r.scale.peak); err != nil {
		return time.Time{}, err
	}
	if err := sleep(ctx, d/2); err != nil {
		return time.Time{}, err
	}
	if err := r.scaleTo(ctx, r.scale.low); err != nil {
		return time.Time{}, err
	}
	if err := sleep(ctx, time.Until(start.Add(d))); err != nil {
		return time.Time{}, err
	}
	end := time.Now()
	if err := remove(ctx); err != nil {
		return time.Time{}, err
	}
	return end, r.scaleTo(ctx, r.scale.peak)
}

// midScaleUp scales the workload up from its low and injects the fault for d as soon as
// Karpenter has created a NodeClaim for it, its launch in flight.
func (r *chaosRun) midScaleUp(ctx context.Context, d time.Duration,
	inject func(context.Context, *chaosRun) (func(context.Context) error, error)) (time.Time, error) {
	if err := r.scaleUpUntilLaunching(ctx); err != nil {
		return time.Time{}, err
	}
	remove, err := inject(ctx, r)
	if err != nil {
		return time.Time{}, err
	}
	if err := sleep(ctx, d); err != nil {
		return time.Time{}, err
	}
	return time.Now(), remove(ctx)
}

// scaleUpUntilLaunching scales the workload to its peak and returns once Karpenter has created a
// NodeClaim for it (a minute at most).
func (r *chaosRun) scaleUpUntilLaunching(ctx context.Context) error {
	before, err := r.claimNames(ctx)
	if err != nil {
		return err
	}
	if err := r.scaleTo(ctx, r.scale.peak); err != nil {
		return err
	}
	return r.awaitNewClaim(ctx, before)
}

// awaitNewClaim returns once a NodeClaim not in before exists (a minute at most).
func (r *chaosRun) awaitNewClaim(ctx context.Context, before map[string]bool) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		now, err := r.claimNames(ctx)
		if err != nil {
			return false, err
		}
		for name := range now {
			if !before[name] {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Karpenter to launch for the scale-up: %w", err)
	}
	return nil
}

func (r *chaosRun) claimNames(ctx context.Context) (map[string]bool, error) {
	var claims karpv1.NodeClaimList
	if err := r.env.Cluster.Kube.List(ctx, &claims); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, claim := range claims.Items {
		names[claim.Name] = true
	}
	return names, nil
}

// restartAPIServer stops kube-apiserver while Karpenter launches for a scale-up, leaves it down
// for 10 s, and starts it again.
func restartAPIServer(ctx context.Context, r *chaosRun) (time.Time, error) {
	if err := r.scaleUpUntilLaunching(ctx); err != nil {
		return time.Time{}, err
	}
	if err := r.env.Cluster.RestartAPIServer(10 * time.Second); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// killControllerDuringDelete scales down, kills the controller (SIGKILL) as soon as Karpenter
// is deleting a NodeClaim, scales back up while it is gone, and starts it again.
func killControllerDuringDelete(ctx context.Context, r *chaosRun) (time.Time, error) {
	if err := r.scaleTo(ctx, r.scale.low); err != nil {
		return time.Time{}, err
	}
	var deleting string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var claims karpv1.NodeClaimList
		if err := r.env.Cluster.Kube.List(ctx, &claims); err != nil {
			return false, err
		}
		for _, claim := range claims.Items {
			if !claim.DeletionTimestamp.IsZero() {
				deleting = claim.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("waiting for Karpenter to delete a NodeClaim: %w", err)
	}
	if err := r.env.Cluster.KillController(); err != nil {
		return time.Time{}, err
	}
	r.note("killed while NodeClaim %s was being deleted", deleting)
	if err := r.scaleTo(ctx, r.scale.peak); err != nil {
		return time.Time{}, err
	}
	if err := sleep(ctx, 5*time.Second); err != nil {
		return time.Time{}, err
	}
	if err := r.env.Cluster.RestartController(ctx, localcluster.RestartOptions{}); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// recycleHalf recycles half the nodes of Karpenter's pools through the LKE API, as a user or an
// LKE upgrade would.
func recycleHalf(ctx context.Context, r *chaosRun) (time.Time, error) {
	cluster := r.env.Cluster
	var nodes []emulator.NodeInfo
	for _, pool := range cluster.Emulator.Pools(cluster.LKEClusterID) {
		nodes = append(nodes, pool.Nodes...)
	}
	api := cluster.Emulator.NewClient()
	recycled := nodes[:len(nodes)/2]
	for _, node := range recycled {
		if err := api.RecycleLKENodePoolNode(ctx, cluster.LKEClusterID, node.ID); err != nil {
			return time.Time{}, fmt.Errorf("recycling LKE node %s: %w", node.ID, err)
		}
	}
	r.note("recycled %d of %d nodes", len(recycled), len(nodes))
	// The recycle is over once every recycled node's old Linode is gone.
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
		for _, instance := range cluster.Emulator.Instances() {
			if slices.ContainsFunc(recycled, func(node emulator.NodeInfo) bool { return node.InstanceID == instance.ID }) {
				return false, nil
			}
		}
		return true, nil
	})
	return time.Now(), err
}

// deleteHalfTheNodeClaims removes half the NodeClaims as a backup restore or a reinstall of the
// CRDs would: gone at once, their finalizers never run, their Nodes and Linodes left behind.
func deleteHalfTheNodeClaims(ctx context.Context, r *chaosRun) (time.Time, error) {
	kube := r.env.Cluster.Kube
	var claims karpv1.NodeClaimList
	if err := kube.List(ctx, &claims); err != nil {
		return time.Time{}, err
	}
	victims := claims.Items[:len(claims.Items)/2]
	for i := range victims {
		if err := deleteWithoutFinalizers(ctx, kube, &victims[i]); err != nil {
			return time.Time{}, err
		}
	}
	r.note("deleted %d of %d NodeClaims", len(victims), len(claims.Items))
	return time.Now(), nil
}

// deleteWithoutFinalizers removes the object's finalizers and deletes it, on the condition that
// nothing changed it in between (the controller adds its finalizer back), so that it is gone
// without its finalizers ever running.
func deleteWithoutFinalizers(ctx context.Context, kube client.Client, obj client.Object) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		obj.SetFinalizers(nil)
		if err := kube.Update(ctx, obj); err != nil {
			return false, nil //nolint:nilerr // a conflict with the controller: read again
		}
		err := kube.Delete(ctx, obj, client.Preconditions{ResourceVersion: ptr.To(obj.GetResourceVersion())})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return true, client.IgnoreNotFound(err)
	})
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// killLeaderMidScaleUp runs the chart's two replicas through the loss of the leader's node. It
// times a scale-up from the low to the peak without the fault, scales back down, and scales up
// again; as soon as Karpenter has created a NodeClaim for it, it kills the leader (SIGKILL: a
// lost node releases nothing) and leaves it down, as the node's pod stays down for minutes. The
// fault ends when the standby holds the lease; the note compares the time to all running and
// the Linode launches of the two scale-ups.
func killLeaderMidScaleUp(ctx context.Context, r *chaosRun) (time.Time, error) {
	cluster := r.env.Cluster
	atLow, err := r.claimNames(ctx)
	if err != nil {
		return time.Time{}, err
	}
	baseline, err := r.timedScaleUp(ctx, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("the scale-up without the fault: %w", err)
	}
	if err := r.scaleTo(ctx, r.scale.low); err != nil {
		return time.Time{}, err
	}
	// Back to as many nodes as the low had, so that the second scale-up launches as many.
	err = wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		now, err := r.claimNames(ctx)
		return err == nil && len(now) <= len(atLow), nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("consolidating back to %d NodeClaims after the scale-up without the fault: %w", len(atLow), err)
	}
	if _, ok, err := r.awaitSettled(ctx, "the scale-down between the two scale-ups", 4*time.Minute); err != nil || !ok {
		return time.Time{}, errors.Join(err, errors.New("the scale-down to the low did not settle within 4 minutes"))
	}
	var takeover harness.LeaderTakeover
	faulted, err := r.timedScaleUp(ctx, func(ctx context.Context) error {
		takeover, err = harness.KillLeader(ctx, cluster)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("the scale-up with the fault: %w", err)
	}
	r.note("replica %d led and was killed %.1f s into the scale-up with %d NodeClaims launching; the standby held the lease %.1f s later (lease %v)",
		takeover.Killed+1, faulted.killedAfter.Seconds(), faulted.claimsAtKill, takeover.After.Seconds(), takeover.Lease)
	r.note("all %d pods running %.1f s after the scale-up, against %.1f s without the fault (%+.1f s); Linode launches %d for %d new NodeClaims, against %d for %d",
		r.scale.peak, faulted.allRunning.Seconds(), baseline.allRunning.Seconds(), (faulted.allRunning - baseline.allRunning).Seconds(),
		faulted.launches, faulted.newClaims, baseline.launches, baseline.newClaims)
	return takeover.At, nil
}

// scaleUpTiming is what one scale-up from the low to the peak took.
type scaleUpTiming struct {
	// allRunning is from the scale-up until every replica ran.
	allRunning time.Duration
	// launches are the successful Linode launches (LKE pools or Linodes) during it; newClaims
	// the NodeClaims it created that were still there when every replica ran.
	launches, newClaims int
	// killedAfter and claimsAtKill say when the fault came: how long into the scale-up, and how
	// many of its NodeClaims existed then.
	killedAfter  time.Duration
	claimsAtKill int
}

// timedScaleUp scales the workload to its peak and waits until every replica runs. With fault,
// it calls it as soon as Karpenter has created a NodeClaim for the scale-up.
func (r *chaosRun) timedScaleUp(ctx context.Context, fault func(context.Context) error) (scaleUpTiming, error) {
	var timing scaleUpTiming
	before, err := r.claimNames(ctx)
	if err != nil {
		return timing, err
	}
	start := time.Now()
	if fault != nil {
		if err := r.scaleUpUntilLaunching(ctx); err != nil {
			return timing, err
		}
		timing.killedAfter = time.Since(start)
		if timing.claimsAtKill, err = r.newClaims(ctx, before); err != nil {
			return timing, err
		}
		if err := fault(ctx); err != nil {
			return timing, err
		}
	} else if err := r.scaleTo(ctx, r.scale.peak); err != nil {
		return timing, err
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		notRunning, err := r.podsNotRunning(ctx)
		return err == nil && notRunning == 0, nil
	})
	if err != nil {
		return timing, fmt.Errorf("waiting for %d replicas to run: %w", r.scale.peak, err)
	}
	timing.allRunning = time.Since(start)
	for _, request := range r.env.Cluster.Emulator.Requests() {
		if harness.CreateRoutes[request.Route] && !request.Time.Before(start) && request.Status < 300 {
			timing.launches++
		}
	}
	timing.newClaims, err = r.newClaims(ctx, before)
	return timing, err
}

// newClaims counts the NodeClaims not in before.
func (r *chaosRun) newClaims(ctx context.Context, before map[string]bool) (int, error) {
	now, err := r.claimNames(ctx)
	if err != nil {
		return 0, err
	}
	count := 0
	for name := range now {
		if !before[name] {
			count++
		}
	}
	return count, nil
}
