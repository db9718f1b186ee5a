// Package bootstrap renders the user data of an instance-mode node: the cloud-init configuration
// that makes a plain Linode's kubelet join the cluster through Kubernetes' TLS bootstrap, as
// `kubeadm join` would, without kubeadm.
//
// The Linode's cloud-init reads the user data from Linode's Metadata service at first boot and
// writes, in the layout of kubeadm's kubelet packages:
//
//	/etc/kubernetes/pki/ca.crt                    the cluster's CA (kubelet's client CA)
//	/etc/kubernetes/bootstrap-kubelet.conf        the cluster endpoint, its CA and a bootstrap token
//	/var/lib/kubelet/config.yaml                  the KubeletConfiguration: provider ID, taints,
//	                                              reserved resources, eviction, pods, DNS
//	/etc/systemd/system/kubelet.service.d/20-karpenter-linode.conf
//	                                              kubelet's flags: the files above, node name, labels
//
// A node with data disks mounts them first (bootcmd, before any of those files is written, so
// that a disk mounted at /var/lib/kubelet does not hide the kubelet's configuration), puts them in
// /etc/fstab (mounts) and makes containerd and kubelet require them at every boot (drop-ins).
// Linode formats ext4 and ext3 disks when it creates them: nothing is formatted here.
//
// It then restarts kubelet, which authenticates with the bootstrap token, asks for a client
// certificate with a CertificateSigningRequest, and registers its Node with that certificate once
// the cluster has approved and signed it. The provider ID, linode://<id>, is filled in at boot
// from the Metadata service: cloud-init renders the configuration as a Jinja template, where
// {{ v1.instance_id }} is the Linode's id.
//
// Linode's Metadata service serves the user data, bootstrap token included, to whatever on the
// Linode reaches 169.254.169.254 or fd00:a9fe:a9fe::1, for the Linode's whole life (the token
// stops working once the node registered and its Secret is deleted). The user data therefore
// also installs a systemd unit, required by kubelet and started before it, that drops packets to
// those addresses arriving from other network namespaces: pods' traffic, routed through the host.
// The host's own traffic (cloud-init, hostNetwork pods) is not routed and still reaches it. A
// timer applies the rules again every few seconds, so that a later flush of the node's netfilter
// rules (a firewall reloaded, iptables-restore, a CNI starting over) opens the service to pods
// for seconds, not for the node's life.
//
// A user's own userData (a cloud-config document) is kept as it is and merged with the
// provider's by cloud-init: the user data is a MIME multi-part message whose first part is the
// user's cloud-config and whose second is the provider's, which asks to be merged with
// list(append)+dict(no_replace,recurse_list). The user's keys therefore keep the user's values,
// and the provider's write_files and runcmd entries come after the user's: software the user
// installs (a container runtime, the kubelet package) is in place before kubelet is restarted.
package bootstrap

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Paths the user data writes, as kubeadm's kubelet packages lay them out.
const (
	PathCA                  = "/etc/kubernetes/pki/ca.crt"
	PathBootstrapKubeconfig = "/etc/kubernetes/bootstrap-kubelet.conf"
	PathKubeconfig          = "/etc/kubernetes/kubelet.conf"
	PathKubeletConfig       = "/var/lib/kubelet/config.yaml"
	PathKubeletDropIn       = "/etc/systemd/system/kubelet.service.d/20-karpenter-linode.conf"
	kubeletBinary           = "/usr/bin/kubelet"
	// PathMetadataGuard and PathMetadataGuardUnit keep pods from the Metadata service.
	PathMetadataGuard     = "/usr/local/sbin/karpenter-linode-metadata-guard"
	PathMetadataGuardUnit = "/etc/systemd/system/" + MetadataGuardUnit
	MetadataGuardUnit     = "karpenter-linode-metadata-guard.service"
	// PathMetadataGuardReapplyUnit and PathMetadataGuardTimer apply the guard again every
	// MetadataGuardInterval; the boot's unit stays active once it ran, so a timer cannot start it
	// again.
	PathMetadataGuardReapplyUnit = "/etc/systemd/system/" + MetadataGuardReapplyUnit
	MetadataGuardReapplyUnit     = "karpenter-linode-metadata-guard-reapply.service"
	PathMetadataGuardTimer       = "/etc/systemd/system/" + MetadataGuardTimer
	MetadataGuardTimer           = "karpenter-linode-metadata-guard-reapply.timer"
)

