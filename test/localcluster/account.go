package localcluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// shareAccount readies a cluster whose emulator other clusters share (Options.Emulator): its
// identity in the account, and a node simulator that plays the kubelets of its own Linodes alone,
// as each Linode's kubelet joins only the cluster its configuration names.
func (c *Cluster) shareAccount(ctx context.Context) error {
	if c.opts.Mode == ModeInstance {
		// The provider's ownership tag in instance mode carries the kube-system namespace's UID.
		kubeSystem := &corev1.Namespace{}
		if err := c.Kube.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
			return fmt.Errorf("reading the kube-system namespace, whose UID identifies the cluster's Linodes: %w", err)
		}
		c.ownershipTag = nodeprovider.ClusterTag(string(kubeSystem.UID))
	}
	c.Nodes.OnlyLinodes(func(ev emulator.InstanceEvent) bool {
		return c.Owns(emulator.InstanceInfo{ID: ev.InstanceID, Tags: ev.Tags, LKEClusterID: ev.LKEClusterID})
	})
	return nil
}

// Owns tells whether the Linode is one of this cluster's: any Linode of the account, unless the
// cluster shares its emulator (Options.Emulator); then a node of its LKE cluster (LKE mode), or a
// plain Linode that carries the cluster's ownership tag (instance mode).
func (c *Cluster) Owns(in emulator.InstanceInfo) bool {
	switch {
	case c.opts.Emulator == nil:
		return true
	case c.opts.Mode == ModeLKE:
		return in.LKEClusterID == c.LKEClusterID
	default:
		return in.LKEClusterID == 0 && slices.Contains(in.Tags, c.ownershipTag)
	}
}

// Linodes are the cluster's Linodes in the emulator's account (Owns).
func (c *Cluster) Linodes() []emulator.InstanceInfo {
	return slices.DeleteFunc(c.Emulator.Instances(), func(in emulator.InstanceInfo) bool { return !c.Owns(in) })
}

// Pools are the cluster's LKE pools in the emulator's account: every pool, unless the cluster
// shares its emulator; then those of its LKE cluster (none in instance mode).
func (c *Cluster) Pools() []emulator.PoolInfo {
	switch {
	case c.opts.Emulator == nil:
		return c.Emulator.Pools(0)
	case c.LKEClusterID == 0:
		return nil
	default:
		return c.Emulator.Pools(c.LKEClusterID)
	}
}

// OwnershipTag is the tag that marks the cluster's Linodes in an account it shares (instance
// mode): its provider's ownership tag; empty otherwise.
func (c *Cluster) OwnershipTag() string { return c.ownershipTag }

// linodeURL is the controller's LINODE_URL.
func (c *Cluster) linodeURL() string {
	if c.opts.LinodeURL != "" {
		return c.opts.LinodeURL
	}
	return c.Emulator.URL()
}
