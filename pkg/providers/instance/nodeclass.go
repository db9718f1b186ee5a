package instance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
)

// Reasons of the instance-mode conditions.
const (
	// ReasonImageNotFound: the image the class names, or one matching its selector, does not
	// exist or is not visible to the token.
	ReasonImageNotFound = "ImageNotFound"
	// ReasonImageRequired: instance mode needs an image to install.
	ReasonImageRequired = "ImageRequired"
	// ReasonImageWithoutCloudInit: the image cannot read the user data that joins the node.
	ReasonImageWithoutCloudInit = "ImageWithoutCloudInit"
	// ReasonSubnetNotFound: no subnet of the region's VPCs matches the class's vpc, or the VPC
	// chosen by id alone has no single subnet to join.
	ReasonSubnetNotFound = "SubnetNotFound"
	// ReasonPlacementGroupNotFound: the placement group does not exist in the region.
	ReasonPlacementGroupNotFound = "PlacementGroupNotFound"
	// ReasonPlacementGroupPolicyMismatch: the group by that label has another policy.
	ReasonPlacementGroupPolicyMismatch = "PlacementGroupPolicyMismatch"
	// ReasonPlacementGroupNonCompliant: the class requires compliance and Linode reports the
	// group non-compliant; launches wait until it is compliant again.
	ReasonPlacementGroupNonCompliant = "PlacementGroupNonCompliant"
	// ReasonInterfaceGenerationNotAllowed: the account's interfaces_for_new_linodes setting
	// refuses the interface generation the class asks for.
	ReasonInterfaceGenerationNotAllowed = "InterfaceGenerationNotAllowed"
	// ReasonRegionLacksCapability: the region does not offer what the class asks for.
	ReasonRegionLacksCapability = "RegionLacksCapability"
	// ReasonUnsupported: this build cannot launch with the field.
	ReasonUnsupported = "Unsupported"
	// ReasonRangeNotCIDR: a configuration profile interface's range is a prefix length, which only
	// Linode interfaces take.
	ReasonRangeNotCIDR = "RangeNotCIDR"
	// ReasonUserDataInvalid: userData is not a cloud-config document cloud-init can merge.
	ReasonUserDataInvalid = "UserDataInvalid"
	// ReasonUserDataTooLarge: userData and the provider's part are more than Linode accepts.
	ReasonUserDataTooLarge = "UserDataTooLarge"
)

// Region capabilities instance mode needs.
const (
	CapabilityMetadata       = "Metadata"
	CapabilityVPCs           = "VPCs"
	CapabilityPlacementGroup = "Placement Group"
	CapabilityDiskEncryption = "Disk Encryption"
)

// cloudInitCapability is the image capability of images whose cloud-init reads Linode's Metadata
// service, where the provider puts the user data that joins a node.
const cloudInitCapability = "cloud-init"

// ImageAPI reads the images a class names.
type ImageAPI interface {
	GetImage(ctx context.Context, imageID string) (*linodego.Image, error)
	ListImages(ctx context.Context, opts *linodego.ListOptions) ([]linodego.Image, error)
}

// ImageResolver resolves image or imageSelector into status.image and the ImageReady condition.
// A selector resolves to its newest match, so that a newer image drifts the class's nodes.
type ImageResolver struct {
	api      ImageAPI
	resolved *Resolved
}

// NewImageResolver returns the resolver, which records what it resolves in resolved.
func NewImageResolver(api ImageAPI, resolved *Resolved) *ImageResolver {
	return &ImageResolver{api: api, resolved: resolved}
}

// Reconcile resolves the class's image.
func (i *ImageResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	result, err := i.resolve(ctx, nodeClass)
	if err == nil {
		record(i.resolved, i.resolved.images, nodeClass, nodeClass.Status.Image)
	}
	return result, err
}

