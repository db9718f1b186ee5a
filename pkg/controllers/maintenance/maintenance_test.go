package maintenance_test

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/maintenance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var _ = Describe("Maintenance", func() {
	It("replaces a node once maintenance that powers it off is within the lead time", func() {
		nodeClaim, id := ourNode()
		scheduled, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: maintenance.DefaultLeadTime + time.Hour})
		Expect(err).ToNot(HaveOccurred())

		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).Annotations).ToNot(HaveKey(v1.AnnotationMaintenanceWindow))
		Expect(recordedContaining("Normal LinodeMaintenanceScheduled", "will be replaced from")).To(HaveLen(2), "on the NodeClaim and its Node")
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.Wait)).To(Equal(1.0))

		emu.Clock.Step(time.Hour)
		ExpectSingletonReconciled(ctx, controller)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationMaintenanceWindow, scheduled.When.UTC().Format(time.RFC3339)))
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationMaintenanceType, emulator.MaintenancePowerOffOn))
		Expect(nodeClaim.DeletionTimestamp.IsZero()).To(BeTrue(), "core replaces the node; the controller only marks it")
		Expect(recordedContaining("Warning LinodeMaintenanceScheduled", "replacing the node before then")).To(HaveLen(2))
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.ReplaceBeforeWindow)).To(Equal(1.0))

		ExpectSingletonReconciled(ctx, controller)
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.ReplaceBeforeWindow)).To(Equal(1.0), "one decision, however many polls see it")
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.Wait)).To(Equal(1.0))
	})

	DescribeTable("decides by what the maintenance does to the node",
		func(maintenanceType string, want maintenance.Decision) {
			nodeClaim, id := ourNode()
			_, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: maintenanceType, StartsIn: time.Hour})
			Expect(err).ToNot(HaveOccurred())
			ExpectSingletonReconciled(ctx, controller)
			_, marked := ExpectExists(ctx, env.Client, nodeClaim).Annotations[v1.AnnotationMaintenanceWindow]
			Expect(marked).To(Equal(want == maintenance.ReplaceBeforeWindow))
			Expect(decisions(maintenanceType, want)).To(Equal(1.0))
		},
		Entry("power off/on", emulator.MaintenancePowerOffOn, maintenance.ReplaceBeforeWindow),
		Entry("reboot", emulator.MaintenanceReboot, maintenance.ReplaceBeforeWindow),
		Entry("cold migration", emulator.MaintenanceColdMigration, maintenance.ReplaceBeforeWindow),
		Entry("live migration", emulator.MaintenanceLiveMigration, maintenance.NoAction),
		Entry("migrate (the migrate policy's live migration)", emulator.MaintenanceMigrate, maintenance.NoAction),
	)

	It("ignores maintenance of Linodes that are not the cluster's nodes", func() {
		ours, _ := ourNode()
		theirs := runningLinode()
		_, err := emu.ScheduleMaintenance(theirs, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: time.Minute})
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.FailHost(theirs, emulator.HostFailure{})
		Expect(err).ToNot(HaveOccurred())
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, ours).Annotations).ToNot(HaveKey(v1.AnnotationMaintenanceWindow))
		Expect(recorded()).To(BeEmpty())
	})

	It("stops replacing a node when Linode cancels its maintenance", func() {
		nodeClaim, id := ourNode()
		_, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: emulator.MaintenanceReboot, StartsIn: time.Hour})
		Expect(err).ToNot(HaveOccurred())
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).Annotations).To(HaveKey(v1.AnnotationMaintenanceWindow))

		Expect(emu.CancelMaintenance(id)).To(Equal(1))
		emu.Clock.Step(maintenance.DefaultLeadTime / 24)
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).Annotations).ToNot(HaveKey(v1.AnnotationMaintenanceWindow))
		Expect(recordedContaining("Normal LinodeMaintenanceWithdrawn")).ToNot(BeEmpty())
		Expect(decisions(emulator.MaintenanceReboot, maintenance.Withdrawn)).To(Equal(1.0))
	})

	It("reads the maintenance list every lead time / 24 and the events every interval", func() {
		listings := func(route string) int {
			return len(slices.DeleteFunc(emu.Requests(), func(r emulator.RequestRecord) bool { return r.Route != route }))
		}
		for range 10 {
			ExpectSingletonReconciled(ctx, controller)
			emu.Clock.Step(maintenance.DefaultInterval)
		}
		Expect(listings("GET /account/events")).To(Equal(10))
		Expect(listings("GET /account/maintenance")).To(Equal(2), "at the first poll and 5 minutes later")
	})

	It("replaces a node at once when its maintenance started before it was replaced", func() {
		nodeClaim, id := ourNode()
		_, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: time.Minute})
		Expect(err).ToNot(HaveOccurred())
		emu.Clock.Step(2 * time.Minute)
		ExpectSingletonReconciled(ctx, controller)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(karpv1.NodeClaimTerminationTimestampAnnotationKey, emu.Clock.Now().Format(time.RFC3339)))
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.ReplaceNow)).To(Equal(1.0))
	})
})