// MetadataGuardInterval is how often the guard is applied again, and so, with the timer's
// accuracy of a second, about the longest a flush of the node's netfilter rules leaves pods able
// to reach the Metadata service. Each run is one nft transaction (or two iptables checks) that
// replaces the rules with themselves, with no moment without them.
const MetadataGuardInterval = 5 * time.Second

// The Metadata service's addresses, as Linode documents them ("Use the Metadata service API").
const (
	MetadataIPv4 = "169.254.169.254"
	MetadataIPv6 = "fd00:a9fe:a9fe::1"
)

// MaxUserDataBytes is the most user data Linode accepts: metadata.user_data "must not exceed
// 65535 bytes" before base64 (Linode API, POST /linode/instances).
const MaxUserDataBytes = 65535

// ErrUserDataTooLarge is wrapped by Render's error when the user data is over MaxUserDataBytes.
var ErrUserDataTooLarge = errors.New("user data too large")

// InstanceIDTemplate is the Jinja expression cloud-init replaces with the Linode's id, which it
// reads from the Metadata service.
const InstanceIDTemplate = "{{ v1.instance_id }}"

// ProviderIDTemplate is kubelet's provider ID before cloud-init renders it.
const ProviderIDTemplate = "linode://" + InstanceIDTemplate

// Content types of the user data's parts.
const (
	ContentTypeCloudConfig = "text/cloud-config"
	// ContentTypeJinja is a part cloud-init renders as a Jinja template before handling the result
	// by its first line (here #cloud-config).
	ContentTypeJinja = "text/jinja2"
	jinjaHeader      = "## template: jinja"
	cloudConfigStart = "#cloud-config"
)

// Token is a bootstrap token, "<id>.<secret>". It prints as its id only, so that logging a Config
// or an error that quotes one never leaks the secret.
type Token string

// String shows the token's id, never its secret.
func (t Token) String() string {
	id, _, _ := strings.Cut(string(t), ".")
	return id + ".[redacted]"
}

// GoString keeps the secret out of %#v too.
func (t Token) GoString() string { return t.String() }

// Options are what a node needs to join.
type Options struct {
	// ClusterEndpoint is the API server's URL as the node reaches it, e.g. https://10.0.0.1:6443.
	ClusterEndpoint string
	// ClusterCA is the PEM bundle that verifies the API server's certificate.
	ClusterCA []byte
	// Token authenticates kubelet until it has its own certificate.
	Token Token
	// NodeName is the Node's name: the Linode's label.
	NodeName string
	// Labels are the NodeClaim's labels; those kubelet may not set on itself are left out (core
	// adds them at registration).
	Labels map[string]string
	// Taints are the NodePool's taints and start-up taints; karpenter.sh/unregistered:NoExecute is
	// always added.
	Taints []corev1.Taint
	// BaseKubelet is the cluster's kubelet configuration (kubeadm keeps it in the kube-system
	// ConfigMap kubelet-config); nil for DefaultKubeletConfiguration.
	BaseKubelet *kubeletv1beta1.KubeletConfiguration
	// Kubelet are the NodeClass's kubelet settings, over BaseKubelet.
	Kubelet *v1.KubeletConfiguration
	// Reserved is what Karpenter counted the kubelet as reserving on this plan (the instance
	// type's overhead); the kubelet reserves exactly that, so that a node's allocatable resources
	// are those Karpenter planned with.
	Reserved Reserved
	// MaxPods is the pod capacity Karpenter counted on this plan.
	MaxPods int32
	// UserData is the user's own cloud-config, merged before the provider's.
	UserData *string
	// Mounts are the data disks to mount, before the container runtime and kubelet start.
	Mounts []Mount
}

// Reserved are the resources the kubelet keeps from pods.
type Reserved struct {
	KubeReserved   corev1.ResourceList
	SystemReserved corev1.ResourceList
}