func (i *ImageResolver) resolve(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	var image *linodego.Image
	var err error
	switch {
	case nodeClass.Spec.Image != nil:
		image, err = i.named(ctx, nodeClass)
	case nodeClass.Spec.ImageSelector != nil:
		image, err = i.selected(ctx, nodeClass)
	default:
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageRequired, "instance mode installs the image the class names: set image (e.g. linode/ubuntu24.04) or imageSelector")
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if image == nil {
		nodeClass.Status.Image = nil
		return reconcile.Result{}, nil
	}
	if !slices.Contains(image.Capabilities, cloudInitCapability) {
		nodeClass.Status.Image = nil
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageWithoutCloudInit,
			fmt.Sprintf("image %s (%s) lacks the %s capability: its nodes could not read the user data that joins them to the cluster; use an image with cloud-init, e.g. linode/ubuntu24.04", image.ID, image.Label, cloudInitCapability))
		return reconcile.Result{}, nil
	}
	nodeClass.Status.Image = &v1.ResolvedImage{ID: image.ID, Label: image.Label}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeImageReady)
	return reconcile.Result{}, nil
}

func (i *ImageResolver) named(ctx context.Context, nodeClass *v1.LinodeNodeClass) (*linodego.Image, error) {
	image, err := i.api.GetImage(ctx, *nodeClass.Spec.Image)
	if err != nil {
		if linode.IsNotFound(err) {
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageNotFound,
				fmt.Sprintf("image %q does not exist or is not visible to the API token", *nodeClass.Spec.Image))
			return nil, nil
		}
		return nil, fmt.Errorf("reading image %q: %w", *nodeClass.Spec.Image, err)
	}
	return image, nil
}

// selected is the newest image that matches the selector and is not deprecated; among matches
// created at the same time, the one whose id sorts last.
func (i *ImageResolver) selected(ctx context.Context, nodeClass *v1.LinodeNodeClass) (*linodego.Image, error) {
	selector := nodeClass.Spec.ImageSelector
	images, err := i.api.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	matches := lo.Filter(images, func(image linodego.Image, _ int) bool {
		return !image.Deprecated &&
			(selector.Label == nil || strings.HasPrefix(image.Label, *selector.Label)) &&
			(selector.Vendor == nil || strings.EqualFold(image.Vendor, *selector.Vendor))
	})
	if len(matches) == 0 {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageNotFound,
			fmt.Sprintf("no image that is not deprecated matches imageSelector (%s)", describeSelector(selector)))
		return nil, nil
	}
	// Among the matches, images cloud-init can join come first: a selector is not broken by an
	// image without it.
	withCloudInit := lo.Filter(matches, func(image linodego.Image, _ int) bool {
		return slices.Contains(image.Capabilities, cloudInitCapability)
	})
	if len(withCloudInit) > 0 {
		matches = withCloudInit
	}
	newest := slices.MaxFunc(matches, func(a, b linodego.Image) int {
		if c := lo.FromPtr(a.Created).Compare(lo.FromPtr(b.Created)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return &newest, nil
}

func describeSelector(selector *v1.ImageSelector) string {
	var parts []string
	if selector.Label != nil {
		parts = append(parts, fmt.Sprintf("label starting with %q", *selector.Label))
	}
	if selector.Vendor != nil {
		parts = append(parts, fmt.Sprintf("vendor %q", *selector.Vendor))
	}
	return strings.Join(parts, ", ")
}

// SubnetAPI reads the region's VPCs.
type SubnetAPI interface {
	ListVPCs(ctx context.Context, opts *linodego.ListOptions) ([]linodego.VPC, error)
}

// SubnetResolver resolves the class's VPC subnet, of vpc or of the vpc interface in interfaces,
// into status.subnet and the SubnetReady condition. Only the region's VPCs count: a Linode joins a
// VPC of its region.
type SubnetResolver struct {
	api      SubnetAPI
	region   string
	resolved *Resolved
}

// NewSubnetResolver returns the resolver for the region nodes launch in, which records what it
// resolves in resolved.
func NewSubnetResolver(api SubnetAPI, region string, resolved *Resolved) *SubnetResolver {
	return &SubnetResolver{api: api, region: region, resolved: resolved}
}

// vpcSelector is the class's choice of VPC subnet and the field that holds it: vpc, or the vpc
// interface of interfaces; nil when nodes join no VPC.
func vpcSelector(spec *v1.LinodeNodeClassSpec) (selector *v1.VPCConfiguration, field string) {
	if spec.VPC != nil {
		return spec.VPC, "vpc"
	}
	for i, iface := range spec.Interfaces {
		if iface.VPC != nil {
			return &iface.VPC.VPCConfiguration, fmt.Sprintf("interfaces[%d].vpc", i)
		}
	}
	return nil, ""
}

// Reconcile resolves the class's subnet.
func (s *SubnetResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	result, err := s.resolve(ctx, nodeClass)
	if err == nil {
		record(s.resolved, s.resolved.subnet, nodeClass, nodeClass.Status.Subnet)
	}
	return result, err
}

func (s *SubnetResolver) resolve(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	vpc, field := vpcSelector(&nodeClass.Spec)
	if vpc == nil {
		nodeClass.Status.Subnet = nil
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeSubnetReady)
		return reconcile.Result{}, nil
	}
	vpcs, err := s.api.ListVPCs(ctx, nil)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("listing VPCs: %w", err)
	}
	vpcs = lo.Filter(vpcs, func(v linodego.VPC, _ int) bool { return v.Region == s.region })
	subnet, problem := s.find(vpcs, vpc, field)
	if subnet == nil {
		nodeClass.Status.Subnet = nil
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeSubnetReady, ReasonSubnetNotFound, problem)
		return reconcile.Result{}, nil
	}
	nodeClass.Status.Subnet = subnet
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeSubnetReady)
	return reconcile.Result{}, nil
}

