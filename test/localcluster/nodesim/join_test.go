package nodesim_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINodeSimulatorTestKeyOnly tests@nodesim"

// joinOptions are user data options that join env's cluster with the token the node identity
// component issued, for a Linode labelled name, the node of NodeClaim name.
func joinOptions(t *testing.T, name string) bootstrap.Options {
	t.Helper()
	ctx := context.Background()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: karpv1.NodeClaimSpec{NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: "default"}}})
	if err := env.Client.Create(ctx, nodeClaim); err != nil {
		t.Fatal(err)
	}
	token, err := env.Token(ctx, nodeClaim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, nodeClaim) })
	return bootstrap.Options{
		ClusterEndpoint: env.Endpoint(),
		ClusterCA:       env.ServingCA(),
		Token:           token,
		NodeName:        name,
		Labels:          map[string]string{karpv1.NodePoolLabelKey: "default", "team": "payments", corev1.LabelInstanceTypeStable: "g6-standard-2"},
		Taints:          []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}},
		MaxPods:         58,
		Reserved: bootstrap.Reserved{
			KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("500Mi")},
		},
	}
}

func bootLinode(t *testing.T, linode *linodego.Client, name string, opts *bootstrap.Options) *linodego.Instance {
	t.Helper()
	create := linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: name, Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey}}
	if opts != nil {
		userData, err := opts.Render()
		if err != nil {
			t.Fatal(err)
		}
		create.Metadata = &linodego.InstanceMetadataOptions{UserData: bootstrap.Encode(userData)}
	}
	instance, err := linode.CreateInstance(context.Background(), create)
	if err != nil {
		t.Fatal(err)
	}
	return instance
}

func nextEvent(t *testing.T, events <-chan nodesim.Event, timeout time.Duration) nodesim.Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(timeout):
		t.Fatalf("no node simulator event within %v", timeout)
		return nodesim.Event{}
	}
}

func TestPlainLinodeJoinsByTLSBootstrap(t *testing.T) {
	ctx := context.Background()
	_, linode, events := startSimulatorWithEvents(t, time.Minute)
	opts := joinOptions(t, "default-joins")
	instance := bootLinode(t, linode, "default-joins", &opts)

	ev := nextEvent(t, events, time.Minute)
	if ev.Err != nil || !ev.Registered || ev.NodeName != "default-joins" || ev.InstanceID != instance.ID {
		t.Fatalf("event %+v, want the node registered", ev)
	}
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "default-joins"}, node); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("linode://%d", instance.ID); node.Spec.ProviderID != want {
		t.Errorf("provider ID %q, want %q (the Linode's id from the Metadata service)", node.Spec.ProviderID, want)
	}
	for key, want := range map[string]string{karpv1.NodePoolLabelKey: "default", "team": "payments", corev1.LabelHostname: "default-joins", corev1.LabelInstanceTypeStable: "g6-standard-2"} {
		if got := node.Labels[key]; got != want {
			t.Errorf("label %s = %q, want %q", key, got, want)
		}
	}
	taints := registeredTaints(node)
	if len(taints) != 2 || !taints[0].MatchTaint(&karpv1.UnregisteredNoExecuteTaint) || taints[1].Key != "dedicated" {
		t.Errorf("taints %v, want karpenter.sh/unregistered:NoExecute and the NodePool's", taints)
	}
	// g6-standard-2: 4096 MiB less 2.5% for the hypervisor is 3993 MiB; kubelet keeps 500 MiB and
	// its 100 MiB eviction threshold.
	if pods, memory := node.Status.Capacity.Pods().Value(), node.Status.Allocatable.Memory().Value(); pods != 58 || memory != (3993-600)<<20 {
		t.Errorf("capacity %d pods, allocatable memory %d MiB; want what the kubelet configuration says", pods, memory>>20)
	}
	if node.Annotations[nodesim.AnnotationKwokNode] != "fake" {
		t.Errorf("kwok does not run the node: annotations %v", node.Annotations)
	}
	if len(node.Status.Addresses) != 0 {
		t.Errorf("addresses %v: a Linode outside any VPC registers without addresses, which kwok then gives it", node.Status.Addresses)
	}

	// The node authenticated with its bootstrap token, and kube-controller-manager approved and
	// signed its certificate.
	var requests certificatesv1.CertificateSigningRequestList
	if err := env.Client.List(ctx, &requests); err != nil {
		t.Fatal(err)
	}
	tokenUser := "system:bootstrap:" + strings.SplitN(string(opts.Token), ".", 2)[0]
	var found bool
	for _, csr := range requests.Items {
		if csr.Spec.Username != tokenUser {
			continue
		}
		found = true
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || len(csr.Status.Certificate) == 0 ||
			!slices.Contains(csr.Spec.Groups, bootstraptoken.Group) {
			t.Errorf("certificate request %s: signer %s, groups %v, signed %t", csr.Name, csr.Spec.SignerName, csr.Spec.Groups, len(csr.Status.Certificate) > 0)
		}
	}
	if !found {
		t.Errorf("no certificate request by %s", tokenUser)
	}

	if err := linode.DeleteInstance(ctx, instance.ID); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events, 10*time.Second); ev.Registered || ev.NodeName != "default-joins" {
		t.Fatalf("event %+v, want the node removed", ev)
	}
}