// DefaultKubeletConfiguration is the base of a node's kubelet configuration in a cluster that
// does not publish its own: what kubeadm writes for its nodes.
func DefaultKubeletConfiguration() *kubeletv1beta1.KubeletConfiguration {
	webhook, rotate := true, true
	return &kubeletv1beta1.KubeletConfiguration{
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: PathCA},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: &webhook},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: new(bool)},
		},
		Authorization:      kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		CgroupDriver:       "systemd",
		ClusterDomain:      "cluster.local",
		RotateCertificates: rotate,
	}
}

// Validate refuses options that would make a node that cannot join, naming the problem.
func (o Options) Validate() error {
	var errs []error
	if u, err := url.Parse(o.ClusterEndpoint); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Errorf("cluster endpoint %q is not an https URL", o.ClusterEndpoint))
	}
	if len(o.ClusterCA) == 0 {
		errs = append(errs, errors.New("the cluster CA is empty"))
	}
	if id, secret, ok := strings.Cut(string(o.Token), "."); !ok || len(id) != 6 || len(secret) != 16 {
		errs = append(errs, errors.New("the bootstrap token is not of the form <6 characters>.<16 characters>"))
	}
	// The node name and the labels are written into kubelet's unit and into a Jinja template:
	// a line break, a comma or braces in them would be read as more than a name or a label.
	if problems := validation.IsDNS1123Subdomain(o.NodeName); len(problems) > 0 {
		errs = append(errs, fmt.Errorf("the node name %q is not a DNS subdomain: %s", o.NodeName, strings.Join(problems, "; ")))
	}
	for _, key := range slices.Sorted(maps.Keys(o.Labels)) {
		problems := append(validation.IsQualifiedName(key), validation.IsValidLabelValue(o.Labels[key])...)
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("the label %s=%s is not a valid label: %s", key, o.Labels[key], strings.Join(problems, "; ")))
		}
	}
	if o.UserData != nil {
		if err := ValidateUserData(*o.UserData); err != nil {
			errs = append(errs, err)
		}
	}
	if err := o.validateMounts(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ValidateUserData accepts a cloud-config document (one starting with #cloud-config), the only
// kind cloud-init can merge with the provider's configuration.
func ValidateUserData(userData string) error {
	if !strings.HasPrefix(strings.TrimLeft(userData, " \t\r\n"), cloudConfigStart) {
		return errors.New("userData must be a cloud-config document: its first line must be #cloud-config")
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(userData), &doc); err != nil {
		return fmt.Errorf("userData is not valid YAML: %w", err)
	}
	return nil
}

// Render returns the user data, unencoded: a MIME multi-part message holding the user's
// cloud-config, if any, and the provider's.
func (o Options) Render() ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ours, err := o.cloudConfig()
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	parts := multipart.NewWriter(&body)
	if o.UserData != nil {
		if err := writePart(parts, ContentTypeCloudConfig, "user-data.yaml", []byte(*o.UserData)); err != nil {
			return nil, err
		}
	}
	if err := writePart(parts, ContentTypeJinja, "karpenter-linode.yaml", ours); err != nil {
		return nil, err
	}
	if err := parts.Close(); err != nil {
		return nil, err
	}
	header := fmt.Sprintf("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=%q\r\n\r\n", parts.Boundary())
	userData := append([]byte(header), body.Bytes()...)
	if len(userData) > MaxUserDataBytes {
		users := 0
		if o.UserData != nil {
			users = len(*o.UserData)
		}
		return nil, fmt.Errorf("%w: the user data would be %d bytes, more than the %d Linode accepts; spec.userData is %d bytes of it, the provider's part %d, of which the cluster's CA bundle, written as a file and in the bootstrap kubeconfig, takes %d: shorten spec.userData",
			ErrUserDataTooLarge, len(userData), MaxUserDataBytes, users, len(ours), len(o.ClusterCA)+base64.StdEncoding.EncodedLen(len(o.ClusterCA)))
	}
	return userData, nil
}

// Encode is the user data as Linode's API takes it, base64.
func Encode(userData []byte) string { return base64.StdEncoding.EncodeToString(userData) }

func writePart(parts *multipart.Writer, contentType, filename string, content []byte) error {
	w, err := parts.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {contentType + `; charset="utf-8"`},
		"Content-Disposition":       {fmt.Sprintf("attachment; filename=%q", filename)},
		"Content-Transfer-Encoding": {"7bit"},
	})
	if err != nil {
		return err
	}
	_, err = w.Write(content)
	return err
}