// find is the subnet vpc selects among the region's VPCs, or why there is none.
func (s *SubnetResolver) find(vpcs []linodego.VPC, vpc *v1.VPCConfiguration, field string) (*v1.ResolvedSubnet, string) {
	for _, candidate := range vpcs {
		if (vpc.VPCID != nil && candidate.ID != *vpc.VPCID) || (vpc.VPCLabel != nil && candidate.Label != *vpc.VPCLabel) {
			continue
		}
		if vpc.VPCID != nil && vpc.SubnetLabel == nil {
			if len(candidate.Subnets) != 1 {
				labels := lo.Map(candidate.Subnets, func(subnet linodego.VPCSubnet, _ int) string { return strconv.Quote(subnet.Label) })
				return nil, fmt.Sprintf("%s: VPC %d has %d subnets (%s), and %s.vpcID alone needs exactly one: set %s.subnetLabel to choose",
					field, candidate.ID, len(candidate.Subnets), strings.Join(labels, ", "), field, field)
			}
			only := candidate.Subnets[0]
			return &v1.ResolvedSubnet{ID: only.ID, VPCID: candidate.ID, Label: only.Label}, ""
		}
		for _, subnet := range candidate.Subnets {
			if (vpc.SubnetID != nil && subnet.ID == *vpc.SubnetID) || (vpc.SubnetLabel != nil && subnet.Label == *vpc.SubnetLabel) {
				return &v1.ResolvedSubnet{ID: subnet.ID, VPCID: candidate.ID, Label: subnet.Label}, ""
			}
		}
	}
	var wanted string
	switch {
	case vpc.SubnetID != nil:
		wanted = fmt.Sprintf("subnet %d", *vpc.SubnetID)
	case vpc.VPCID != nil && vpc.SubnetLabel != nil:
		wanted = fmt.Sprintf("subnet %q of VPC %d", *vpc.SubnetLabel, *vpc.VPCID)
	case vpc.VPCID != nil:
		return nil, fmt.Sprintf("%s: VPC %d is not a VPC of region %s visible to the API token", field, *vpc.VPCID, s.region)
	default:
		wanted = fmt.Sprintf("subnet %q of VPC %q", lo.FromPtr(vpc.SubnetLabel), lo.FromPtr(vpc.VPCLabel))
	}
	return nil, fmt.Sprintf("%s: %s is not in any VPC of region %s visible to the API token", field, wanted, s.region)
}

// PlacementGroupAPI reads and creates placement groups.
type PlacementGroupAPI interface {
	GetPlacementGroup(ctx context.Context, id int) (*linodego.PlacementGroup, error)
	ListPlacementGroups(ctx context.Context, opts *linodego.ListOptions) ([]linodego.PlacementGroup, error)
	CreatePlacementGroup(ctx context.Context, opts linodego.PlacementGroupCreateOptions) (*linodego.PlacementGroup, error)
}

// PlacementGroupResolver resolves placementGroup into status.placementGroup and the
// PlacementGroupReady condition: a group named by id must exist in the region; one named by label
// is created there (anti-affinity, strict unless the class says flexible) when it does not exist.
type PlacementGroupResolver struct {
	api      PlacementGroupAPI
	region   string
	resolved *Resolved
}

