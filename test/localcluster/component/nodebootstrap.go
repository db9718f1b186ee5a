package component

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ClusterCA is the CA of a control plane whose nodes join through TLS bootstrap, as kubeadm's
// cluster CA is: kube-apiserver trusts the client certificates it signs, and
// kube-controller-manager signs the certificates of approved node CertificateSigningRequests
// with it. It stands in for envtest's own client-certificate authenticator, whose key envtest
// keeps to itself.
type ClusterCA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	// CertFile and KeyFile are the CA's files, for kube-controller-manager's
	// --cluster-signing-cert-file and --cluster-signing-key-file.
	CertFile, KeyFile string
}

var _ envtest.Authn = (*ClusterCA)(nil)

// NewClusterCA makes a new CA.
func NewClusterCA() (*ClusterCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ClusterCA{cert: cert, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// Configure writes the CA's files to workDir and has kube-apiserver trust its client certificates.
func (ca *ClusterCA) Configure(workDir string, args *envtest.Arguments) error {
	ca.CertFile, ca.KeyFile = filepath.Join(workDir, "cluster-ca.crt"), filepath.Join(workDir, "cluster-ca.key")
	keyDER, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(ca.CertFile, ca.certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(ca.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	args.Set("client-ca-file", ca.CertFile)
	return nil
}

// Start has nothing to do: Configure wrote the files.
func (ca *ClusterCA) Start() error { return nil }

// Stop has nothing to do: the files go with envtest's working directory.
func (ca *ClusterCA) Stop() error { return nil }

// AddUser returns baseCfg authenticating as the user with a client certificate the CA signs.
func (ca *ClusterCA) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user.Name, Organization: user.Groups},
		NotBefore:    ca.cert.NotBefore,
		NotAfter:     ca.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cfg.KeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return cfg, nil
}

// ConfigureNodeBootstrap sets up a control plane, before it starts, the way kubeadm sets up
// kube-apiserver for nodes that join by TLS bootstrap: bootstrap-token authentication, client
// certificates of the returned cluster CA, and the Node authorizer and NodeRestriction admission,
// which let a node write its own Node and nothing else. Run kube-controller-manager with
// KubeControllerManager's WithCSRSigning to approve and sign the nodes' certificates.
func ConfigureNodeBootstrap(env *envtest.Environment) (*ClusterCA, error) {
	ca, err := NewClusterCA()
	if err != nil {
		return nil, err
	}
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.Authn = ca
	apiServer.Configure().
		Set("enable-bootstrap-token-auth", "true").
		Set("authorization-mode", "Node,RBAC").
		Set("enable-admission-plugins", "NodeRestriction")
	return ca, nil
}

// ControllerManagerOption adds to kube-controller-manager's configuration.
type ControllerManagerOption func(controllers *[]string, args *[]string)

// WithCSRSigning runs the controllers that make TLS bootstrap work: approving node client
// certificate requests the requester may make (csrapproving), signing them with the cluster CA
// (csrsigning), cleaning up old requests, and deleting expired bootstrap tokens (tokencleaner).
func WithCSRSigning(ca *ClusterCA) ControllerManagerOption {
	return func(controllers *[]string, args *[]string) {
		*controllers = append(*controllers,
			"certificatesigningrequest-approving-controller", "certificatesigningrequest-signing-controller",
			"certificatesigningrequest-cleaner-controller", "token-cleaner-controller")
		*args = append(*args, "--cluster-signing-cert-file="+ca.CertFile, "--cluster-signing-key-file="+ca.KeyFile)
	}
}

// PublishClusterInfo writes kube-public/cluster-info as kubeadm does: a kubeconfig holding the
// API server's address and CA and nothing else, readable by anyone. Joining nodes, and the
// provider, find the cluster endpoint there.
func PublishClusterInfo(ctx context.Context, kube client.Client, server string, caPEM []byte) error {
	kubeconfig, err := clientcmd.Write(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"": {Server: server, CertificateAuthorityData: caPEM}},
	})
	if err != nil {
		return err
	}
	configMap := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: "cluster-info"},
		Data:       map[string]string{"kubeconfig": string(kubeconfig)},
	}
	if err := kube.Create(ctx, configMap); err != nil {
		return fmt.Errorf("publishing kube-public/cluster-info: %w", err)
	}
	return nil
}

func controllerList(controllers []string) string { return strings.Join(controllers, ",") }

// WithoutControllers leaves controllers out, e.g. those that would own the pods a test places by
// hand.
func WithoutControllers(names ...string) ControllerManagerOption {
	return func(controllers *[]string, _ *[]string) {
		*controllers = slices.DeleteFunc(*controllers, func(name string) bool { return slices.Contains(names, name) })
	}
}
