package nodesim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/certificate/csr"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// kubeletUnitDropIns is where systemd finds the kubelet unit's drop-ins; kubeadm's packages put
// 10-kubeadm.conf there.
const kubeletUnitDropIns = "/etc/systemd/system/kubelet.service.d/"

// kubeletSetup is how the Linode's kubelet starts: from its systemd unit, the flags, the files
// they name.
type kubeletSetup struct {
	// prepare changes the Node before it registers, if set.
	prepare   func(*corev1.Node)
	nodeName  string
	labels    map[string]string
	config    *kubeletv1beta1.KubeletConfiguration
	bootstrap *rest.Config
}

// kubeletOf reads how systemd starts kubelet on the booted system, as kubeadm's kubelet package
// lays it out: the unit's drop-ins (the last ExecStart wins, with $VARIABLES from Environment= and
// EnvironmentFile=), the flags --bootstrap-kubeconfig, --config, --hostname-override,
// --node-labels, --provider-id and --register-with-taints, the KubeletConfiguration file, and the
// bootstrap kubeconfig. It fails when the user data never (re)starts kubelet.
func kubeletOf(boot *bootedSystem, hostname string) (*kubeletSetup, error) {
	if !slices.ContainsFunc(boot.runcmd, startsKubelet) {
		return nil, errors.New("the user data never starts kubelet (no systemctl start, restart or enable --now kubelet in runcmd)")
	}
	args, err := kubeletCommandLine(boot.files)
	if err != nil {
		return nil, err
	}
	flags := map[string]string{}
	for _, arg := range args {
		if name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "="); ok && strings.HasPrefix(arg, "--") {
			flags[name] = value
		}
	}
	setup := &kubeletSetup{nodeName: hostname, labels: map[string]string{}, config: &kubeletv1beta1.KubeletConfiguration{}}
	if name := flags["hostname-override"]; name != "" {
		setup.nodeName = name
	}
	if file := flags["config"]; file != "" {
		content, ok := boot.files[file]
		if !ok {
			return nil, fmt.Errorf("kubelet --config=%s: no such file", file)
		}
		if err := yaml.UnmarshalStrict([]byte(content), setup.config); err != nil {
			return nil, fmt.Errorf("kubelet --config=%s: %w", file, err)
		}
	}
	if id := flags["provider-id"]; id != "" {
		setup.config.ProviderID = id
	}
	if labels := flags["node-labels"]; labels != "" {
		for _, label := range strings.Split(labels, ",") {
			key, value, _ := strings.Cut(label, "=")
			setup.labels[key] = value
		}
	}
	if taints := flags["register-with-taints"]; taints != "" {
		for _, spec := range strings.Split(taints, ",") {
			taint, err := parseTaint(spec)
			if err != nil {
				return nil, err
			}
			setup.config.RegisterWithTaints = append(setup.config.RegisterWithTaints, taint)
		}
	}
	file := flags["bootstrap-kubeconfig"]
	content, ok := boot.files[file]
	if file == "" || !ok {
		return nil, fmt.Errorf("kubelet has no bootstrap kubeconfig (--bootstrap-kubeconfig=%q)", file)
	}
	if setup.bootstrap, err = clientcmd.RESTConfigFromKubeConfig([]byte(content)); err != nil {
		return nil, fmt.Errorf("kubelet --bootstrap-kubeconfig=%s: %w", file, err)
	}
	return setup, nil
}

func startsKubelet(argv []string) bool {
	line := " " + strings.Join(argv, " ") + " "
	return strings.Contains(line, "systemctl ") && strings.Contains(line, " kubelet") &&
		(strings.Contains(line, " restart ") || strings.Contains(line, " start ") || strings.Contains(line, " --now "))
}

