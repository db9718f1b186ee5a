package instance

import (
	"context"
	"fmt"

	"github.com/linode/linodego"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// Reasons of the instance-mode conditions.
const (
	// ReasonImageNotFound: the image the class names does not exist or is not visible to the token.
	ReasonImageNotFound = "ImageNotFound"
	// ReasonImageRequired: instance mode needs an image to install.
	ReasonImageRequired = "ImageRequired"
	// ReasonUnsupported: this build cannot resolve the field in instance mode.
	ReasonUnsupported = "Unsupported"
)

// ImageAPI reads the images a class names.
type ImageAPI interface {
	GetImage(ctx context.Context, imageID string) (*linodego.Image, error)
}

// ImageResolver resolves spec.image into status.image and the ImageReady condition.
type ImageResolver struct {
	api ImageAPI
}

// NewImageResolver returns the resolver.
func NewImageResolver(api ImageAPI) *ImageResolver {
	return &ImageResolver{api: api}
}

// Reconcile resolves the class's image.
func (i *ImageResolver) Reconcile(ctx context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	switch {
	case nodeClass.Spec.Image != nil:
	case nodeClass.Spec.ImageSelector != nil:
		nodeClass.Status.Image = nil
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonUnsupported, "imageSelector is not resolved by this build: name the image with image")
		return reconcile.Result{}, nil
	default:
		nodeClass.Status.Image = nil
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageRequired, "instance mode installs the image the class names: set image, e.g. linode/ubuntu24.04")
		return reconcile.Result{}, nil
	}
	found, err := i.api.GetImage(ctx, *nodeClass.Spec.Image)
	if err != nil {
		if linode.IsNotFound(err) {
			nodeClass.Status.Image = nil
			nodeClass.StatusConditions().SetFalse(v1.ConditionTypeImageReady, ReasonImageNotFound,
				fmt.Sprintf("image %q does not exist or is not visible to the API token", *nodeClass.Spec.Image))
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading image %q: %w", *nodeClass.Spec.Image, err)
	}
	nodeClass.Status.Image = &v1.ResolvedImage{ID: found.ID, Label: found.Label}
	nodeClass.StatusConditions().SetTrue(v1.ConditionTypeImageReady)
	return reconcile.Result{}, nil
}

// NetworkingResolver reports the VPC subnet and placement group, which this build does not
// resolve yet: a class that asks for them is refused rather than launched without them.
type NetworkingResolver struct{}

// Reconcile sets SubnetReady and PlacementGroupReady.
func (NetworkingResolver) Reconcile(_ context.Context, nodeClass *v1.LinodeNodeClass) (reconcile.Result, error) {
	nodeClass.Status.Subnet, nodeClass.Status.PlacementGroup = nil, nil
	if nodeClass.Spec.VPC != nil {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeSubnetReady, ReasonUnsupported, "vpc is not resolved by this build: remove it")
	} else {
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypeSubnetReady)
	}
	if nodeClass.Spec.PlacementGroup != nil {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypePlacementGroupReady, ReasonUnsupported, "placementGroup is not resolved by this build: remove it")
	} else {
		nodeClass.StatusConditions().SetTrue(v1.ConditionTypePlacementGroupReady)
	}
	return reconcile.Result{}, nil
}
