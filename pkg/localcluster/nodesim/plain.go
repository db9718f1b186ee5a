package nodesim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/emulator"
)

// handlePlain follows a plain Linode: it boots and joins in the background (a kubelet takes its
// time), stops reporting while the Linode is down, and loses its Node when deleted.
func (s *Simulator) handlePlain(ctx context.Context, ev emulator.InstanceEvent) error {
	s.mu.Lock()
	nodeName, registered := s.nodes[ev.InstanceID]
	cancelJoin, joining := s.joins[ev.InstanceID]
	s.mu.Unlock()
	switch ev.Type {
	case emulator.InstanceRunning:
		if !registered && !joining {
			s.startJoin(ctx, ev)
		}
	case emulator.InstanceStopped:
		if registered {
			return retry(ctx, func() error { return s.kubeletDown(ctx, nodeName, ev.Time) })
		}
	case emulator.InstanceResumed:
		if registered {
			return retry(ctx, func() error { return s.kubeletBack(ctx, nodeName) })
		}
	case emulator.InstanceDeleted:
		if joining {
			cancelJoin()
		}
		s.mu.Lock()
		delete(s.nodes, ev.InstanceID)
		s.mu.Unlock()
		if registered {
			return s.removeNode(ctx, ev, nodeName)
		}
	}
	return nil
}

func (s *Simulator) startJoin(ctx context.Context, ev emulator.InstanceEvent) {
	joinCtx, cancel := context.WithTimeout(ctx, s.joinTimeout)
	s.mu.Lock()
	s.joins[ev.InstanceID] = cancel
	s.mu.Unlock()
	s.joinsDone.Add(1)
	go func() {
		defer s.joinsDone.Done()
		defer cancel()
		nodeName, err := s.join(joinCtx, ev)
		s.mu.Lock()
		delete(s.joins, ev.InstanceID)
		deleted := errors.Is(joinCtx.Err(), context.Canceled)
		if err == nil && !deleted {
			s.nodes[ev.InstanceID] = nodeName
		}
		s.mu.Unlock()
		switch {
		case deleted || ctx.Err() != nil:
		case err != nil:
			log.FromContext(ctx).Error(err, "a plain Linode could not join the cluster", "linode", ev.Label)
			s.notify(Event{NodeName: nodeName, InstanceID: ev.InstanceID, PlanType: ev.PlanType, LinodeEventTime: ev.Time, Err: err})
		default:
			s.notify(Event{Registered: true, NodeName: nodeName, InstanceID: ev.InstanceID, PlanType: ev.PlanType, LinodeEventTime: ev.Time})
		}
	}()
}

// join boots the Linode: Metadata service, cloud-init, kubelet. It returns the name of the Node,
// as far as it got.
func (s *Simulator) join(ctx context.Context, ev emulator.InstanceEvent) (string, error) {
	meta, err := s.emu.NewMetadataClient(ctx, ev.InstanceID)
	if err != nil {
		return "", fmt.Errorf("reaching the Metadata service: %w", err)
	}
	self, err := meta.GetInstance(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the instance data: %w", err)
	}
	userData, err := meta.GetUserData(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the user data: %w", err)
	}
	if userData == "" {
		return "", errors.New("the Linode has no user data: nothing tells it to join a cluster")
	}
	boot, err := runCloudInit(userData, self)
	if err != nil {
		return "", fmt.Errorf("cloud-init: %w", err)
	}
	kubelet, err := kubeletOf(boot, self.Label)
	if err != nil {
		return "", err
	}
	plan, err := s.plan(ctx, self.Type)
	if err != nil {
		return kubelet.nodeName, err
	}
	capacity, allocatable := s.model.KubeletResources(plan, kubelet.config)
	// Like kubelet, keep trying: the cluster may approve the request late, or be briefly away.
	var nodeClient kubernetes.Interface
	var last error
	_ = wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: 1 << 30},
		func(ctx context.Context) (bool, error) {
			if nodeClient == nil {
				if nodeClient, last = kubelet.tlsBootstrap(ctx); last != nil {
					return false, nil
				}
			}
			_, last = kubelet.register(ctx, nodeClient, capacity, allocatable)
			return last == nil, nil
		})
	if last == nil && ctx.Err() != nil {
		last = ctx.Err()
	}
	return kubelet.nodeName, last
}
