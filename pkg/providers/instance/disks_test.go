package instance_test

import (
	"errors"
	"net/http"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	corecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const (
	disksRoute = instancesRoute + "/{linodeId}/disks"
	bootRoute  = instancesRoute + "/{linodeId}/boot"
)

// dataDiskClass is a class whose nodes have a 20 GB boot disk labelled "root", 1 GB of swap, a
// 40 GB disk for containerd and a raw 10 GB disk for local volumes: 72704 MB in all, more than
// g6-standard-1's 51200 MB.
func dataDiskClass() *v1.LinodeNodeClass {
	GinkgoHelper()
	return readyNodeClass(v1.LinodeNodeClassSpec{
		RootDiskSizeMB: lo.ToPtr[int32](20480),
		SwapSizeMB:     lo.ToPtr[int32](1024),
		RootDiskLabel:  lo.ToPtr("root"),
		DataDisks: []v1.DataDisk{
			{Label: "containerd", SizeMB: 40960, MountPath: lo.ToPtr("/var/lib/containerd")},
			{Label: "local-volumes", SizeMB: 10240, Filesystem: lo.ToPtr("raw")},
		},
	})
}

// expectDataDisks asserts the Linode has the class's disks, each once, in their profile slots,
// and has booted.
func expectDataDisks(providerID string) {
	GinkgoHelper()
	id, err := nodeprovider.ParseProviderID(providerID)
	Expect(err).ToNot(HaveOccurred())
	disks, err := emu.Client.ListInstanceDisks(ctx, id, nil)
	Expect(err).ToNot(HaveOccurred())
	Expect(disks).To(HaveLen(4), "the boot disk, swap and the two data disks, each once")
	byLabel := lo.KeyBy(disks, func(d linodego.InstanceDisk) string { return d.Label })
	Expect(byLabel).To(HaveKeyWithValue("root", And(HaveField("Size", 20480), HaveField("Filesystem", linodego.FilesystemExt4))))
	Expect(byLabel).To(HaveKeyWithValue("containerd", And(HaveField("Size", 40960), HaveField("Filesystem", linodego.FilesystemExt4))))
	Expect(byLabel).To(HaveKeyWithValue("local-volumes", And(HaveField("Size", 10240), HaveField("Filesystem", linodego.FilesystemRaw))))
	configs, err := emu.Client.ListInstanceConfigs(ctx, id, nil)
	Expect(err).ToNot(HaveOccurred())
	Expect(configs).To(HaveLen(1))
	devices := configs[0].Devices
	Expect(devices.SDA.DiskID).To(Equal(byLabel["root"].ID))
	Expect(devices.SDB).ToNot(BeNil())
	Expect(lo.FindOrElse(disks, linodego.InstanceDisk{}, func(d linodego.InstanceDisk) bool { return d.ID == devices.SDB.DiskID }).Filesystem).To(Equal(linodego.FilesystemSwap))
	Expect(devices.SDC).To(HaveValue(HaveField("DiskID", byLabel["containerd"].ID)))
	Expect(devices.SDD).To(HaveValue(HaveField("DiskID", byLabel["local-volumes"].ID)))
	Expect(devices.SDE).To(BeNil())
	linode, err := emu.Client.GetInstance(ctx, id)
	Expect(err).ToNot(HaveOccurred())
	Expect(linode.Status).To(Equal(linodego.InstanceRunning))
}

var _ = Describe("Data disks", func() {
	It("launches on a plan that holds them, adds them to the boot profile before the first boot, and mounts them", func() {
		nodeClass := dataDiskClass()
		created := launched(nodeClaimOf(nodeClass, "g6-standard-1", "g6-standard-2"))
		Expect(created.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-standard-2"), "g6-standard-1 is cheaper, but its disk is too small")
		expectDataDisks(created.Status.ProviderID)

		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		meta, err := emu.NewMetadataClient(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		userData, err := meta.GetUserData(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(string(userData)).To(And(ContainSubstring("- /dev/sdc\n  - /var/lib/containerd\n  - ext4"), Not(ContainSubstring("/dev/sdd"))),
			"the containerd disk is mounted from its slot; the raw disk is not")
	})

	It("follow the boot disk in sdb when the class has no swap, so that no slot is left empty", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{
			RootDiskSizeMB: lo.ToPtr[int32](20480),
			SwapSizeMB:     lo.ToPtr[int32](0),
			DataDisks:      []v1.DataDisk{{Label: "containerd", SizeMB: 40960, MountPath: lo.ToPtr("/var/lib/containerd")}},
		})
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		disks, err := emu.Client.ListInstanceDisks(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		data, found := lo.Find(disks, func(d linodego.InstanceDisk) bool { return d.Label == "containerd" })
		Expect(found).To(BeTrue())
		configs, err := emu.Client.ListInstanceConfigs(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(configs[0].Devices.SDB).To(HaveValue(HaveField("DiskID", data.ID)))
		Expect(configs[0].Devices.SDC).To(BeNil())
		meta, err := emu.NewMetadataClient(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		userData, err := meta.GetUserData(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(string(userData)).To(ContainSubstring("- /dev/sdb\n  - /var/lib/containerd\n  - ext4"))
	})

	It("are not offered on plans too small for them", func() {
		nodeClass := dataDiskClass()
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-1"))
		Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeTrue(), "got %v", err)
		Expect(emu.Instances()).To(BeEmpty())
	})

	It("are finished by a retried launch after a lost answer and a failed boot, never made twice", func() {
		nodeClass := dataDiskClass()
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: disksRoute, LoseResponse: emulator.LoseWith502, Count: 1})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(HaveOccurred(), "the answer to the first disk's create was lost")
		Expect(emu.Instances()).To(HaveLen(1))
		Expect(emu.Instances()[0].Status).To(Equal(string(linodego.InstanceOffline)), "the Linode waits, powered off, for its disks")

		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: bootRoute, Sequence: []int{http.StatusInternalServerError}})
		_, err = cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(HaveOccurred(), "the boot failed")

		first := launched(nodeClaim)
		again := launched(nodeClaim)
		Expect(again.Status.ProviderID).To(Equal(first.Status.ProviderID))
		Expect(emu.Instances()).To(HaveLen(1))
		expectDataDisks(first.Status.ProviderID)
		Expect(emu.Counters()).To(And(
			HaveKeyWithValue("POST "+instancesRoute, 1),
			HaveKeyWithValue("POST "+disksRoute, 2),
			HaveKeyWithValue("POST "+bootRoute, 2),
		), "one Linode, each disk created once (the lost answer's disk found by its label), one boot that failed and one that did")
	})

	It("wait for a busy Linode without the class being blamed", func() {
		nodeClass := dataDiskClass()
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: disksRoute, Sequence: []int{http.StatusBadRequest}, Reason: "Linode busy."})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(HaveOccurred())
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeFalse(), "busy is no reason to reject the class: %v", err)
		Expect(ExpectExists(ctx, env.Client, nodeClass).LaunchRejected()).To(BeFalse())
		expectDataDisks(launched(nodeClaim).Status.ProviderID)
	})

	It("that Linode refuses mark the class rejected, as a refused create does", func() {
		nodeClass := dataDiskClass()
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: disksRoute, Sequence: []int{http.StatusBadRequest}, Field: "size", Reason: "Not enough free space"})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2"))
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeTrue(), "got %v", err)
		Expect(createErr.ConditionReason).To(Equal(corecloudprovider.LaunchRejectedReason))
		Expect(createErr.ConditionMessage).To(ContainSubstring("Not enough free space"))
		Expect(ExpectExists(ctx, env.Client, nodeClass).LaunchRejected()).To(BeTrue())
	})

	It("are added once the Linode has provisioned", func() {
		emu = ExpectEmulator(emulator.WithDelays(emulator.DefaultDelays()))
		recorder = record.NewFakeRecorder(100)
		cloud = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceRecorder(events.NewRecorder(recorder)))
		nodeClass := dataDiskClass()
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(MatchError(ContainSubstring("is provisioning")))
		Expect(emu.Counters()).ToNot(HaveKey("POST "+disksRoute), "Linode refuses disks while it provisions")

		emu.Clock.Step(emulator.DefaultDelays().Provisioning)
		created := launched(nodeClaim)
		emu.Clock.Step(emulator.DefaultDelays().Booting)
		expectDataDisks(created.Status.ProviderID)
	})

	It("leave a class with rootDiskSizeMB alone to Linode's create, which boots the Linode itself", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{RootDiskSizeMB: lo.ToPtr[int32](30720)})
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		disks, err := emu.Client.ListInstanceDisks(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(disks).To(HaveLen(2))
		Expect(disks[0].Size).To(Equal(30720))
		Expect(emu.Counters()).ToNot(HaveKey("POST " + bootRoute))
	})

	DescribeTable("refuse what no node can have, naming the fields",
		func(spec v1.LinodeNodeClassSpec, message string) {
			spec.Image, spec.RootDiskSizeMB = lo.ToPtr("linode/ubuntu24.04"), lo.ToPtr[int32](20480)
			nodeClass := resolved(test.LinodeNodeClass(v1.LinodeNodeClass{Spec: spec}))
			Expect(expectCondition(nodeClass, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, instance.ReasonUnsupported)).To(ContainSubstring(message))
		},
		Entry("two disks on one path", v1.LinodeNodeClassSpec{DataDisks: []v1.DataDisk{{Label: "a", SizeMB: 1024, MountPath: lo.ToPtr("/data")}, {Label: "b", SizeMB: 1024, MountPath: lo.ToPtr("/data/")}}},
			"dataDisks[a] and dataDisks[b] are both mounted at /data"),
		Entry("a mount path cloud-init would read as a template", v1.LinodeNodeClassSpec{DataDisks: []v1.DataDisk{{Label: "a", SizeMB: 1024, MountPath: lo.ToPtr("/data/{{v1.region}}")}}},
			"dataDisks[a].mountPath"),
	)
})

var _ = Describe("A launch left powered off", func() {
	It("is booted by the retried Create even after the class dropped its data disks", func() {
		nodeClass := dataDiskClass()
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: disksRoute, Sequence: []int{http.StatusInternalServerError}})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(HaveOccurred())

		nodeClass.Spec.DataDisks, nodeClass.Spec.RootDiskLabel = nil, nil
		resolved(nodeClass)
		created := launched(nodeClaim)
		Expect(linodeOf(created.Status.ProviderID).Status).To(Equal(string(linodego.InstanceRunning)))
		Expect(emu.Counters()).To(HaveKeyWithValue("POST "+bootRoute, 1))
	})
})
