package bootstrap_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
)

const (
	testCA    = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwprdWJlcm5ldGVz\n-----END CERTIFICATE-----\n"
	testToken = bootstrap.Token("abcdef.0123456789abcdef")
)

func options() bootstrap.Options {
	return bootstrap.Options{
		ClusterEndpoint: "https://10.0.0.1:6443",
		ClusterCA:       []byte(testCA),
		Token:           testToken,
		NodeName:        "default-x7k2p",
		Labels: map[string]string{
			karpv1.NodePoolLabelKey:               "default",
			karpv1.CapacityTypeLabelKey:           "on-demand",
			corev1.LabelInstanceTypeStable:        "g6-standard-4",
			corev1.LabelTopologyZone:              "us-ord",
			"team":                                "payments",
			"node-role.kubernetes.io/worker":      "",
			"karpenter.k8s.linode/instance-class": "standard",
			karpv1.NodeRegisteredLabelKey:         "true",
			"kubernetes.io/made-up":               "x",
		},
		Taints: []corev1.Taint{
			{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule},
			{Key: "cni-not-ready", Effect: corev1.TaintEffectNoExecute},
		},
		Reserved: bootstrap.Reserved{
			KubeReserved:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("80m"), corev1.ResourceMemory: resource.MustParse("1843Mi")},
			SystemReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
		},
		MaxPods: 110,
	}
}

// rendered is the user data taken apart as cloud-init would: its parts, and the files the
// provider's part writes.
type rendered struct {
	parts []part
	files map[string]string
	runs  [][]string
	doc   map[string]any
}

type part struct {
	contentType string
	body        string
}

func render(t *testing.T, opts bootstrap.Options) rendered {
	t.Helper()
	raw, err := opts.Render()
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a MIME message: %v", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	var out rendered
	reader := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := reader.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p)
		contentType, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out.parts = append(out.parts, part{contentType: contentType, body: string(body)})
	}
	ours := out.parts[len(out.parts)-1]
	if ours.contentType != bootstrap.ContentTypeJinja || !strings.HasPrefix(ours.body, "## template: jinja\n#cloud-config\n") {
		t.Fatalf("the provider's part is %s starting %q", ours.contentType, ours.body[:40])
	}
	var doc struct {
		WriteFiles []struct{ Path, Content, Permissions string } `json:"write_files"`
		RunCmd     [][]string                                    `json:"runcmd"`
	}
	if err := yaml.Unmarshal([]byte(ours.body), &doc); err != nil {
		t.Fatal(err)
	}
	_ = yaml.Unmarshal([]byte(ours.body), &out.doc)
	out.files, out.runs = map[string]string{}, doc.RunCmd
	for _, f := range doc.WriteFiles {
		out.files[f.Path] = f.Content
	}
	return out
}

func (r rendered) kubelet(t *testing.T) *kubeletv1beta1.KubeletConfiguration {
	t.Helper()
	config := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(r.files[bootstrap.PathKubeletConfig]), config); err != nil {
		t.Fatal(err)
	}
	return config
}

