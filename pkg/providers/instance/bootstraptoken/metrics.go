package bootstraptoken

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

const decisionLabel = "decision"

// Decisions counts the node client certificate requests of the tokens' group the Approver decided.
var Decisions = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
	Namespace: metrics.Namespace,
	Subsystem: "linode_node_certificates",
	Name:      "decisions_total",
	Help:      "Kubelet client certificate requests made with the provider's bootstrap tokens, by decision: approved (the node of the token's NodeClaim) or denied (any other name, an existing Node, another group or usage).",
}, []opmetrics.Label{{Name: decisionLabel, Help: "approved or denied."}}, opmetrics.Beta)