var _ = Describe("Linodes that go down", func() {
	It("replaces at once a node whose host failed", func() {
		nodeClaim, id := ourNode()
		_, err := emu.FailHost(id, emulator.HostFailure{})
		Expect(err).ToNot(HaveOccurred())
		ExpectSingletonReconciled(ctx, controller)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(karpv1.NodeClaimTerminationTimestampAnnotationKey, emu.Clock.Now().Format(time.RFC3339)),
			"its pods cannot drain from a Linode that is off")
		Expect(recordedContaining("Warning LinodeDown", "host_reboot")).To(HaveLen(2))

		emu.Clock.Step(30 * time.Second)
		ExpectSingletonReconciled(ctx, controller)
		Expect(decisions("host_reboot", maintenance.ReplaceNow)).To(Equal(1.0), "the event is acted on once")
	})

	It("drains a node whose Linode Linode has already restarted", func() {
		nodeClaim, id := ourNode()
		_, err := emu.FailHost(id, emulator.HostFailure{RestartAfter: 10 * time.Second})
		Expect(err).ToNot(HaveOccurred())
		emu.Clock.Step(10 * time.Second)
		emu.Tick()
		ExpectSingletonReconciled(ctx, controller)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(nodeClaim.Annotations).ToNot(HaveKey(karpv1.NodeClaimTerminationTimestampAnnotationKey), "the node drains under its PodDisruptionBudgets")
		Expect(decisions("host_reboot", maintenance.ReplaceDraining)).To(Equal(1.0))
	})

	It("replaces a node powered off through the API", func() {
		nodeClaim, id := ourNode()
		Expect(emu.Client.ShutdownInstance(ctx, id)).To(Succeed())
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(decisions("linode_shutdown", maintenance.ReplaceNow)).To(Equal(1.0))
	})

	It("replaces a node whose host failed while the controller was restarting, not one from long before", func() {
		recent, recentID := ourNode()
		old, oldID := ourNode()
		_, err := emu.FailHost(oldID, emulator.HostFailure{})
		Expect(err).ToNot(HaveOccurred())
		emu.Clock.Step(time.Hour)
		_, err = emu.FailHost(recentID, emulator.HostFailure{})
		Expect(err).ToNot(HaveOccurred())
		emu.Clock.Step(5 * time.Minute)

		ExpectSingletonReconciled(ctx, newController())
		Expect(ExpectExists(ctx, env.Client, recent).DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(ExpectExists(ctx, env.Client, old).DeletionTimestamp.IsZero()).To(BeTrue(),
			"an hour-old failure is node repair's to judge")
	})
})

var _ = Describe("Linode API cost", func() {
	It("reads two filtered listings per poll, whatever the number of nodes", func() {
		for range 30 {
			ourNode()
		}
		emu.ResetCounters()
		result := ExpectSingletonReconciled(ctx, controller)
		Expect(result.RequeueAfter).To(Equal(maintenance.DefaultInterval))
		Expect(emu.Counters()).To(Equal(map[string]int{"GET /account/maintenance": 1, "GET /account/events": 1}))
		for _, record := range emu.Requests() {
			Expect(record.Status).To(Equal(http.StatusOK), "%s answered %d", record.Route, record.Status)
		}
	})

	It("waits for the next interval when the API fails, instead of retrying at once", func() {
		nodeClaim, id := ourNode()
		_, err := emu.FailHost(id, emulator.HostFailure{})
		Expect(err).ToNot(HaveOccurred())
		emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/account/events", Sequence: []int{http.StatusServiceUnavailable}})
		result := ExpectSingletonReconciled(ctx, controller)
		Expect(result.RequeueAfter).To(Equal(maintenance.DefaultInterval))
		Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeTrue())

		emu.Clock.Step(maintenance.DefaultInterval)
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeFalse(), "the next poll reads the events it missed")
	})
})

