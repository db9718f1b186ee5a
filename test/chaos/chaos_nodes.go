package chaos

import (
	"context"
	"fmt"
	"time"
)

// holdNodesNotReady has every node that registers during the fault stay not Ready, as nodes whose
// network plugin does not start, while the workload scales up and halfway back down; when the
// fault ends, their network comes up, their kubelets start over and they turn Ready. Core's registration timeout (15
// minutes from launch) does not apply to a node that registered, and core v1.15 has no
// initialization timeout: only node repair (Ready=False for 30 minutes, the provider's policy)
// would replace such a node. So no NodeClaim is launched again meanwhile, and the pods wait for
// the nodes launched for them; the note counts the NodeClaims launched during the fault against
// the nodes held.
func holdNodesNotReady(ctx context.Context, r *chaosRun) (time.Time, error) {
	var before map[string]bool
	var held []string
	end, err := r.throughout(ctx, r.scale.window, func(ctx context.Context, r *chaosRun) (func(context.Context) error, error) {
		var err error
		if before, err = r.claimNames(ctx); err != nil {
			return nil, err
		}
		r.env.Cluster.Nodes.HoldNotReady()
		return func(ctx context.Context) error {
			launched, err := r.newClaims(ctx, before)
			if err != nil {
				return err
			}
			if held, err = r.env.Cluster.Nodes.ReleaseNotReady(ctx); err != nil {
				return fmt.Errorf("letting the nodes held not Ready turn Ready: %w", err)
			}
			// Their kubelets start over, and kwok, which takes a Node only when it first sees it
			// unless it was to leave its status alone, takes them as it starts again.
			if err := r.env.Cluster.RestartKwok(); err != nil {
				return err
			}
			r.note("%d nodes registered not Ready during the fault; %d NodeClaims launched during it, still there when it ended", len(held), launched)
			return nil
		}, nil
	})
	return end, err
}

// stopTheCSRSigner runs kube-controller-manager without its CSR signer while the workload scales
// up and halfway back down: new nodes' certificate requests are approved but not signed, so their
// kubelets wait, unregistered, until the signer is back and they join.
func stopTheCSRSigner(ctx context.Context, r *chaosRun) (time.Time, error) {
	return r.throughout(ctx, r.scale.signerDown, func(_ context.Context, r *chaosRun) (func(context.Context) error, error) {
		restore, err := r.env.Cluster.StopCSRSigning()
		if err != nil {
			return nil, err
		}
		return func(context.Context) error { return restore() }, nil
	})
}

// throttleTheController has kube-apiserver answer the controller's requests 429 whenever it has
// more than its tiny share in flight (API Priority and Fairness), with both replicas running,
// while the workload scales up and halfway back down.
func throttleTheController(ctx context.Context, r *chaosRun) (time.Time, error) {
	before, err := r.env.Cluster.ControllerAnswers(429)
	if err != nil {
		return time.Time{}, err
	}
	end, err := r.throughout(ctx, r.scale.window, func(ctx context.Context, r *chaosRun) (func(context.Context) error, error) {
		return r.env.Cluster.ThrottleController(ctx)
	})
	if err != nil {
		return end, err
	}
	after, err := r.env.Cluster.ControllerAnswers(429)
	if err != nil {
		return end, err
	}
	r.note("kube-apiserver answered %d of the controller's requests 429", after-before)
	return end, nil
}