// cloudConfig is the provider's part: a Jinja template of a cloud-config document.
func (o Options) cloudConfig() ([]byte, error) {
	kubeconfig, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"cluster": {Server: o.ClusterEndpoint, CertificateAuthorityData: o.ClusterCA}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"tls-bootstrap-token-user": {Token: string(o.Token)}},
		Contexts:       map[string]*clientcmdapi.Context{"tls-bootstrap": {Cluster: "cluster", AuthInfo: "tls-bootstrap-token-user"}},
		CurrentContext: "tls-bootstrap",
	})
	if err != nil {
		return nil, fmt.Errorf("writing the bootstrap kubeconfig: %w", err)
	}
	kubelet, err := yaml.Marshal(o.kubeletConfiguration())
	if err != nil {
		return nil, fmt.Errorf("writing the kubelet configuration: %w", err)
	}
	doc := cloudConfig{
		MergeHow: []merger{{Name: "list", Settings: []string{"append"}}, {Name: "dict", Settings: []string{"no_replace", "recurse_list"}}},
		WriteFiles: []writeFile{
			{Path: PathCA, Permissions: "0644", Content: string(o.ClusterCA)},
			{Path: PathBootstrapKubeconfig, Permissions: "0600", Content: string(kubeconfig)},
			{Path: PathKubeletConfig, Permissions: "0644", Content: string(kubelet)},
			{Path: PathKubeletDropIn, Permissions: "0644", Content: o.kubeletDropIn()},
			{Path: PathMetadataGuard, Permissions: "0755", Content: metadataGuardScript},
			{Path: PathMetadataGuardUnit, Permissions: "0644", Content: metadataGuardUnit},
			{Path: PathMetadataGuardReapplyUnit, Permissions: "0644", Content: metadataGuardReapplyUnit},
			{Path: PathMetadataGuardTimer, Permissions: "0644", Content: metadataGuardTimer},
		},
		RunCmd: [][]string{
			{"systemctl", "daemon-reload"},
			{"systemctl", "enable", "--now", MetadataGuardUnit},
			{"systemctl", "enable", "--now", MetadataGuardTimer},
			{"systemctl", "enable", "kubelet"},
			{"systemctl", "restart", "kubelet"},
		},
	}
	if len(o.Mounts) > 0 {
		doc.BootCmd = o.mountCommands()
		doc.Mounts = o.fstab()
		doc.WriteFiles = append(doc.WriteFiles,
			writeFile{Path: PathContainerdMountsDropIn, Permissions: "0644", Content: o.mountsDropIn()},
			writeFile{Path: PathKubeletMountsDropIn, Permissions: "0644", Content: o.mountsDropIn()})
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return []byte(jinjaHeader + "\n" + cloudConfigStart + "\n" + string(body)), nil
}

// metadataGuardScript drops packets to the Metadata service in the prerouting hook, which sees
// only packets that arrive on an interface (pods' through their veth or tunnel), never those the
// host sends. nftables first: a drop in a table of its own is final whatever the CNI's tables
// accept. Without nft, iptables' raw table, before conntrack and the filter chains CNIs insert
// their ACCEPT rules into.
const metadataGuardScript = `#!/bin/sh
set -eu
if command -v nft >/dev/null 2>&1; then
	nft -f - <<'RULES'
table inet karpenter-linode-metadata-guard
delete table inet karpenter-linode-metadata-guard
table inet karpenter-linode-metadata-guard {
	chain prerouting {
		type filter hook prerouting priority -400; policy accept;
		ip daddr ` + MetadataIPv4 + ` drop
		ip6 daddr ` + MetadataIPv6 + ` drop
	}
}
RULES
	exit 0
fi
iptables -w -t raw -C PREROUTING -d ` + MetadataIPv4 + `/32 -j DROP 2>/dev/null ||
	iptables -w -t raw -I PREROUTING -d ` + MetadataIPv4 + `/32 -j DROP
if command -v ip6tables >/dev/null 2>&1; then
	ip6tables -w -t raw -C PREROUTING -d ` + MetadataIPv6 + `/128 -j DROP 2>/dev/null ||
		ip6tables -w -t raw -I PREROUTING -d ` + MetadataIPv6 + `/128 -j DROP
fi
`