func TestUserDataJoinsWithTLSBootstrap(t *testing.T) {
	out := render(t, options())
	if len(out.parts) != 1 {
		t.Fatalf("%d parts without user userData, want 1", len(out.parts))
	}
	if out.files[bootstrap.PathCA] != testCA {
		t.Errorf("CA file %q", out.files[bootstrap.PathCA])
	}
	kubeconfig, err := clientcmd.Load([]byte(out.files[bootstrap.PathBootstrapKubeconfig]))
	if err != nil {
		t.Fatal(err)
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*kubeconfig, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if restConfig.Host != "https://10.0.0.1:6443" || string(restConfig.CAData) != testCA || restConfig.BearerToken != string(testToken) {
		t.Errorf("bootstrap kubeconfig: host %s, CA %q, token %q", restConfig.Host, restConfig.CAData, restConfig.BearerToken)
	}
	kubelet := out.kubelet(t)
	if kubelet.ProviderID != "linode://{{ v1.instance_id }}" {
		t.Errorf("provider ID %q, want the Linode's id from the Metadata service", kubelet.ProviderID)
	}
	wantTaints := []corev1.Taint{karpv1.UnregisteredNoExecuteTaint, options().Taints[0], options().Taints[1]}
	if len(kubelet.RegisterWithTaints) != 3 || !lo.EveryBy(wantTaints, func(want corev1.Taint) bool {
		return lo.ContainsBy(kubelet.RegisterWithTaints, func(got corev1.Taint) bool { return got.MatchTaint(&want) })
	}) {
		t.Errorf("taints %v, want %v", kubelet.RegisterWithTaints, wantTaints)
	}
	if kubelet.MaxPods != 110 || kubelet.KubeReserved["cpu"] != "80m" || kubelet.KubeReserved["memory"] != "1843Mi" || kubelet.SystemReserved["memory"] != "100Mi" {
		t.Errorf("reserved %v / %v, max pods %d: not what Karpenter counted", kubelet.KubeReserved, kubelet.SystemReserved, kubelet.MaxPods)
	}
	if kubelet.Authentication.X509.ClientCAFile != bootstrap.PathCA || kubelet.CgroupDriver != "systemd" || !kubelet.RotateCertificates {
		t.Errorf("base configuration: %+v", kubelet)
	}
	dropIn := out.files[bootstrap.PathKubeletDropIn]
	for _, want := range []string{
		"--bootstrap-kubeconfig=" + bootstrap.PathBootstrapKubeconfig, "--kubeconfig=" + bootstrap.PathKubeconfig,
		"--config=" + bootstrap.PathKubeletConfig, "--hostname-override=default-x7k2p",
		// node-role.kubernetes.io, kubernetes.io/made-up and karpenter.sh/registered are left to core:
		// kubelet refuses the first two, and the last marks a registration not yet done.
		"--node-labels=karpenter.k8s.linode/instance-class=standard,karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default," +
			"node.kubernetes.io/instance-type=g6-standard-4,team=payments,topology.kubernetes.io/zone=us-ord\"",
	} {
		if !strings.Contains(dropIn, want) {
			t.Errorf("kubelet drop-in lacks %s:\n%s", want, dropIn)
		}
	}
	if want := [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "enable", "--now", bootstrap.MetadataGuardUnit}, {"systemctl", "enable", "--now", bootstrap.MetadataGuardTimer}, {"systemctl", "enable", "kubelet"}, {"systemctl", "restart", "kubelet"}}; fmt.Sprint(out.runs) != fmt.Sprint(want) {
		t.Errorf("runcmd %v, want %v", out.runs, want)
	}
	if strings.Count(fmt.Sprint(out.files), "{{") != 1 {
		t.Errorf("the template holds Jinja expressions besides the instance id")
	}
}

func TestUserDataCarriesTheNodeClassKubeletSettings(t *testing.T) {
	opts := options()
	opts.BaseKubelet = &kubeletv1beta1.KubeletConfiguration{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "example.internal", CgroupDriver: "cgroupfs"}
	opts.Kubelet = &v1.KubeletConfiguration{
		PodsPerCore:                 lo.ToPtr[int32](10),
		KubeReserved:                map[string]v1.ReservedQuantity{"pid": "1000"},
		EvictionHard:                map[string]v1.EvictionThreshold{"memory.available": "500Mi"},
		EvictionSoft:                map[string]v1.EvictionThreshold{"nodefs.available": "15%"},
		EvictionSoftGracePeriod:     map[string]metav1.Duration{"nodefs.available": {Duration: 2 * time.Minute}},
		EvictionMaxPodGracePeriod:   lo.ToPtr[int32](60),
		ImageGCHighThresholdPercent: lo.ToPtr[int32](80),
		ImageGCLowThresholdPercent:  lo.ToPtr[int32](60),
		ClusterDNS:                  []string{"169.254.20.10"},
		CPUCFSQuota:                 lo.ToPtr(false),
	}
	kubelet := render(t, opts).kubelet(t)
	for _, check := range []struct {
		what      string
		got, want any
	}{
		{"clusterDomain from the cluster", kubelet.ClusterDomain, "example.internal"},
		{"cgroupDriver from the cluster", kubelet.CgroupDriver, "cgroupfs"},
		{"clusterDNS from the NodeClass", fmt.Sprint(kubelet.ClusterDNS), "[169.254.20.10]"},
		{"podsPerCore", kubelet.PodsPerCore, int32(10)},
		{"kube-reserved pid", kubelet.KubeReserved["pid"], "1000"},
		{"kube-reserved memory from the overhead", kubelet.KubeReserved["memory"], "1843Mi"},
		{"evictionHard memory", kubelet.EvictionHard["memory.available"], "500Mi"},
		{"evictionHard keeps kubelet's nodefs default", kubelet.EvictionHard["nodefs.available"], "10%"},
		{"evictionSoft", kubelet.EvictionSoft["nodefs.available"], "15%"},
		{"evictionSoftGracePeriod", kubelet.EvictionSoftGracePeriod["nodefs.available"], "2m0s"},
		{"evictionMaxPodGracePeriod", kubelet.EvictionMaxPodGracePeriod, int32(60)},
		{"imageGCHighThresholdPercent", *kubelet.ImageGCHighThresholdPercent, int32(80)},
		{"imageGCLowThresholdPercent", *kubelet.ImageGCLowThresholdPercent, int32(60)},
		{"cpuCFSQuota", lo.FromPtrOr(kubelet.CPUCFSQuota, true), false},
	} {
		if check.got != check.want {
			t.Errorf("%s: %v, want %v", check.what, check.got, check.want)
		}
	}
}

