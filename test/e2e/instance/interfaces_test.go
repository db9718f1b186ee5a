package instance_test

import (
	"context"
	"slices"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
)

var _ = Describe("Linode interfaces", func() {
	It("launches nodes in a VPC with a 1:1 NAT, a firewall per interface and a data disk, addressed by their VPC and NAT addresses, and replaces them one at a time when the VPC interface's firewall changes", func(ctx SpecContext) {
		vpcID, err := cluster.Emulator.AddVPC("e2e-interfaces", cluster.Region())
		Expect(err).NotTo(HaveOccurred())
		subnetID, err := cluster.Emulator.AddVPCSubnet(vpcID, "nodes", "10.8.0.0/24")
		Expect(err).NotTo(HaveOccurred())
		firewall, stricter := cluster.Emulator.AddFirewall("e2e-nodes"), cluster.Emulator.AddFirewall("e2e-nodes-stricter")
		f := framework.NewFixture(cluster, "interfaces", v1.LinodeNodeClassSpec{
			Image:               lo.ToPtr("linode/ubuntu24.04"),
			InterfaceGeneration: lo.ToPtr(v1.InterfaceGenerationLinode),
			Interfaces: []v1.NetworkInterface{
				{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{SubnetID: &subnetID, NAT1To1: lo.ToPtr(true)}}, FirewallID: &firewall},
				{Public: &v1.PublicInterface{IPv6Ranges: []string{"/64"}}, FirewallID: &firewall},
			},
			RootDiskSizeMB: lo.ToPtr[int32](10240),
			DataDisks:      []v1.DataDisk{{Label: "containerd", SizeMB: 8192, MountPath: lo.ToPtr("/var/lib/containerd")}},
		})
		f.NodePool.Spec.Disruption.Budgets = []karpv1.Budget{{Nodes: "1"}}
		f.Create(ctx)
		spread := f.Deployment("spread", 2, "1")
		spread.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: spread.Spec.Selector,
		}}
		Expect(kube.Create(ctx, spread)).To(Succeed())
		f.ExpectRunning(ctx, "spread", 2)

		By("addressing each node by its VPC address (InternalIP) and its public addresses, the NAT among them (ExternalIP)")
		linode := cluster.Emulator.NewClient()
		nodes := f.Nodes(ctx)
		Expect(nodes).To(HaveLen(2), "one node per pod")
		for _, node := range nodes {
			id, err := nodeprovider.ParseProviderID(node.Spec.ProviderID)
			Expect(err).NotTo(HaveOccurred())
			ips, err := linode.GetInstanceIPAddresses(ctx, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(ips.IPv4.VPC).To(ConsistOf(And(HaveField("SubnetID", subnetID), HaveField("NAT1To1", Not(BeNil())))))
			vpcAddress, natAddress := *ips.IPv4.VPC[0].Address, *ips.IPv4.VPC[0].NAT1To1
			public := lo.Map(ips.IPv4.Public, func(ip *linodego.InstanceIP, _ int) string { return ip.Address })
			Expect(public).To(ContainElement(natAddress))
			Expect(addressesOf(node, corev1.NodeInternalIP)).To(ConsistOf(vpcAddress))
			Expect(addressesOf(node, corev1.NodeExternalIP)).To(ConsistOf(public))
			Expect(ips.IPv6.Global).To(ConsistOf(HaveField("Prefix", 64)), "the public interface's IPv6 range")
			Expect(interfaceFirewalls(ctx, Default, linode, id)).To(Equal(map[string]int{"vpc": firewall, "public": firewall}))
			Expect(dataDisk(ctx, linode, id)).To(And(HaveField("Label", "containerd"), HaveField("Size", 8192), HaveField("Filesystem", linodego.FilesystemExt4)),
				"the data disk, in the boot profile's third slot (after the boot and swap disks)")
		}

		By("replacing the nodes, at most one old node draining at a time, when the VPC interface's firewall changes")
		original := lo.Map(f.NodeClaims(ctx), func(c karpv1.NodeClaim, _ int) string { return c.Name })
		changed := f.NodeClass.DeepCopy()
		Expect(kube.Get(ctx, client.ObjectKeyFromObject(changed), changed)).To(Succeed())
		stored := changed.DeepCopy()
		changed.Spec.Interfaces[0].FirewallID = &stricter
		Expect(kube.Patch(ctx, changed, client.MergeFrom(stored))).To(Succeed())
		Eventually(func(g Gomega) {
			claims := f.NodeClaims(ctx)
			draining := lo.Filter(claims, func(c karpv1.NodeClaim, _ int) bool {
				return slices.Contains(original, c.Name) && !c.DeletionTimestamp.IsZero() &&
					!c.StatusConditions().IsTrue(karpv1.ConditionTypeInstanceTerminating)
			})
			Expect(len(draining)).To(BeNumerically("<=", 1), "old nodes drained at once: %v", lo.Map(draining, func(c karpv1.NodeClaim, _ int) string { return c.Name }))
			g.Expect(claims).To(HaveLen(2))
			for _, claim := range claims {
				g.Expect(original).NotTo(ContainElement(claim.Name))
				g.Expect(claim.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized)).To(BeTrue())
				id, err := nodeprovider.ParseProviderID(claim.Status.ProviderID)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(interfaceFirewalls(ctx, g, linode, id)).To(Equal(map[string]int{"vpc": stricter, "public": firewall}))
			}
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		f.ExpectRunning(ctx, "spread", 2)
	}, SpecTimeout(5*time.Minute))
})

// addressesOf are the node's addresses of the type.
func addressesOf(node corev1.Node, addressType corev1.NodeAddressType) []string {
	var out []string
	for _, address := range node.Status.Addresses {
		if address.Type == addressType {
			out = append(out, address.Address)
		}
	}
	return out
}

// interfaceFirewalls are the firewalls of the Linode's public and VPC interfaces, by kind.
func interfaceFirewalls(ctx context.Context, g Gomega, linode *linodego.Client, linodeID int) map[string]int {
	GinkgoHelper()
	interfaces, err := linode.ListInterfaces(ctx, linodeID, nil)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]int{}
	for _, iface := range interfaces {
		kind := "public"
		if iface.VPC != nil {
			kind = "vpc"
		}
		firewalls, err := linode.ListInterfaceFirewalls(ctx, linodeID, iface.ID, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(firewalls).To(HaveLen(1), "the %s interface's firewalls", kind)
		out[kind] = firewalls[0].ID
	}
	return out
}

// dataDisk is the disk in the slot after the boot and swap disks of the Linode's boot profile.
func dataDisk(ctx context.Context, linode *linodego.Client, linodeID int) *linodego.InstanceDisk {
	GinkgoHelper()
	configs, err := linode.ListInstanceConfigs(ctx, linodeID, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(configs).NotTo(BeEmpty())
	Expect(configs[0].Devices.SDC).NotTo(BeNil(), "a disk in the boot profile's sdc slot")
	disk, err := linode.GetInstanceDisk(ctx, linodeID, configs[0].Devices.SDC.DiskID)
	Expect(err).NotTo(HaveOccurred())
	return disk
}
