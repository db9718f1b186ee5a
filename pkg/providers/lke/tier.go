package lke

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/linode/linodego"
	"github.com/samber/lo"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Reasons the tier rules give for a failed ValidationSucceeded condition.
const (
	// ReasonEnterpriseTierRequired: the class sets a field only LKE Enterprise clusters accept.
	ReasonEnterpriseTierRequired = "EnterpriseTierRequired"
	// ReasonUnsupportedK8sVersion: LKE does not offer the pinned Kubernetes version.
	ReasonUnsupportedK8sVersion = "UnsupportedK8sVersion"
)

// VersionAPI lists the Kubernetes versions LKE offers.
type VersionAPI interface {
	ListLKEVersions(ctx context.Context, opts *linodego.ListOptions) ([]linodego.LKEVersion, error)
}

// TierRules check a NodeClass's LKE fields against the cluster's tier and the versions LKE
// offers, before a launch would fail on them.
type TierRules struct {
	api     VersionAPI
	cluster *Cluster
}

// NewTierRules returns the rules for the cluster.
func NewTierRules(api VersionAPI, cluster *Cluster) *TierRules {
	return &TierRules{api: api, cluster: cluster}
}

// Validate returns why LKE would refuse the class's LKE fields, or an empty reason.
func (r *TierRules) Validate(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reason, message string, err error) {
	if fields := enterpriseOnlyFields(nodeClass); len(fields) > 0 && r.cluster.Tier != TierEnterprise {
		return ReasonEnterpriseTierRequired, fmt.Sprintf("%s apply only to LKE Enterprise clusters, and LKE cluster %q is on the %s tier: remove them",
			strings.Join(fields, " and "), r.cluster.Label, r.cluster.Tier), nil
	}
	version := nodeClass.Spec.LKEK8sVersion
	if version == nil {
		return "", "", nil
	}
	offered, err := r.api.ListLKEVersions(ctx, nil)
	if err != nil {
		return "", "", fmt.Errorf("listing LKE versions: %w", err)
	}
	ids := lo.Map(offered, func(v linodego.LKEVersion, _ int) string { return v.ID })
	if !slices.Contains(ids, *version) {
		return ReasonUnsupportedK8sVersion, fmt.Sprintf("LKE does not offer Kubernetes %s; lkeK8sVersion must be one of %s", *version, strings.Join(ids, ", ")), nil
	}
	return "", "", nil
}

func enterpriseOnlyFields(nodeClass *v1.LinodeNodeClass) []string {
	var fields []string
	if nodeClass.Spec.LKEK8sVersion != nil {
		fields = append(fields, "lkeK8sVersion")
	}
	if nodeClass.Spec.UpdateStrategy != nil {
		fields = append(fields, "updateStrategy")
	}
	return fields
}
