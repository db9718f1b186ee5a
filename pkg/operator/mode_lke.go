package operator

import (
	"context"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/option"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/adoption"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/maintenance"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// LKE is LKE mode: each NodeClaim becomes a single-node pool of the LKE cluster CLUSTER_NAME
// labels.
type LKE struct {
	// ProviderOptions tune the node provider; tests shorten its waits for the emulator.
	ProviderOptions []option.Function[lke.Options]
}

// Discover finds the LKE cluster.
func (m LKE) Discover(ctx context.Context, api linode.API, opts *options.Options) (Target, error) {
	cluster, err := lke.Discover(ctx, api, opts.ClusterName, opts.Region)
	if err != nil {
		return nil, err
	}
	return &LKETarget{Cluster: cluster, clusterName: opts.ClusterName, providerOptions: m.ProviderOptions}, nil
}

// Webhooks are the Node webhook: LKE's kubelets register without Karpenter's registration taint,
// and the webhook adds it.
func (m LKE) Webhooks(kubeClient client.Reader) []Webhook {
	return []Webhook{node.NewWebhook(kubeClient)}
}

// LKETarget is the LKE cluster the start-up check found.
type LKETarget struct {
	Cluster         *lke.Cluster
	clusterName     string
	providerOptions []option.Function[lke.Options]
}

// Mode is LKE.
func (t *LKETarget) Mode() mode.Mode { return mode.LKE }

// Region is the cluster's region.
func (t *LKETarget) Region() string { return t.Cluster.Region }

func (t *LKETarget) String() string { return t.Cluster.String() }

// Build makes the pool provider, the NodeClass rules of LKE (the tier's fields, and no
// maintenance policy), the Kubernetes version the classes' nodes should run, and the adoption of
// recycled pools' nodes. The cluster's version is read again as often as Linode's maintenance
// list: an upgrade, LKE's at a version's end of life included, is maintenance of the cluster,
// announced long before, and core re-checks a NodeClaim's drift only every 5 minutes anyway.
func (t *LKETarget) Build(ctx context.Context, deps Dependencies) (*Parts, error) {
	nodes := lke.NewProvider(deps.API, t.Cluster, t.clusterName, deps.Unavailable, append([]option.Function[lke.Options]{
		lke.WithRecorder(deps.Recorder), lke.WithClusterVersionTTL(maintenanceListInterval(ctx)),
	}, t.providerOptions...)...)
	return &Parts{
		Nodes:        nodes,
		OwnershipTag: nodes.OwnershipTag(),
		Resolvers:    []nodeclass.Resolver{lke.MaintenancePolicyRefusal{}, lke.NewKubernetesVersionResolver(nodes)},
		Validators:   []nodeclass.Validator{lke.NewTierRules(deps.API, t.Cluster)},
		// A recycle gives a pool a new node, under a new name and provider ID, that no NodeClaim
		// records; pools of earlier versions carry the cluster's name, which a rename would orphan.
		Controllers: []controller.Controller{adoption.NewController(deps.KubeClient, deps.APIReader, deps.Recorder, nodes), lke.NewOwnershipMigration(nodes)},
	}, nil
}

// maintenanceListInterval is how often the maintenance controller reads Linode's maintenance list.
func maintenanceListInterval(ctx context.Context) time.Duration {
	o := options.FromContext(ctx)
	return maintenance.Options{Interval: o.MaintenancePollInterval, LeadTime: o.MaintenanceLeadTime}.MaintenanceListInterval()
}