func TestPlainLinodeWithWrongUserDataDoesNotJoin(t *testing.T) {
	otherCA, err := os.ReadFile(env.CA.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedEndpoint := "https://" + closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name   string
		change func(*bootstrap.Options)
		want   string
	}{
		{"a token the cluster does not know", func(o *bootstrap.Options) { o.Token = "zzzzzz.0123456789abcdef" }, "Unauthorized"},
		{"a CA that did not sign the API server's certificate", func(o *bootstrap.Options) { o.ClusterCA = otherCA }, "certificate signed by unknown authority"},
		{"an endpoint nothing listens on", func(o *bootstrap.Options) { o.ClusterEndpoint = closedEndpoint }, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, linode, events := startSimulatorWithEvents(t, 2*time.Second)
			name := "wrong-" + strings.Trim(strings.ToLower(strings.ReplaceAll(tc.name[:12], " ", "-")), "-")
			opts := joinOptions(t, name)
			tc.change(&opts)
			bootLinode(t, linode, name, &opts)
			ev := nextEvent(t, events, 30*time.Second)
			if ev.Registered || ev.Err == nil || !strings.Contains(ev.Err.Error(), tc.want) {
				t.Fatalf("event %+v, want a failed join saying %q", ev, tc.want)
			}
			if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, &corev1.Node{}); err == nil {
				t.Fatalf("node %s registered", name)
			}
		})
	}
	t.Run("no user data", func(t *testing.T) {
		t.Parallel()
		_, linode, events := startSimulatorWithEvents(t, 2*time.Second)
		bootLinode(t, linode, "no-user-data", nil)
		if ev := nextEvent(t, events, 30*time.Second); ev.Err == nil || !strings.Contains(ev.Err.Error(), "no user data") {
			t.Fatalf("event %+v, want a failed join for lack of user data", ev)
		}
	})
}

