package nomination

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

var (
	nodeUpLabel = opmetrics.Label{Name: "node_ready", Help: "Whether the node could already take the pod: the nomination raced kube-scheduler."}

	podsNominated = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_nomination",
		Name:      "pods_total",
		Help:      "Pending pods nominated to the starting node core launched for them.",
	}, []opmetrics.Label{nodeUpLabel}, opmetrics.Beta)
)
