package instance

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Resolved is what this process's NodeClass controller resolved each class's spec to: the image
// nodes boot, the VPC subnet they join and the placement group they are placed in. Launches and
// drift checks take these from here, never from the class's status. The status is written with the
// controller's ServiceAccount, as any status is, and whoever holds that token could otherwise
// point every new node at another image or subnet of the account; what the status says is a
// report of what is here. Each resolver records its part for the generation of the spec it
// resolved, so a spec changed since is not launched with an older resolution either.
type Resolved struct {
	mu     sync.Mutex
	images map[types.UID]resolution[v1.ResolvedImage]
	subnet map[types.UID]resolution[v1.ResolvedSubnet]
	groups map[types.UID]resolution[v1.ResolvedPlacementGroup]
}

// resolution is one part of a class as resolved from one generation of its spec; nil when it
// resolved to nothing.
type resolution[T any] struct {
	generation int64
	value      *T
}

// NewResolved returns an empty record: nothing launches until the NodeClass controller has
// resolved the class.
func NewResolved() *Resolved {
	return &Resolved{
		images: map[types.UID]resolution[v1.ResolvedImage]{},
		subnet: map[types.UID]resolution[v1.ResolvedSubnet]{},
		groups: map[types.UID]resolution[v1.ResolvedPlacementGroup]{},
	}
}

func record[T any](r *Resolved, parts map[types.UID]resolution[T], nodeClass *v1.LinodeNodeClass, value *T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var copied *T
	if value != nil {
		copied = new(T)
		*copied = *value
	}
	parts[nodeClass.UID] = resolution[T]{generation: nodeClass.Generation, value: copied}
}

func lookup[T any](parts map[types.UID]resolution[T], nodeClass *v1.LinodeNodeClass) (*T, bool) {
	part, ok := parts[nodeClass.UID]
	if !ok || part.generation != nodeClass.Generation {
		return nil, false
	}
	if part.value == nil {
		return nil, true
	}
	value := *part.value
	return &value, true
}

// Trusted is a copy of the class whose image, subnet and placement group are those this process
// resolved its spec's current generation to, in place of what its status says. Until the NodeClass
// controller has resolved that generation, nothing launches with the class; the error is a
// CreateError, which core retries, not NodeClassNotReady, on which core deletes the NodeClaim: a
// restarted controller meets the classes its predecessor resolved before its own NodeClass
// controller has, and the NodeClaim it would lose may own a Linode already created.
func (r *Resolved) Trusted(nodeClass *v1.LinodeNodeClass) (*v1.LinodeNodeClass, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	image, imageOK := lookup(r.images, nodeClass)
	subnet, subnetOK := lookup(r.subnet, nodeClass)
	group, groupOK := lookup(r.groups, nodeClass)
	if !imageOK || !subnetOK || !groupOK {
		return nil, cloudprovider.NewCreateError(
			fmt.Errorf("the controller has not resolved generation %d of LinodeNodeClass %s yet", nodeClass.Generation, nodeClass.Name),
			"NodeClassNotResolved", "Waiting for the controller to resolve the LinodeNodeClass")
	}
	trusted := nodeClass.DeepCopy()
	trusted.Status.Image, trusted.Status.Subnet, trusted.Status.PlacementGroup = image, subnet, group
	return trusted, nil
}