// kubeletCommandLine expands the ExecStart systemd would run for kubelet.
func kubeletCommandLine(files map[string]string) ([]string, error) {
	var dropIns []string
	for name := range files {
		if strings.HasPrefix(name, kubeletUnitDropIns) && strings.HasSuffix(name, ".conf") {
			dropIns = append(dropIns, name)
		}
	}
	slices.SortFunc(dropIns, func(a, b string) int { return strings.Compare(path.Base(a), path.Base(b)) })
	env := map[string]string{}
	var execStart string
	for _, name := range dropIns {
		for _, line := range strings.Split(files[name], "\n") {
			key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok {
				continue
			}
			switch key {
			case "Environment":
				name, val, _ := strings.Cut(strings.Trim(value, `"`), "=")
				env[name] = val
			case "EnvironmentFile":
				optional := strings.HasPrefix(value, "-")
				content, ok := files[strings.TrimPrefix(value, "-")]
				if !ok && !optional {
					return nil, fmt.Errorf("kubelet unit: EnvironmentFile %s does not exist", value)
				}
				for _, envLine := range strings.Split(content, "\n") {
					if name, val, ok := strings.Cut(strings.TrimSpace(envLine), "="); ok {
						env[name] = strings.Trim(val, `"`)
					}
				}
			case "ExecStart":
				execStart = value
			}
		}
	}
	if execStart == "" {
		return nil, errors.New("no kubelet unit drop-in sets ExecStart: kubelet would run without a configuration")
	}
	return strings.Fields(os.Expand(execStart, func(name string) string { return env[name] })), nil
}

func parseTaint(spec string) (corev1.Taint, error) {
	keyValue, effect, ok := strings.Cut(spec, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect", spec)
	}
	key, value, _ := strings.Cut(keyValue, "=")
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}, nil
}

// tlsBootstrap does what kubelet does with a bootstrap kubeconfig: it authenticates with the
// bootstrap token, asks for a node client certificate with a CertificateSigningRequest, waits
// until the cluster has approved and signed it, and returns a client that authenticates with it
// as system:node:<name>.
func (k *kubeletSetup) tlsBootstrap(ctx context.Context) (kubernetes.Interface, error) {
	bootstrapClient, err := kubernetes.NewForConfig(k.bootstrap)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	request, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + k.nodeName, Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		return nil, err
	}
	requestPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: request})
	name, uid, err := csr.RequestCertificateWithContext(ctx, bootstrapClient, requestPEM, "", certificatesv1.KubeAPIServerClientKubeletSignerName,
		nil, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, key)
	if err != nil {
		return nil, fmt.Errorf("requesting a client certificate with the bootstrap token: %w", err)
	}
	certPEM, err := csr.WaitForCertificate(ctx, bootstrapClient, name, uid)
	if err != nil {
		return nil, fmt.Errorf("waiting for CertificateSigningRequest %s to be approved and signed: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	nodeConfig := rest.AnonymousClientConfig(k.bootstrap)
	nodeConfig.CertData = certPEM
	nodeConfig.KeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return kubernetes.NewForConfig(nodeConfig)
}

// register creates the Node as kubelet does, with the node's own client certificate, and the
// addresses it has.
func (k *kubeletSetup) register(ctx context.Context, nodeClient kubernetes.Interface, capacity, allocatable corev1.ResourceList, addresses []corev1.NodeAddress) (*corev1.Node, error) {
	labels := map[string]string{
		corev1.LabelHostname:   k.nodeName,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	for key, value := range k.labels {
		labels[key] = value
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        k.nodeName,
			Labels:      labels,
			Annotations: map[string]string{AnnotationKwokNode: "fake"},
		},
		Spec: corev1.NodeSpec{ProviderID: k.config.ProviderID, Taints: k.config.RegisterWithTaints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Addresses:   addresses,
			NodeInfo:    corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux"},
		},
	}
	if k.prepare != nil {
		k.prepare(node)
	}
	created, err := nodeClient.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("registering node %s as system:node:%s: %w", k.nodeName, k.nodeName, err)
	}
	return created, nil
}