var _ = Describe("karpenter.sh/do-not-repair", func() {
	// vetoed puts the annotation on the node's Node, as an operator keeping a broken node to
	// debug it would, or on its NodeClaim.
	vetoed := func(onNode bool) (*karpv1.NodeClaim, int) {
		GinkgoHelper()
		nodeClaim, id := ourNode()
		var object client.Object = nodeClaim
		if onNode {
			object = ExpectExists(ctx, env.Client, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeClaim.Status.NodeName}})
		}
		object.SetAnnotations(map[string]string{karpv1.DoNotRepairAnnotationKey: "true"})
		ExpectApplied(ctx, env.Client, object)
		return ExpectExists(ctx, env.Client, nodeClaim), id
	}

	DescribeTable("keeps a node whose Linode went down",
		func(onNode bool, goDown func(id int), cause string) {
			nodeClaim, id := vetoed(onNode)
			goDown(id)
			ExpectSingletonReconciled(ctx, controller)
			nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
			Expect(nodeClaim.DeletionTimestamp.IsZero()).To(BeTrue())
			Expect(nodeClaim.Annotations).ToNot(HaveKey(karpv1.NodeClaimTerminationTimestampAnnotationKey))
			Expect(recordedContaining("Warning LinodeRepairBlocked", karpv1.DoNotRepairAnnotationKey)).To(HaveLen(2), "on the NodeClaim and its Node")
			Expect(decisions(cause, maintenance.RepairBlocked)).To(Equal(1.0))
		},
		Entry("its host failed, vetoed on the Node", true, func(id int) {
			_, err := emu.FailHost(id, emulator.HostFailure{})
			Expect(err).ToNot(HaveOccurred())
		}, "host_reboot"),
		Entry("powered off through the API, vetoed on the NodeClaim", false, func(id int) {
			Expect(emu.Client.ShutdownInstance(ctx, id)).To(Succeed())
		}, "linode_shutdown"),
	)

	It("holds back the replacement for maintenance under way until the veto goes", func() {
		nodeClaim, id := vetoed(true)
		_, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: time.Minute})
		Expect(err).ToNot(HaveOccurred())
		emu.Clock.Step(2 * time.Minute)
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeTrue())
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.RepairBlocked)).To(Equal(1.0))

		node := ExpectExists(ctx, env.Client, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeClaim.Status.NodeName}})
		node.Annotations = nil
		ExpectApplied(ctx, env.Client, node)
		emu.Clock.Step(maintenance.DefaultLeadTime / 24)
		ExpectSingletonReconciled(ctx, controller)
		Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(decisions(emulator.MaintenancePowerOffOn, maintenance.ReplaceNow)).To(Equal(1.0))
	})
})

var _ = Describe("A NodeClaim that records a Linode not its own", func() {
	DescribeTable("is neither marked nor replaced for that Linode's maintenance or failure, and the NodeClaim says why",
		func(linode func(nodeClaimName string) int, why string) {
			nodeClaim := newNodeClaim()
			id := nodeClaimOf(nodeClaim, linode(nodeClaim.Name))
			_, err := emu.ScheduleMaintenance(id, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: time.Hour})
			Expect(err).ToNot(HaveOccurred())
			ExpectSingletonReconciled(ctx, controller)
			Expect(ExpectExists(ctx, env.Client, nodeClaim).Annotations).ToNot(HaveKey(v1.AnnotationMaintenanceWindow))

			_, err = emu.FailHost(id, emulator.HostFailure{})
			Expect(err).ToNot(HaveOccurred())
			ExpectSingletonReconciled(ctx, controller)
			Expect(ExpectExists(ctx, env.Client, nodeClaim).DeletionTimestamp.IsZero()).To(BeTrue(), "its Node is not drained for another's Linode")
			Expect(recordedContaining("Warning LinodeNotOwned", fmt.Sprintf("Linode %d", id), why)).ToNot(BeEmpty())
			Expect(recordedContaining("LinodeMaintenance")).To(BeEmpty())
		},
		Entry("another NodeClaim's Linode of this cluster", func(string) int {
			return runningLinode(cluster.OwnerTag(), nodeprovider.NodeClaimTag("default-other"))
		}, "of another NodeClaim"),
		Entry("another cluster's Linode, tagged with a NodeClaim of the same name", func(name string) int {
			return runningLinode(nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag(name))
		}, "another cluster's ownership tag"),
		Entry("an LKE-mode cluster's node, tagged with a NodeClaim of the same name", func(name string) int {
			lkeNode, err := emu.LKEModeNode(ctx, "lke-neighbour", name)
			Expect(err).ToNot(HaveOccurred())
			return lkeNode.ID
		}, "is a node of LKE cluster"),
		Entry("a Linode with no tag of ours", func(string) int { return runningLinode("database") }, "neither this cluster's ownership tag"),
	)
})
