package instance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
)

// ClusterInfo is where kubeadm publishes the cluster's API server address and CA for joining
// nodes: a kubeconfig in this ConfigMap, readable without credentials.
var ClusterInfo = types.NamespacedName{Namespace: metav1.NamespacePublic, Name: "cluster-info"}

// endpointCheckTimeout bounds the start-up check that the cluster endpoint answers.
const endpointCheckTimeout = 10 * time.Second

// Cluster is the self-managed cluster instance-mode nodes join.
type Cluster struct {
	// Endpoint is the API server's URL as the nodes reach it.
	Endpoint string
	// CA is the PEM bundle that verifies the API server's certificate.
	CA []byte
	// UID is the kube-system namespace's UID: the cluster's identity for as long as it exists,
	// whatever it is called. The Linodes' ownership tag carries it.
	UID types.UID
	// EndpointSource and CASource say where Endpoint and CA came from, for the start-up log.
	EndpointSource, CASource string
}

// DiscoverCluster finds what nodes need to join, once, at start-up: the endpoint is
// CLUSTER_ENDPOINT or, when that is unset, the one kubeadm publishes in kube-public/cluster-info;
// the CA is cluster-info's or, without it, the one the controller itself trusts the API server
// with. reader reads uncached; restConfig is the controller's own connection. An
// *options.ConfigError means the cluster or the settings must change.
func DiscoverCluster(ctx context.Context, reader client.Reader, restConfig *rest.Config, endpointSetting string) (*Cluster, error) {
	kubeSystem := &corev1.Namespace{}
	if err := reader.Get(ctx, types.NamespacedName{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		return nil, fmt.Errorf("reading the kube-system namespace, whose UID identifies the cluster: %w", err)
	}
	cluster := &Cluster{UID: kubeSystem.UID, Endpoint: endpointSetting, EndpointSource: "CLUSTER_ENDPOINT"}
	infoServer, infoCA, err := readClusterInfo(ctx, reader)
	if err != nil {
		return nil, err
	}
	if cluster.Endpoint == "" {
		if infoServer == "" {
			return nil, &options.ConfigError{Message: fmt.Sprintf("CLUSTER_ENDPOINT is not set and the cluster publishes no %s (kubeadm does): set it to the https URL at which nodes reach the API server, e.g. https://203.0.113.10:6443 (helm: settings.clusterEndpoint)", ClusterInfo)}
		}
		cluster.Endpoint, cluster.EndpointSource = infoServer, ClusterInfo.String()
	}
	switch {
	case len(infoCA) > 0:
		cluster.CA, cluster.CASource = infoCA, ClusterInfo.String()
	default:
		if cluster.CA, err = restConfigCA(restConfig); err != nil {
			return nil, err
		}
		cluster.CASource = "the controller's own connection to the API server"
	}
	if len(cluster.CA) == 0 {
		return nil, &options.ConfigError{Message: fmt.Sprintf("no cluster CA to give nodes: the cluster publishes no %s and the controller trusts the API server without a CA bundle; publish cluster-info as kubeadm does", ClusterInfo)}
	}
	return cluster, nil
}

// readClusterInfo returns the server and CA kube-public/cluster-info holds, empty when the cluster
// has none.
func readClusterInfo(ctx context.Context, reader client.Reader) (server string, ca []byte, err error) {
	info := &corev1.ConfigMap{}
	if err := reader.Get(ctx, ClusterInfo, info); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil, nil
		}
		return "", nil, fmt.Errorf("reading %s: %w", ClusterInfo, err)
	}
	config, err := clientcmd.Load([]byte(info.Data["kubeconfig"]))
	if err != nil {
		return "", nil, &options.ConfigError{Message: fmt.Sprintf("%s holds no valid kubeconfig: %v; set CLUSTER_ENDPOINT, or fix the ConfigMap", ClusterInfo, err)}
	}
	for _, cluster := range config.Clusters {
		return cluster.Server, cluster.CertificateAuthorityData, nil
	}
	return "", nil, nil
}

func restConfigCA(restConfig *rest.Config) ([]byte, error) {
	if restConfig == nil {
		return nil, nil
	}
	if len(restConfig.CAData) > 0 {
		return restConfig.CAData, nil
	}
	if restConfig.CAFile == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(restConfig.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the controller's cluster CA: %w", err)
	}
	return ca, nil
}

// CheckReachable connects to the endpoint as a joining kubelet would, trusting only the CA, and
// returns an *options.ConfigError naming CLUSTER_ENDPOINT when that fails: nodes given this
// endpoint and CA could not join. Any answer over a verified connection will do; the API server
// may well refuse an anonymous request.
func (c *Cluster) CheckReachable(ctx context.Context) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CA) {
		return &options.ConfigError{Message: fmt.Sprintf("the cluster CA from %s holds no PEM certificate", c.CASource)}
	}
	httpClient := &http.Client{
		Timeout:   endpointCheckTimeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	defer httpClient.CloseIdleConnections()
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Endpoint, "/")+"/version", nil)
	if err != nil {
		return &options.ConfigError{Message: fmt.Sprintf("cluster endpoint %q (from %s) is not a URL: %v", c.Endpoint, c.EndpointSource, err)}
	}
	response, err := httpClient.Do(request)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		what := "does not answer"
		var unknownAuthority x509.UnknownAuthorityError
		var hostname x509.HostnameError
		if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) {
			what = fmt.Sprintf("does not prove itself with the cluster CA (from %s)", c.CASource)
		}
		return &options.ConfigError{Message: fmt.Sprintf("CLUSTER_ENDPOINT: the cluster endpoint %q (from %s) %s: %v; nodes given it could not join. Set CLUSTER_ENDPOINT to the https URL at which nodes reach the API server (helm: settings.clusterEndpoint)",
			c.Endpoint, c.EndpointSource, what, err)}
	}
	return response.Body.Close()
}

// OwnerTag is the tag that marks a Linode as this cluster's.
func (c *Cluster) OwnerTag() string { return nodeprovider.ClusterTag(string(c.UID)) }

// String describes the cluster for the start-up log.
func (c *Cluster) String() string {
	return fmt.Sprintf("endpoint %s (from %s), CA from %s, kube-system UID %s", c.Endpoint, c.EndpointSource, c.CASource, c.UID)
}
