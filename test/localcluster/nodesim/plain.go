package nodesim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/test/emulator"
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
	kubelet.prepare = s.holdNotReady
	plan, err := s.plan(ctx, self.Type)
	if err != nil {
		return kubelet.nodeName, err
	}
	capacity, allocatable := s.model.KubeletResources(plan, kubelet.config)
	addresses, err := s.cloudAddresses(ctx, ev.InstanceID, kubelet.nodeName)
	if err != nil {
		return kubelet.nodeName, err
	}
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
			_, last = kubelet.register(ctx, nodeClient, capacity, allocatable, addresses)
			return last == nil, nil
		})
	if last == nil && ctx.Err() != nil {
		last = ctx.Err()
	}
	return kubelet.nodeName, last
}

// cloudAddresses are the addresses Linode's cloud controller manager gives the Node of a Linode
// in a VPC, from the Linode's addresses (GET /linode/instances/{id}/ips): its VPC address as
// InternalIP, its public IPv4 addresses (a 1:1 NAT address among them) as ExternalIP, and its
// name as Hostname. The Node registers with them, as if the cloud controller manager had set them
// at once, so that kwok never gives it an address of its own. A Linode outside any VPC gets none
// here: kwok gives its Node the addresses it always had.
func (s *Simulator) cloudAddresses(ctx context.Context, linodeID int, nodeName string) ([]corev1.NodeAddress, error) {
	ips, err := s.linode.GetInstanceIPAddresses(ctx, linodeID)
	if err != nil {
		return nil, fmt.Errorf("reading the Linode's addresses: %w", err)
	}
	if ips.IPv4 == nil {
		return nil, nil
	}
	var addresses []corev1.NodeAddress
	for _, vpc := range ips.IPv4.VPC {
		if vpc.Address != nil {
			addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: *vpc.Address})
			break
		}
	}
	if len(addresses) == 0 {
		return nil, nil
	}
	for _, public := range ips.IPv4.Public {
		addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: public.Address})
	}
	return append(addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: nodeName}), nil
}
