package operator

import (
	"context"
	"fmt"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// Instance is instance mode: plain Linodes that join a self-managed cluster. This build has no
// node provider for it (pkg/providers/instance holds its NodeClass resolvers so far), so the
// controller refuses to start in instance mode once the settings checked out.
type Instance struct{}

// Discover finds nothing to discover: LINODE_REGION says where nodes launch.
func (Instance) Discover(_ context.Context, _ linode.API, opts *options.Options) (Target, error) {
	return instanceTarget{region: opts.Region}, nil
}

type instanceTarget struct {
	region string
}

func (instanceTarget) Mode() mode.Mode { return mode.Instance }

func (t instanceTarget) Region() string { return t.region }

func (instanceTarget) String() string { return "none (instance mode)" }

func (instanceTarget) Build(context.Context, Dependencies) (*Parts, error) {
	return nil, fmt.Errorf("KARPENTER_MODE %q has no node provider in this build", mode.Instance)
}