func TestUsersCloudConfigComesFirstAndIsMergedIntoByTheProvidersPart(t *testing.T) {
	opts := options()
	userData := "#cloud-config\npackages: [containerd, kubelet]\nruncmd:\n  - [sh, -c, 'echo installed']\n"
	opts.UserData = &userData
	out := render(t, opts)
	if len(out.parts) != 2 || out.parts[0].contentType != bootstrap.ContentTypeCloudConfig || out.parts[0].body != userData {
		t.Fatalf("user's part: %+v", out.parts[0])
	}
	mergeHow := fmt.Sprint(out.doc["merge_how"])
	if mergeHow != "[map[name:list settings:[append]] map[name:dict settings:[no_replace recurse_list]]]" {
		t.Errorf("the provider's part merges with %s", mergeHow)
	}
}

func TestOptionsThatCannotJoinAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*bootstrap.Options)
		want   string
	}{
		{"http endpoint", func(o *bootstrap.Options) { o.ClusterEndpoint = "http://10.0.0.1:6443" }, "not an https URL"},
		{"no CA", func(o *bootstrap.Options) { o.ClusterCA = nil }, "CA is empty"},
		{"malformed token", func(o *bootstrap.Options) { o.Token = "abcdef" }, "bootstrap token"},
		{"no node name", func(o *bootstrap.Options) { o.NodeName = "" }, "node name"},
		{"shell script userData", func(o *bootstrap.Options) { o.UserData = lo.ToPtr("#!/bin/sh\necho hi\n") }, "must be a cloud-config document"},
		{"userData that is not YAML", func(o *bootstrap.Options) { o.UserData = lo.ToPtr("#cloud-config\nruncmd: [\n") }, "not valid YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := options()
			tc.change(&opts)
			_, err := opts.Render()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestTokenNeverPrintsItsSecret(t *testing.T) {
	opts := options()
	for _, printed := range []string{fmt.Sprint(testToken), fmt.Sprintf("%v %+v %#v", opts, opts, opts), fmt.Sprintf("token %s", testToken)} {
		if strings.Contains(printed, "0123456789abcdef") {
			t.Errorf("the token's secret is printed: %s", printed)
		}
	}
}

// TestPodsAreKeptFromTheMetadataService runs the guard the user data installs, with nft, and
// without it with iptables, standing in for the real tools, and checks what it asks them for: a
// drop of both Metadata addresses where only packets that arrive on an interface (pods') pass,
// in place before kubelet starts and at every boot.
func TestPodsAreKeptFromTheMetadataService(t *testing.T) {
	out := render(t, options())
	unit := out.files[bootstrap.PathMetadataGuardUnit]
	for _, want := range []string{"Before=kubelet.service", "RequiredBy=kubelet.service", "WantedBy=multi-user.target", "ExecStart=" + bootstrap.PathMetadataGuard} {
		if !strings.Contains(unit, want) {
			t.Errorf("the guard's unit lacks %s:\n%s", want, unit)
		}
	}
	script := filepath.Join(t.TempDir(), "guard")
	if err := os.WriteFile(script, []byte(out.files[bootstrap.PathMetadataGuard]), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tools ...string) string {
		t.Helper()
		bin, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
		for _, tool := range tools {
			stub := "#!/bin/sh\n{ echo \"" + tool + " $*\"; [ \"$*\" = \"-f -\" ] && while IFS= read -r line; do echo \"$line\"; done; } >> " + calls + "\n" +
				// iptables -C finds no rule yet.
				"case \"$*\" in *\" -C \"*) exit 1;; esac\n"
			if err := os.WriteFile(filepath.Join(bin, tool), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("/bin/sh", script)
		cmd.Env = []string{"PATH=" + bin}
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the guard failed: %v\n%s", err, output)
		}
		got, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	t.Run("nftables", func(t *testing.T) {
		calls := run(t, "nft", "iptables", "ip6tables")
		for _, want := range []string{"type filter hook prerouting priority -400", "ip daddr 169.254.169.254 drop", "ip6 daddr fd00:a9fe:a9fe::1 drop", "delete table inet karpenter-linode-metadata-guard"} {
			if !strings.Contains(calls, want) {
				t.Errorf("the ruleset lacks %q:\n%s", want, calls)
			}
		}
		if strings.Contains(calls, "iptables") {
			t.Errorf("iptables used although nft is there:\n%s", calls)
		}
	})
	t.Run("iptables", func(t *testing.T) {
		calls := run(t, "iptables", "ip6tables")
		for _, want := range []string{"iptables -w -t raw -I PREROUTING -d 169.254.169.254/32 -j DROP", "ip6tables -w -t raw -I PREROUTING -d fd00:a9fe:a9fe::1/128 -j DROP"} {
			if !strings.Contains(calls, want) {
				t.Errorf("no %q:\n%s", want, calls)
			}
		}
	})
	t.Run("neither", func(t *testing.T) {
		cmd := exec.Command("/bin/sh", script)
		cmd.Env = []string{"PATH=" + t.TempDir()}
		if err := cmd.Run(); err == nil {
			t.Errorf("the guard succeeded with no firewall tool: kubelet would start with pods able to read the user data")
		}
	})
}

// TestAFlushOfNetfilterRulesOpensTheMetadataServiceSecondsAtMost: the node's netfilter rules
// flushed after boot (a firewall reloaded, iptables-restore, a CNI starting over) take the guard
// with them; a timer applies it again within seconds. The test plays netfilter with stand-ins of
// nft and iptables that keep their rules in a file: the guard at boot, a flush, then what the
// timer starts, which must bring the drop back; and the timer must fire often enough.
func TestAFlushOfNetfilterRulesOpensTheMetadataServiceSecondsAtMost(t *testing.T) {
	const mostSecondsOpen = 10
	out := render(t, options())
	timer := unitSettings(out.files[bootstrap.PathMetadataGuardTimer])
	if !slices.ContainsFunc(out.runs, func(argv []string) bool {
		return slices.Equal(argv, []string{"systemctl", "enable", "--now", bootstrap.MetadataGuardTimer})
	}) {
		t.Fatalf("the user data never starts %s: %v", bootstrap.MetadataGuardTimer, out.runs)
	}
	if timer["WantedBy"] != "timers.target" || timer["OnActiveSec"] == "" {
		t.Errorf("the timer does not start at every boot: %v", timer)
	}
	interval, err := time.ParseDuration(timer["OnUnitActiveSec"])
	accuracy, accuracyErr := time.ParseDuration(timer["AccuracySec"])
	if err != nil || accuracyErr != nil || interval+accuracy > mostSecondsOpen*time.Second {
		t.Fatalf("the timer fires every %q within %q: a flush leaves the Metadata service open longer than %d s", timer["OnUnitActiveSec"], timer["AccuracySec"], mostSecondsOpen)
	}
	// The timer starts the unit of its own name, which must run the guard each time it is started.
	reapply := unitSettings(out.files[strings.TrimSuffix(bootstrap.PathMetadataGuardTimer, ".timer")+".service"])
	if reapply["Type"] != "oneshot" || reapply["RemainAfterExit"] == "yes" {
		t.Fatalf("the timer's unit would run once and stay active, never again: %v", reapply)
	}
	scripts := map[string]string{}
	dir := t.TempDir()
	for _, path := range []string{bootstrap.PathMetadataGuard} {
		scripts[path] = filepath.Join(dir, filepath.Base(path))
		if err := os.WriteFile(scripts[path], []byte(out.files[path]), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	boot := unitSettings(out.files[bootstrap.PathMetadataGuardUnit])["ExecStart"]
	for _, tc := range []struct {
		tools []string
		// flush empties what the tool keeps, as `nft flush ruleset` or `iptables -t raw -F` would.
		flush []string
	}{
		{tools: []string{"nft", "iptables", "ip6tables"}, flush: []string{"nft", "flush", "ruleset"}},
		{tools: []string{"iptables", "ip6tables"}, flush: []string{"iptables", "-w", "-t", "raw", "-F", "PREROUTING"}},
	} {
		t.Run(tc.tools[0], func(t *testing.T) {
			bin, rules := t.TempDir(), filepath.Join(t.TempDir(), "rules")
			for _, tool := range tc.tools {
				if err := os.WriteFile(filepath.Join(bin, tool), []byte(netfilterStandIn(tool, rules)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			run := func(argv ...string) {
				t.Helper()
				if script, ok := scripts[argv[0]]; ok {
					argv = append([]string{"/bin/sh", script}, argv[1:]...)
				} else {
					argv[0] = filepath.Join(bin, argv[0])
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				// The stand-ins first; the system's own directories hold no firewall tool (those
				// are in sbin), only what the stand-ins use.
				cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
				if output, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s", argv, err, output)
				}
			}
			dropped := func() bool {
				kept, _ := os.ReadFile(rules)
				return strings.Contains(string(kept), "169.254.169.254")
			}
			run(strings.Fields(boot)...)
			if !dropped() {
				t.Fatal("the guard at boot left the Metadata service open")
			}
			run(tc.flush...)
			if dropped() {
				t.Fatal("the stand-in's flush left the rules: the test proves nothing")
			}
			run(strings.Fields(reapply["ExecStart"])...)
			if !dropped() {
				t.Fatal("what the timer starts left the Metadata service open after a flush")
			}
		})
	}
}

// unitSettings reads a systemd unit's settings, the last of each name.
func unitSettings(unit string) map[string]string {
	settings := map[string]string{}
	for _, line := range strings.Split(unit, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			settings[name] = value
		}
	}
	return settings
}

// netfilterStandIn is a stand-in for nft or iptables that keeps its rules in a file: nft -f
// replaces them with what it reads, iptables -C finds one, -I adds one, and a flush empties them.
func netfilterStandIn(tool, rules string) string {
	return "#!/bin/sh\nrules=" + rules + "\ntouch \"$rules\"\n" + map[string]string{
		"nft": `case "$*" in
"-f -") cat > "$rules";;
"flush ruleset") : > "$rules";;
*) exit 1;;
esac
`,
		"iptables": `rule=$(echo "$*" | sed 's/ -[CI] / /')
case "$*" in
*" -C "*) grep -qxF -- "$rule" "$rules";;
*" -I "*) echo "$rule" >> "$rules";;
*" -F"*) : > "$rules";;
*) exit 1;;
esac
`,
		"ip6tables": "exit 0\n",
	}[tool]
}

func TestUserDataOverLinodesLimitNamesSpecUserData(t *testing.T) {
	opts := options()
	fits := "#cloud-config\nwrite_files: [{path: /etc/motd, content: '" + strings.Repeat("x", 50000) + "'}]\n"
	opts.UserData = &fits
	if _, err := opts.Render(); err != nil {
		t.Fatalf("user data of %d bytes refused: %v", len(fits), err)
	}
	tooLarge := "#cloud-config\nwrite_files: [{path: /etc/motd, content: '" + strings.Repeat("x", bootstrap.MaxUserDataBytes) + "'}]\n"
	opts.UserData = &tooLarge
	_, err := opts.Render()
	if !errors.Is(err, bootstrap.ErrUserDataTooLarge) || !strings.Contains(err.Error(), "spec.userData") || !strings.Contains(err.Error(), "65535") {
		t.Errorf("got %v, want an error naming spec.userData and Linode's limit", err)
	}
}