// NewPlacementGroupResolver returns the resolver for the region nodes launch in, which records
// what it resolves in resolved.
func NewPlacementGroupResolver(api PlacementGroupAPI, region string, resolved *Resolved) *PlacementGroupResolver {
	return &PlacementGroupResolver{api: api, region: region, resolved: resolved}
}

// Reconcile resolves the class's placement group.
func (r *PlacementGroupResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	result, err := r.resolve(ctx, nodeClass)
	if err == nil {
		record(r.resolved, r.resolved.groups, nodeClass, nodeClass.Status.PlacementGroup)
	}
	return result, err
}

func (r *PlacementGroupResolver) resolve(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	selector := nodeClass.Spec.PlacementGroup
	if selector == nil {
		nodeClass.Status.PlacementGroup = nil
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypePlacementGroupReady)
		return reconcile.Result{}, nil
	}
	group, err := r.find(ctx, nodeClass, selector)
	if err != nil || group == nil {
		nodeClass.Status.PlacementGroup = nil
		return reconcile.Result{}, err
	}
	nodeClass.Status.PlacementGroup = &v1.ResolvedPlacementGroup{ID: group.ID, Label: group.Label, Policy: string(group.PlacementGroupPolicy)}
	if lo.FromPtr(selector.RequireCompliance) && !group.IsCompliant {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonPlacementGroupNonCompliant,
			fmt.Sprintf("placement group %q (%d, %s) is not compliant: Linode placed a member against it and has yet to move it; launches wait until it is compliant, as placementGroup.requireCompliance asks",
				group.Label, group.ID, group.PlacementGroupType))
		return reconcile.Result{}, nil
	}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypePlacementGroupReady)
	return reconcile.Result{}, nil
}

func (r *PlacementGroupResolver) find(ctx context.Context, nodeClass *v1.LinodeNodeClass, selector *v1.PlacementGroupSelector) (*linodego.PlacementGroup, error) {
	if selector.ID != nil {
		group, err := r.api.GetPlacementGroup(ctx, *selector.ID)
		switch {
		case linode.IsNotFound(err):
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonPlacementGroupNotFound,
				fmt.Sprintf("placement group %d does not exist or is not visible to the API token", *selector.ID))
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading placement group %d: %w", *selector.ID, err)
		case group.Region != r.region:
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonPlacementGroupNotFound,
				fmt.Sprintf("placement group %d is in %s; nodes launch in %s", group.ID, group.Region, r.region))
			return nil, nil
		}
		return group, nil
	}
	policy := linodego.PlacementGroupPolicy(lo.FromPtrOr(selector.Policy, "strict"))
	groups, err := r.api.ListPlacementGroups(ctx, &linodego.ListOptions{Filter: fmt.Sprintf(`{"label": %q}`, *selector.Label)})
	if err != nil {
		return nil, fmt.Errorf("listing placement groups: %w", err)
	}
	if group, found := lo.Find(groups, func(g linodego.PlacementGroup) bool { return g.Region == r.region && g.Label == *selector.Label }); found {
		if selector.Policy != nil && group.PlacementGroupPolicy != policy {
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonPlacementGroupPolicyMismatch,
				fmt.Sprintf("placement group %q (%d) has policy %s, the class asks for %s", group.Label, group.ID, group.PlacementGroupPolicy, policy))
			return nil, nil
		}
		return &group, nil
	}
	created, err := r.api.CreatePlacementGroup(ctx, linodego.PlacementGroupCreateOptions{
		Label:                *selector.Label,
		Region:               r.region,
		PlacementGroupType:   linodego.PlacementGroupTypeAntiAffinityLocal,
		PlacementGroupPolicy: policy,
	})
	if err != nil {
		if linode.IsInvalidRequest(err) {
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonPlacementGroupNotFound,
				fmt.Sprintf("creating placement group %q in %s: %s", *selector.Label, r.region, linode.Reason(err)))
			return nil, nil
		}
		return nil, fmt.Errorf("creating placement group %q: %w", *selector.Label, err)
	}
	return created, nil
}

// Validator checks instance-mode settings that resolve to no object: the region's capabilities
// for what the class asks, the fields this build cannot launch with, and the user's userData.
type Validator struct {
	region  linodego.Region
	cluster *Cluster
}

