package instance

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// createOptions describe the NodeClaim's Linode: the plan, the NodeClass's image and settings, the
// ownership tags, and user data that makes it join the cluster.
func (p *Provider) createOptions(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceType *cloudprovider.InstanceType) (linode.InstanceCreateOptions, error) {
	if nodeClass.Status.Image == nil {
		return linode.InstanceCreateOptions{}, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("LinodeNodeClass %s has no resolved image", nodeClass.Name))
	}
	userData, err := p.userData(ctx, nodeClass, nodeClaim, instanceType)
	if err != nil {
		return linode.InstanceCreateOptions{}, err
	}
	opts := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{
		Region:          p.region,
		Type:            instanceType.Name,
		Label:           linodeLabel(nodeClaim.Name),
		Image:           nodeClass.Status.Image.ID,
		Tags:            p.tags(nodeClass, nodeClaim),
		FirewallID:      lo.FromPtr(nodeClass.Spec.FirewallID),
		AuthorizedKeys:  slices.Clone(nodeClass.Spec.AuthorizedKeys),
		AuthorizedUsers: slices.Clone(nodeClass.Spec.AuthorizedUsers),
		BackupsEnabled:  lo.FromPtr(nodeClass.Spec.BackupsEnabled),
		PrivateIP:       lo.FromPtr(nodeClass.Spec.PrivateIP),
		Metadata:        &linodego.InstanceMetadataOptions{UserData: bootstrap.Encode(userData)},
		Kernel:          nodeClass.Spec.Kernel,
	}}
	setInterfaces(&opts, nodeClass)
	if len(opts.AuthorizedKeys) == 0 && len(opts.AuthorizedUsers) == 0 {
		// Linode deploys an image only with a way in. Rather than a root password, which would have
		// to be kept or would be lost, the Linode gets the public half of a key nobody holds.
		key, err := lockedKey()
		if err != nil {
			return linode.InstanceCreateOptions{}, err
		}
		opts.AuthorizedKeys = []string{key}
	}
	if encryption := nodeClass.Spec.DiskEncryption; encryption != nil {
		opts.DiskEncryption = linodego.InstanceDiskEncryption(*encryption)
	}
	if swap := nodeClass.Spec.SwapSizeMB; swap != nil {
		opts.SwapSize = lo.ToPtr(int(*swap))
	}
	if err := setDiskOptions(&opts.InstanceCreateOptions, nodeClass, instanceType); err != nil {
		return linode.InstanceCreateOptions{}, err
	}
	if group := nodeClass.Status.PlacementGroup; nodeClass.Spec.PlacementGroup != nil && group != nil {
		opts.PlacementGroup = &linodego.InstanceCreatePlacementGroupOptions{ID: group.ID}
	}
	SetMaintenancePolicy(&opts.InstanceCreateOptions, nodeClass)
	return opts, nil
}

// placementGroupCompliant holds the launch back while the class's placement group, which it
// requires to be compliant, is not: a flexible group that had to break its anti-affinity. Core
// retries the launch, so the NodeClaim waits, its Launched condition naming the group, until
// Linode reports the group compliant again or the launch times out.
func (p *Provider) placementGroupCompliant(ctx context.Context, nodeClass *v1.LinodeNodeClass) error {
	selector, group := nodeClass.Spec.PlacementGroup, nodeClass.Status.PlacementGroup
	if selector == nil || group == nil || !lo.FromPtr(selector.RequireCompliance) {
		return nil
	}
	current, err := p.api.GetPlacementGroup(ctx, group.ID)
	if err != nil {
		return fmt.Errorf("reading placement group %q (%d): %w", group.Label, group.ID, err)
	}
	if current.IsCompliant {
		return nil
	}
	message := fmt.Sprintf("placement group %q (%d) is not compliant with its %s policy; placementGroup.requireCompliance holds launches until Linode reports it compliant", current.Label, current.ID, current.PlacementGroupPolicy)
	return cloudprovider.NewCreateError(errors.New(message), ReasonPlacementGroupNonCompliant, message)
}