func TestStoppedLinodesNodeStopsReporting(t *testing.T) {
	ctx := context.Background()
	emu, linode, events := startSimulatorWithEvents(t, time.Minute)
	opts := joinOptions(t, "default-stops")
	instance := bootLinode(t, linode, "default-stops", &opts)
	if ev := nextEvent(t, events, time.Minute); !ev.Registered {
		t.Fatalf("event %+v, want the node registered", ev)
	}
	waitFor(t, "kwok to make the node Ready", 10*time.Second, func() bool {
		node := &corev1.Node{}
		return env.Client.Get(ctx, types.NamespacedName{Name: "default-stops"}, node) == nil && nodeReadyStatus(node) == corev1.ConditionTrue
	})
	// down is whether the Node shows a silent kubelet: Ready Unknown, its status left alone by kwok.
	down := func() bool {
		node := &corev1.Node{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "default-stops"}, node); err != nil {
			t.Fatal(err)
		}
		ready := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
		return node.Annotations[nodesim.AnnotationKwokStatus] == "custom" && ready >= 0 && node.Status.Conditions[ready].Status == corev1.ConditionUnknown
	}
	if err := linode.ShutdownInstance(ctx, instance.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stopped Linode's node to stop reporting", 10*time.Second, func() bool { emu.Tick(); return down() })
	waitFor(t, "the Linode to be offline", 10*time.Second, func() bool {
		emu.Tick()
		stopped, err := linode.GetInstance(ctx, instance.ID)
		return err == nil && stopped.Status == linodego.InstanceOffline
	})
	if err := linode.BootInstance(ctx, instance.ID, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rebooted Linode's node to report again", 10*time.Second, func() bool {
		emu.Tick()
		node := &corev1.Node{}
		return env.Client.Get(ctx, types.NamespacedName{Name: "default-stops"}, node) == nil && node.Annotations[nodesim.AnnotationKwokStatus] == ""
	})
	if err := linode.DeleteInstance(ctx, instance.ID); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events, 10*time.Second)
}

func TestPlainLinodeInAVPCHasItsVPCAddressInternalAndItsNATAddressExternal(t *testing.T) {
	ctx := context.Background()
	emu, linode, events := startSimulatorWithEvents(t, time.Minute)
	vpcID, err := emu.AddVPC("cluster", "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	subnetID, err := emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	auto := "auto"
	for _, tc := range []struct {
		name  string
		setUp func(*linodego.InstanceCreateOptions)
	}{
		{"vpc-nat-linode-interfaces", func(create *linodego.InstanceCreateOptions) {
			create.InterfaceGeneration = linodego.GenerationLinode
			create.LinodeInterfaces = []linodego.LinodeInterfaceCreateOptions{{VPC: &linodego.VPCInterfaceCreateOptions{
				SubnetID: subnetID,
				IPv4:     &linodego.VPCInterfaceIPv4CreateOptions{Addresses: &[]linodego.VPCInterfaceIPv4AddressCreateOptions{{Address: &auto, NAT1To1Address: &auto}}},
			}}}
		}},
		{"vpc-nat-config-profile", func(create *linodego.InstanceCreateOptions) {
			create.Interfaces = []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID, Primary: true, IPv4: &linodego.VPCIPv4{NAT1To1: new("any")}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := joinOptions(t, tc.name)
			userData, err := opts.Render()
			if err != nil {
				t.Fatal(err)
			}
			create := linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: tc.name, Image: "linode/ubuntu24.04", AuthorizedKeys: []string{testSSHKey},
				Metadata: &linodego.InstanceMetadataOptions{UserData: bootstrap.Encode(userData)}}
			tc.setUp(&create)
			instance, err := linode.CreateInstance(ctx, create)
			if err != nil {
				t.Fatal(err)
			}
			if ev := nextEvent(t, events, time.Minute); ev.Err != nil || !ev.Registered || ev.InstanceID != instance.ID {
				t.Fatalf("event %+v, want the node registered", ev)
			}
			ips, err := linode.GetInstanceIPAddresses(ctx, instance.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(ips.IPv4.VPC) != 1 || ips.IPv4.VPC[0].NAT1To1 == nil || len(ips.IPv4.Public) != 1 || ips.IPv4.Public[0].Address != *ips.IPv4.VPC[0].NAT1To1 {
				t.Fatalf("the Linode's addresses: VPC %+v, public %+v; want one VPC address whose NAT is its public address", ips.IPv4.VPC, ips.IPv4.Public)
			}
			node := &corev1.Node{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: tc.name}, node); err != nil {
				t.Fatal(err)
			}
			want := []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: *ips.IPv4.VPC[0].Address},
				{Type: corev1.NodeExternalIP, Address: *ips.IPv4.VPC[0].NAT1To1},
				{Type: corev1.NodeHostName, Address: tc.name},
			}
			if !slices.Equal(node.Status.Addresses, want) {
				t.Errorf("node addresses %v, want %v", node.Status.Addresses, want)
			}
		})
	}
}