// NewValidator returns the validator for the region nodes launch in and the cluster they join,
// whose endpoint and CA are part of every node's user data.
func NewValidator(region linodego.Region, cluster *Cluster) *Validator {
	return &Validator{region: region, cluster: cluster}
}

// sampleNode is a node's user data as far as the class decides it: a node's labels, taints and
// reserved resources add a few hundred bytes at launch, where Render checks the size again.
func (v *Validator) sampleNode(spec v1.LinodeNodeClassSpec) bootstrap.Options {
	return bootstrap.Options{
		ClusterEndpoint: v.cluster.Endpoint, ClusterCA: v.cluster.CA,
		Token: bootstrap.Token("000000.0000000000000000"), NodeName: strings.Repeat("n", 63),
		Kubelet: spec.Kubelet, UserData: spec.UserData, Mounts: dataDiskMounts(&spec),
	}
}

// Validate returns the first problem with the class.
func (v *Validator) Validate(_ context.Context, nodeClass *v1.LinodeNodeClass) (reason, message string, err error) {
	spec := nodeClass.Spec
	vpc, vpcField := vpcSelector(&spec)
	for _, need := range []struct {
		wanted     bool
		field      string
		capability string
	}{
		{vpc != nil, vpcField, CapabilityVPCs},
		{spec.PlacementGroup != nil, "placementGroup", CapabilityPlacementGroup},
		{lo.FromPtr(spec.DiskEncryption) == v1.DiskEncryptionEnabled, "diskEncryption", CapabilityDiskEncryption},
	} {
		if need.wanted && !slices.Contains(v.region.Capabilities, need.capability) {
			return ReasonRegionLacksCapability, fmt.Sprintf("%s needs the region's %q capability, which %s lacks", need.field, need.capability, v.region.ID), nil
		}
	}
	if reason, message := validateDisks(&spec); reason != "" {
		return reason, message, nil
	}
	if reason, message := validateConfigInterfaceRanges(nodeClass); reason != "" {
		return reason, message, nil
	}
	if spec.UserData != nil {
		if err := bootstrap.ValidateUserData(*spec.UserData); err != nil {
			return ReasonUserDataInvalid, err.Error(), nil
		}
		if _, err := v.sampleNode(spec).Render(); errors.Is(err, bootstrap.ErrUserDataTooLarge) {
			return ReasonUserDataTooLarge, err.Error(), nil
		}
	}
	return "", "", nil
}

// AccountSettingsAPI reads the account's settings.
type AccountSettingsAPI interface {
	GetAccountSettings(ctx context.Context) (*linodego.AccountSettings, error)
}

// InterfaceGenerationValidator checks the class's interfaceGeneration against the account's
// interfaces_for_new_linodes setting, which decides the generations Linode accepts for a new
// Linode.
type InterfaceGenerationValidator struct {
	api AccountSettingsAPI
}

// NewInterfaceGenerationValidator returns the validator.
func NewInterfaceGenerationValidator(api AccountSettingsAPI) *InterfaceGenerationValidator {
	return &InterfaceGenerationValidator{api: api}
}

// Validate refuses a generation the account does not allow.
func (g *InterfaceGenerationValidator) Validate(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reason, message string, err error) {
	generation := nodeClass.Spec.InterfaceGeneration
	if generation == nil {
		return "", "", nil
	}
	settings, err := g.api.GetAccountSettings(ctx)
	if err != nil {
		return "", "", fmt.Errorf("reading the account's settings: %w", err)
	}
	only := map[linodego.InterfacesForNewLinodes]v1.InterfaceGeneration{
		linodego.LegacyConfigOnly: v1.InterfaceGenerationLegacyConfig,
		linodego.LinodeOnly:       v1.InterfaceGenerationLinode,
	}
	if allowed, ok := only[settings.InterfacesForNewLinodes]; ok && allowed != *generation {
		return ReasonInterfaceGenerationNotAllowed, fmt.Sprintf("interfaceGeneration is %s, but the account's interfaces_for_new_linodes is %s: Linode refuses new Linodes with %s interfaces; set interfaceGeneration to %s, or change the account setting",
			*generation, settings.InterfacesForNewLinodes, *generation, allowed), nil
	}
	return "", "", nil
}
