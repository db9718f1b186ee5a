package operator

import (
	"runtime"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"

	"github.com/linode/karpenter-provider-linode/pkg/version"
)

// BuildInfo tells which release of the provider a replica runs, so that a dashboard or an alert
// can tell a fleet mid-upgrade. Karpenter core's karpenter_build_info carries core's version.
var BuildInfo = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
	Namespace: metrics.Namespace,
	Subsystem: "linode",
	Name:      "build_info",
	Help:      "Always 1, labelled with the provider's release version and the Go version the binary was built with.",
}, []opmetrics.Label{
	{Name: "version", Help: "The provider's release version (the VERSION file the build was stamped from), or dev for a build that is not a release."},
	{Name: "go_version", Help: "The Go version the binary was built with."},
}, opmetrics.Beta)

func init() {
	BuildInfo.Set(1, map[string]string{"version": version.Version(), "go_version": runtime.Version()})
}