// userData renders the cloud-init configuration that joins the Linode's kubelet to the cluster
// with the NodeClaim's own bootstrap token.
func (p *Provider) userData(ctx context.Context, nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim, instanceType *cloudprovider.InstanceType) ([]byte, error) {
	token, err := p.tokens.Token(ctx, nodeClaim)
	if taken := (*bootstraptoken.IDTakenError)(nil); errors.As(err, &taken) {
		// Core deletes the NodeClaim and places its pods on a new one, whose name, and so whose
		// token id, is another.
		return nil, cloudprovider.NewInsufficientCapacityError(err)
	}
	if err != nil {
		return nil, err
	}
	baseKubelet, err := p.kubelet.Get(ctx)
	if err != nil {
		return nil, err
	}
	opts := bootstrap.Options{
		ClusterEndpoint: p.cluster.Endpoint,
		ClusterCA:       p.cluster.CA,
		Token:           token,
		NodeName:        nodeClaim.Name,
		Labels:          nodeLabels(nodeClaim),
		Taints:          append(slices.Clone(nodeClaim.Spec.Taints), nodeClaim.Spec.StartupTaints...),
		BaseKubelet:     baseKubelet,
		Kubelet:         nodeClass.Spec.Kubelet,
		UserData:        nodeClass.Spec.UserData,
		Mounts:          dataDiskMounts(&nodeClass.Spec),
	}
	if overhead := instanceType.Overhead; overhead != nil {
		opts.Reserved = bootstrap.Reserved{KubeReserved: overhead.KubeReserved, SystemReserved: overhead.SystemReserved}
	}
	if pods, ok := instanceType.Capacity[corev1.ResourcePods]; ok {
		opts.MaxPods = int32(pods.Value())
	}
	userData, err := opts.Render()
	if err != nil {
		// Only the user's userData can be wrong here, or too large with the provider's part, which
		// Linode would refuse with a 400; the NodeClass controller reports both too.
		reason := ReasonUserDataInvalid
		if errors.Is(err, bootstrap.ErrUserDataTooLarge) {
			reason = ReasonUserDataTooLarge
		}
		return nil, cloudprovider.NewCreateError(fmt.Errorf("rendering the user data of NodeClaim %s: %w", nodeClaim.Name, err), reason, err.Error())
	}
	return userData, nil
}

// tags are the ownership tags followed by the NodeClass's own.
func (p *Provider) tags(nodeClass *v1.LinodeNodeClass, nodeClaim *karpv1.NodeClaim) []string {
	tags := []string{
		p.cluster.OwnerTag(),
		nodeprovider.NodeClaimTag(nodeClaim.Name),
		nodeprovider.NodePoolTag(nodeClaim.Labels[karpv1.NodePoolLabelKey]),
	}
	for _, tag := range nodeClass.Spec.Tags {
		if !slices.Contains(tags, string(tag)) {
			tags = append(tags, string(tag))
		}
	}
	return tags
}

// nodeLabels are the NodeClaim's labels and single-valued requirements, which the kubelet
// registers its Node with (those it may not set are dropped by bootstrap).
func nodeLabels(nodeClaim *karpv1.NodeClaim) map[string]string {
	labels := map[string]string{}
	for _, requirement := range nodeClaim.Spec.Requirements {
		if requirement.Operator == corev1.NodeSelectorOpIn && len(requirement.Values) == 1 {
			labels[requirement.Key] = requirement.Values[0]
		}
	}
	maps.Copy(labels, nodeClaim.Labels)
	return labels
}

// linodeLabelRepeats are runs of separators, which Linode labels may not have.
var linodeLabelRepeats = regexp.MustCompile(`[-_.]{2,}`)

// linodeLabel is the NodeClaim's name as a Linode label: at most 64 characters, no two separators
// in a row, alphanumeric at both ends.
func linodeLabel(nodeClaimName string) string {
	label := linodeLabelRepeats.ReplaceAllStringFunc(nodeClaimName, func(run string) string { return run[:1] })
	if len(label) > 64 {
		label = label[:64]
	}
	return strings.Trim(label, "-_.")
}

// lockedKey is an SSH public key whose private half is discarded at once.
func lockedKey() (string, error) {
	public, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generating an SSH key: %w", err)
	}
	key, err := ssh.NewPublicKey(public)
	if err != nil {
		return "", fmt.Errorf("encoding an SSH key: %w", err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))) + " karpenter-no-login", nil
}