// metadataGuardUnit runs the guard at every boot before kubelet, which does not start without it:
// a node whose pods could read its user data does not join.
const metadataGuardUnit = `[Unit]
Description=Keep pods from Linode's Metadata service, which serves this node's user data
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + PathMetadataGuard + `

[Install]
WantedBy=multi-user.target
RequiredBy=kubelet.service
`

// metadataGuardReapplyUnit is what the timer starts: the guard once more.
const metadataGuardReapplyUnit = `[Unit]
Description=Apply the Metadata service's guard again, should the node's netfilter rules have been flushed
After=` + MetadataGuardUnit + `

[Service]
Type=oneshot
ExecStart=` + PathMetadataGuard + `
`

// metadataGuardTimer starts the reapply unit every MetadataGuardInterval from boot on.
var metadataGuardTimer = fmt.Sprintf(`[Unit]
Description=Apply the Metadata service's guard again every %[1]s

[Timer]
OnActiveSec=%[1]s
OnUnitActiveSec=%[1]s
AccuracySec=1s

[Install]
WantedBy=timers.target
`, systemdSeconds(MetadataGuardInterval))

// systemdSeconds writes d as systemd's time spans take it, e.g. 5s.
func systemdSeconds(d time.Duration) string { return fmt.Sprintf("%ds", int(d/time.Second)) }

type cloudConfig struct {
	MergeHow   []merger    `json:"merge_how"`
	BootCmd    [][]string  `json:"bootcmd,omitempty"`
	Mounts     [][]string  `json:"mounts,omitempty"`
	WriteFiles []writeFile `json:"write_files"`
	RunCmd     [][]string  `json:"runcmd"`
}

type merger struct {
	Name     string   `json:"name"`
	Settings []string `json:"settings"`
}

type writeFile struct {
	Path        string `json:"path"`
	Permissions string `json:"permissions"`
	Content     string `json:"content"`
}

// kubeletConfiguration is the cluster's kubelet configuration with the node's own settings over
// it.
func (o Options) kubeletConfiguration() *kubeletv1beta1.KubeletConfiguration {
	config := DefaultKubeletConfiguration()
	if o.BaseKubelet != nil {
		config = o.BaseKubelet.DeepCopy()
	}
	config.APIVersion, config.Kind = kubeletv1beta1.SchemeGroupVersion.String(), "KubeletConfiguration"
	config.ProviderID = ProviderIDTemplate
	config.RegisterWithTaints = o.taints()
	if o.MaxPods > 0 {
		config.MaxPods = o.MaxPods
	}
	if reserved := quantities(o.Reserved.KubeReserved); len(reserved) > 0 {
		config.KubeReserved = reserved
	}
	if reserved := quantities(o.Reserved.SystemReserved); len(reserved) > 0 {
		config.SystemReserved = reserved
	}
	if o.Kubelet == nil {
		return config
	}
	kubelet := o.Kubelet
	if kubelet.PodsPerCore != nil {
		config.PodsPerCore = *kubelet.PodsPerCore
	}
	// pid is reserved but is not a schedulable resource, so it is not in the instance type's
	// overhead: it comes from the NodeClass directly.
	for name, reserved := range map[string]map[string]v1.ReservedQuantity{"kube": kubelet.KubeReserved, "system": kubelet.SystemReserved} {
		if pid, ok := reserved["pid"]; ok {
			target := &config.KubeReserved
			if name == "system" {
				target = &config.SystemReserved
			}
			if *target == nil {
				*target = map[string]string{}
			}
			(*target)["pid"] = string(pid)
		}
	}
	if len(kubelet.EvictionHard) > 0 {
		config.EvictionHard = withDefaultEviction(stringMap(kubelet.EvictionHard))
	}
	if len(kubelet.EvictionSoft) > 0 {
		config.EvictionSoft = stringMap(kubelet.EvictionSoft)
		config.EvictionSoftGracePeriod = map[string]string{}
		for signal, period := range kubelet.EvictionSoftGracePeriod {
			config.EvictionSoftGracePeriod[signal] = period.Duration.String()
		}
	}
	if kubelet.EvictionMaxPodGracePeriod != nil {
		config.EvictionMaxPodGracePeriod = *kubelet.EvictionMaxPodGracePeriod
	}
	if kubelet.ImageGCHighThresholdPercent != nil {
		config.ImageGCHighThresholdPercent = kubelet.ImageGCHighThresholdPercent
	}
	if kubelet.ImageGCLowThresholdPercent != nil {
		config.ImageGCLowThresholdPercent = kubelet.ImageGCLowThresholdPercent
	}
	if len(kubelet.ClusterDNS) > 0 {
		config.ClusterDNS = slices.Clone(kubelet.ClusterDNS)
	}
	if kubelet.CPUCFSQuota != nil {
		config.CPUCFSQuota = kubelet.CPUCFSQuota
	}
	return config
}

// withDefaultEviction keeps kubelet's default hard thresholds for the signals the NodeClass does
// not set: a kubelet given any evictionHard drops the defaults it does not repeat, and Karpenter
// counts them as reserved.
func withDefaultEviction(evictionHard map[string]string) map[string]string {
	out := map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%"}
	maps.Copy(out, evictionHard)
	return out
}

func stringMap[V ~string](m map[string]V) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func quantities(resources corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, quantity := range resources {
		if !quantity.IsZero() {
			out[string(name)] = quantity.String()
		}
	}
	return out
}

// taints are the NodeClaim's taints and start-up taints with karpenter.sh/unregistered:NoExecute,
// which Karpenter core lifts at registration: a Node that registers without it can run pods
// before core has seen it, the race that makes duplicate NodeClaims.
func (o Options) taints() []corev1.Taint {
	taints := []corev1.Taint{karpv1.UnregisteredNoExecuteTaint}
	for _, taint := range o.Taints {
		if !slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
			taint.TimeAdded = (*metav1.Time)(nil)
			taints = append(taints, taint)
		}
	}
	return taints
}

// kubeletDropIn is the kubelet unit's drop-in: it supersedes kubeadm's 10-kubeadm.conf where that
// exists, and works where only the kubelet package is installed.
func (o Options) kubeletDropIn() string {
	args := []string{"--hostname-override=" + o.NodeName}
	if labels := o.nodeLabels(); len(labels) > 0 {
		args = append(args, "--node-labels="+strings.Join(labels, ","))
	}
	return strings.Join([]string{
		"[Service]",
		fmt.Sprintf(`Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=%s --kubeconfig=%s"`, PathBootstrapKubeconfig, PathKubeconfig),
		fmt.Sprintf(`Environment="KUBELET_CONFIG_ARGS=--config=%s"`, PathKubeletConfig),
		fmt.Sprintf(`Environment="KARPENTER_KUBELET_ARGS=%s"`, strings.Join(args, " ")),
		"EnvironmentFile=-/etc/default/kubelet",
		"ExecStart=",
		"ExecStart=" + kubeletBinary + " $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KARPENTER_KUBELET_ARGS $KUBELET_EXTRA_ARGS",
		"",
	}, "\n")
}

// nodeLabels are the labels kubelet may register its Node with, sorted: kubelet refuses to start
// with a label of the kubernetes.io or k8s.io domains that is not its own, and the labels that
// mark a NodeClaim's progress are core's to set.
func (o Options) nodeLabels() []string {
	var labels []string
	for key, value := range o.Labels {
		if key == karpv1.NodeRegisteredLabelKey || key == karpv1.NodeInitializedLabelKey {
			continue
		}
		if domain := karpv1.GetLabelDomain(key); isKubernetesDomain(domain) && !kubeletapis.IsKubeletLabel(key) {
			continue
		}
		labels = append(labels, key+"="+value)
	}
	slices.Sort(labels)
	return labels
}

func isKubernetesDomain(domain string) bool {
	for _, reserved := range []string{"kubernetes.io", "k8s.io"} {
		if domain == reserved || strings.HasSuffix(domain, "."+reserved) {
			return true
		}
	}
	return false
}
