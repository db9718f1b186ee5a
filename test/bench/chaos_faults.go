package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
)

// Names of the faults, for ChaosConfig.Faults.
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
)

// ChaosFaults are the faults, in its order.
var ChaosFaults = []string{
	FaultAPILatency, FaultAPIHang, Fault5xxStorm, Fault429Storm, FaultAPIDown, FaultTokenRevoked,
	FaultAPIServerRestart, FaultControllerKilled, FaultWebhookDown, FaultRecycleHalf, FaultNodeClaimsDeleted,
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
		id := r.env.cluster.Emulator.InjectFault(f)
		return func(context.Context) error {
			r.env.cluster.Emulator.RemoveFault(id)
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
				if err := r.env.cluster.SetWebhookReachable(ctx, false); err != nil {
					return nil, err
				}
				return func(ctx context.Context) error {
					return r.retryKube(ctx, func(ctx context.Context) error { return r.env.cluster.SetWebhookReachable(ctx, true) })
				}, nil
			})
		}}, true
	case FaultRecycleHalf:
		return chaosFault{name, "recycle of half the nodes", false, recycleHalf}, true
	case FaultNodeClaimsDeleted:
		return chaosFault{name, "NodeClaims deleted behind the controller's back", false, deleteHalfTheNodeClaims}, true
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
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
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
	if err := r.env.cluster.Kube.List(ctx, &claims); err != nil {
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
	if err := r.env.cluster.RestartAPIServer(10 * time.Second); err != nil {
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
		if err := r.env.cluster.Kube.List(ctx, &claims); err != nil {
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
	if err := r.env.cluster.KillController(); err != nil {
		return time.Time{}, err
	}
	r.note("killed while NodeClaim %s was being deleted", deleting)
	if err := r.scaleTo(ctx, r.scale.peak); err != nil {
		return time.Time{}, err
	}
	if err := sleep(ctx, 5*time.Second); err != nil {
		return time.Time{}, err
	}
	if err := r.env.cluster.RestartController(ctx, localcluster.RestartOptions{}); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// recycleHalf recycles half the nodes of Karpenter's pools through the LKE API, as a user or an
// LKE upgrade would.
func recycleHalf(ctx context.Context, r *chaosRun) (time.Time, error) {
	cluster := r.env.cluster
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
	kube := r.env.cluster.Kube
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
