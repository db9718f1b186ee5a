package v1alpha1_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/randfill"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/apis/v1alpha1"
)

func alphaClass(spec v1alpha1.LinodeNodeClassSpec) *v1alpha1.LinodeNodeClass {
	return &v1alpha1.LinodeNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "kept"}},
		Spec:       spec,
	}
}

func toV1(t *testing.T, alpha *v1alpha1.LinodeNodeClass) *v1.LinodeNodeClass {
	t.Helper()
	out := &v1.LinodeNodeClass{}
	if err := alpha.DeepCopy().ConvertTo(out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fromV1(t *testing.T, hub *v1.LinodeNodeClass) *v1alpha1.LinodeNodeClass {
	t.Helper()
	out := &v1alpha1.LinodeNodeClass{}
	if err := out.ConvertFrom(hub.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	return out
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestConversionToV1 is the field mapping: where each v1alpha1 field lands in v1, which ones have
// no v1 home (carried in the annotation and reported), and that every object reads back as
// v1alpha1 exactly as written.
func TestConversionToV1(t *testing.T) {
	tests := []struct {
		name     string
		alpha    v1alpha1.LinodeNodeClassSpec
		want     v1.LinodeNodeClassSpec
		unmapped []string
		// carried says whether the v1 object needs the annotation to read back unchanged.
		carried bool
	}{
		{name: "empty (the alpha examples)", alpha: v1alpha1.LinodeNodeClassSpec{}, want: v1.LinodeNodeClassSpec{}},
		{
			name:  "the alpha README's image",
			alpha: v1alpha1.LinodeNodeClassSpec{Image: new("linode/ubuntu22.04")},
			want:  v1.LinodeNodeClassSpec{Image: new("linode/ubuntu22.04")},
		},
		{
			name: "LKE fields",
			alpha: v1alpha1.LinodeNodeClassSpec{
				Tags: []string{"karpenter-node", "env:production"}, FirewallID: new(12345),
				LKEK8sVersion: new("1.33"), DiskEncryption: new("enabled"),
			},
			want: v1.LinodeNodeClassSpec{
				Tags: []v1.Tag{"karpenter-node", "env:production"}, FirewallID: new(12345),
				LKEK8sVersion: new("1.33"), DiskEncryption: new(v1.DiskEncryptionEnabled),
			},
		},
		{
			name: "instance fields",
			alpha: v1alpha1.LinodeNodeClassSpec{
				Image: new("linode/ubuntu22.04"), AuthorizedKeys: []string{"ssh-ed25519 AAAA root@a"}, AuthorizedUsers: []string{"my-user"},
				BackupsEnabled: new(false), SwapSize: new(512), OSDisk: &v1alpha1.InstanceDisk{Size: quantity("20Gi")},
				PlacementGroup: &v1alpha1.PlacementGroup{ID: 7},
			},
			want: v1.LinodeNodeClassSpec{
				Image: new("linode/ubuntu22.04"), AuthorizedKeys: []string{"ssh-ed25519 AAAA root@a"}, AuthorizedUsers: []string{"my-user"},
				BackupsEnabled: new(false), SwapSizeMB: new(int32(512)), RootDiskSizeMB: new(int32(20480)),
				PlacementGroup: &v1.PlacementGroupSelector{ID: new(7)},
			},
		},
		{
			name: "kubelet",
			alpha: v1alpha1.LinodeNodeClassSpec{Kubelet: &v1alpha1.KubeletConfiguration{
				ClusterDNS: []string{"10.0.0.10"}, MaxPods: new(int32(64)), PodsPerCore: new(int32(10)),
				SystemReserved: map[string]string{"cpu": "100m"}, KubeReserved: map[string]string{"memory": "500Mi"},
				EvictionHard: map[string]string{"memory.available": "5%"}, EvictionSoft: map[string]string{"memory.available": "10%"},
				EvictionSoftGracePeriod: map[string]string{"memory.available": "1m30s"}, EvictionMaxPodGracePeriod: new(int32(60)),
			}},
			want: v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{
				ClusterDNS: []string{"10.0.0.10"}, MaxPods: new(int32(64)), PodsPerCore: new(int32(10)),
				SystemReserved: map[string]v1.ReservedQuantity{"cpu": "100m"}, KubeReserved: map[string]v1.ReservedQuantity{"memory": "500Mi"},
				EvictionHard: map[string]v1.EvictionThreshold{"memory.available": "5%"}, EvictionSoft: map[string]v1.EvictionThreshold{"memory.available": "10%"},
				EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: 90 * time.Second}}, EvictionMaxPodGracePeriod: new(int32(60)),
			}},
		},
		{
			name: "the alpha provider's instance fields that v1 gained",
			alpha: v1alpha1.LinodeNodeClassSpec{
				DataDisks: &v1alpha1.InstanceDisks{
					SDB: &v1alpha1.InstanceDisk{Size: quantity("10Gi"), Label: new("data"), Filesystem: new("ext3")},
					SDD: &v1alpha1.InstanceDisk{Size: quantity("2048Mi"), Filesystem: new("raw")},
				},
				Configuration:  &v1alpha1.InstanceConfiguration{Kernel: new("linode/latest-64bit")},
				OSDisk:         &v1alpha1.InstanceDisk{Size: quantity("20Gi"), Filesystem: new("ext4"), Label: new("root")},
				PlacementGroup: &v1alpha1.PlacementGroup{ID: 7, CompliantOnly: new(true)},
				Kubelet:        &v1alpha1.KubeletConfiguration{MaxPods: new(int32(50)), CPUCFSQuota: new(false)},
				VPCID:          new(99),
			},
			want: v1.LinodeNodeClassSpec{
				RootDiskSizeMB: new(int32(20480)),
				RootDiskLabel:  new("root"),
				DataDisks: []v1.DataDisk{
					{Label: "data", SizeMB: 10240, Filesystem: new("ext3")},
					{Label: "sdd", SizeMB: 2048, Filesystem: new("raw")},
				},
				Kernel:         new("linode/latest-64bit"),
				PlacementGroup: &v1.PlacementGroupSelector{ID: new(7), RequireCompliance: new(true)},
				Kubelet:        &v1.KubeletConfiguration{MaxPods: new(int32(50)), CPUCFSQuota: new(false)},
				VPC:            &v1.VPCConfiguration{VPCID: new(99)},
			},
			// The boot disk's ext4 is what Linode makes anyway; the disks land on other devices.
			carried: true,
		},
		{
			name: "IPv6 of the VPC interface",
			alpha: v1alpha1.LinodeNodeClassSpec{
				VPCID:       new(99),
				IPv6Options: &v1alpha1.IPv6Options{EnableSLAAC: new(true), EnableRanges: new(false), IsPublicIPv6: new(true)},
			},
			want: v1.LinodeNodeClassSpec{Interfaces: []v1.NetworkInterface{
				{Public: &v1.PublicInterface{}},
				{VPC: &v1.VPCInterface{
					VPCConfiguration: v1.VPCConfiguration{VPCID: new(99)},
					IPv6:             &v1.VPCIPv6{SLAAC: new(true), Range: new(false), Public: new(true)},
				}},
			}},
		},
		{
			name:  "a kubelet's CFS quota alone",
			alpha: v1alpha1.LinodeNodeClassSpec{Kubelet: &v1alpha1.KubeletConfiguration{CPUCFSQuota: new(true)}},
			want:  v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{CPUCFSQuota: new(true)}},
		},
		{
			name: "settings that act on nothing",
			alpha: v1alpha1.LinodeNodeClassSpec{
				VPCID:         new(99),
				IPv6Options:   &v1alpha1.IPv6Options{EnableSLAAC: new(false)},
				Configuration: &v1alpha1.InstanceConfiguration{},
				OSDisk:        &v1alpha1.InstanceDisk{Size: quantity("20Gi"), DiskID: new(3)},
			},
			want: v1.LinodeNodeClassSpec{
				RootDiskSizeMB: new(int32(20480)),
				VPC:            &v1.VPCConfiguration{VPCID: new(99)},
			},
			unmapped: []string{"spec.configuration", "spec.ipv6Options", "spec.osDisk.diskID"},
			carried:  true,
		},
		{
			name:  "a disk size that is no whole number of MiB is rounded down, and reads back as written",
			alpha: v1alpha1.LinodeNodeClassSpec{OSDisk: &v1alpha1.InstanceDisk{Size: quantity("20G")}},
			want:  v1.LinodeNodeClassSpec{RootDiskSizeMB: new(int32(19073))}, carried: true,
		},
		{
			name:  "a duration that v1 writes in another form reads back as written",
			alpha: v1alpha1.LinodeNodeClassSpec{Kubelet: &v1alpha1.KubeletConfiguration{EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"memory.available": "60s"}}},
			want: v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{
				EvictionSoft:            map[string]v1.EvictionThreshold{"memory.available": "1Gi"},
				EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: time.Minute}},
			}},
			carried: true,
		},
		{
			name:     "a grace period that is not a duration",
			alpha:    v1alpha1.LinodeNodeClassSpec{Kubelet: &v1alpha1.KubeletConfiguration{EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"memory.available": "soon"}}},
			want:     v1.LinodeNodeClassSpec{Kubelet: &v1.KubeletConfiguration{EvictionSoft: map[string]v1.EvictionThreshold{"memory.available": "1Gi"}}},
			unmapped: []string{"spec.kubelet.evictionSoftGracePeriod"},
			carried:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alpha := alphaClass(tt.alpha)
			hub := toV1(t, alpha)
			if !equality.Semantic.DeepEqual(hub.Spec, tt.want) {
				t.Errorf("v1 spec differs (-want +got):\n%s", diff.Diff(tt.want, hub.Spec))
			}
			if _, ok := hub.Annotations[v1alpha1.AnnotationV1Alpha1Fields]; ok != tt.carried {
				t.Errorf("annotation %s present = %v, want %v: %v", v1alpha1.AnnotationV1Alpha1Fields, ok, tt.carried, hub.Annotations)
			}
			if hub.Labels["team"] != "a" || hub.Annotations["note"] != "kept" {
				t.Errorf("labels and annotations were not kept: %v %v", hub.Labels, hub.Annotations)
			}
			if got := v1alpha1.UnmappedFields(hub); !equality.Semantic.DeepEqual(got, tt.unmapped) {
				t.Errorf("UnmappedFields = %v, want %v", got, tt.unmapped)
			}
			back := fromV1(t, hub)
			if !equality.Semantic.DeepEqual(back, alpha) {
				t.Errorf("v1alpha1 reads back changed (-wrote +read):\n%s", diff.Diff(alpha, back))
			}
		})
	}
}

// TestConversionFromV1: a class written as v1 reads as v1alpha1 with what v1alpha1 can show, and
// a v1alpha1 client that writes it back (annotation included, as kubectl apply and
// read-modify-write clients do) keeps the v1 fields it cannot see.
func TestConversionFromV1(t *testing.T) {
	hub := &v1.LinodeNodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "instances"},
		Spec: v1.LinodeNodeClassSpec{
			Tags: []v1.Tag{"team:a"}, FirewallID: new(5), Image: new("linode/ubuntu24.04"),
			UpdateStrategy: new(v1.UpdateStrategyOnRecycle), PrivateIP: new(true), UserData: new("#cloud-config\n"),
			VPC:            &v1.VPCConfiguration{SubnetID: new(42)},
			PlacementGroup: &v1.PlacementGroupSelector{Label: new("web"), Policy: new("flexible"), RequireCompliance: new(true)},
			RootDiskSizeMB: new(int32(30720)),
			Kubelet:        &v1.KubeletConfiguration{MaxPods: new(int32(80)), ImageGCHighThresholdPercent: new(int32(85))},
		},
		Status: v1.LinodeNodeClassStatus{
			Conditions: []status.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Unix(1700000000, 0)}},
			Image:      &v1.ResolvedImage{ID: "linode/ubuntu24.04", Label: "Ubuntu 24.04"},
			Firewall:   &v1.ResolvedFirewall{ID: 5},
		},
	}
	alpha := fromV1(t, hub)
	want := v1alpha1.LinodeNodeClassSpec{
		Tags: []string{"team:a"}, FirewallID: new(5), Image: new("linode/ubuntu24.04"),
		OSDisk:  &v1alpha1.InstanceDisk{Size: quantity("30Gi")},
		Kubelet: &v1alpha1.KubeletConfiguration{MaxPods: new(int32(80))},
	}
	if !equality.Semantic.DeepEqual(alpha.Spec, want) {
		t.Errorf("v1alpha1 spec differs (-want +got):\n%s", diff.Diff(want, alpha.Spec))
	}
	wantStatus := v1alpha1.LinodeNodeClassStatus{
		Conditions:   hub.Status.Conditions,
		LinodeImages: []v1alpha1.LinodeImage{{ID: "linode/ubuntu24.04", Label: "Ubuntu 24.04"}},
	}
	if !equality.Semantic.DeepEqual(alpha.Status, wantStatus) {
		t.Errorf("v1alpha1 status differs (-want +got):\n%s", diff.Diff(wantStatus, alpha.Status))
	}
	var carried struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal([]byte(alpha.Annotations[v1alpha1.AnnotationV1Fields]), &carried); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"updateStrategy", "privateIP", "userData", "vpc", "placementGroup", "kubelet"} {
		if _, ok := carried.Spec[field]; !ok {
			t.Errorf("v1 field %s is not carried on the v1alpha1 view: %v", field, alpha.Annotations)
		}
	}
	if back := toV1(t, alpha); !equality.Semantic.DeepEqual(back.Spec, hub.Spec) || len(back.Annotations) != 0 {
		t.Errorf("a v1alpha1 client writing the class back changes it (-v1 +after):\n%s", diff.Diff(hub.Spec, back.Spec))
	}

	// A v1alpha1 client that edits a field keeps its edit, even where the v1 value it replaces
	// was carried.
	edited := alpha.DeepCopy()
	edited.Spec.PlacementGroup = &v1alpha1.PlacementGroup{ID: 9}
	edited.Spec.Kubelet.MaxPods = new(int32(40))
	after := toV1(t, edited)
	if pg := after.Spec.PlacementGroup; pg == nil || pg.ID == nil || *pg.ID != 9 || pg.Label != nil {
		t.Errorf("placementGroup after a v1alpha1 edit = %+v, want id 9 alone", pg)
	}
	if k := after.Spec.Kubelet; k == nil || *k.MaxPods != 40 || k.ImageGCHighThresholdPercent != nil {
		t.Errorf("kubelet after a v1alpha1 edit = %+v, want maxPods 40 alone", k)
	}
	if !equality.Semantic.DeepEqual(after.Spec.VPC, hub.Spec.VPC) || !equality.Semantic.DeepEqual(after.Spec.UserData, hub.Spec.UserData) {
		t.Errorf("an edit of other fields lost vpc or userData: %+v", after.Spec)
	}
}

// TestV1FieldsWithAnAlphaFormReadAsAlpha: a v1alpha1 client sees the v1 fields that the alpha
// provider had, in its form, and only what the alpha form cannot say is carried.
func TestV1FieldsWithAnAlphaFormReadAsAlpha(t *testing.T) {
	hub := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "instances"}, Spec: v1.LinodeNodeClassSpec{
		RootDiskSizeMB: new(int32(20480)), RootDiskLabel: new("root"),
		DataDisks: []v1.DataDisk{
			{Label: "containerd", SizeMB: 40960, Filesystem: new("ext4")},
			{Label: "scratch", SizeMB: 1024, Filesystem: new("raw")},
		},
		Kernel:         new("linode/grub2"),
		PlacementGroup: &v1.PlacementGroupSelector{ID: new(7), RequireCompliance: new(true)},
		Kubelet:        &v1.KubeletConfiguration{CPUCFSQuota: new(false)},
		Interfaces: []v1.NetworkInterface{
			{Public: &v1.PublicInterface{}},
			{VPC: &v1.VPCInterface{VPCConfiguration: v1.VPCConfiguration{VPCID: new(3)}, IPv6: &v1.VPCIPv6{Range: new(true)}}},
		},
	}}
	alpha := fromV1(t, hub)
	want := v1alpha1.LinodeNodeClassSpec{
		OSDisk: &v1alpha1.InstanceDisk{Size: quantity("20Gi"), Label: new("root")},
		DataDisks: &v1alpha1.InstanceDisks{
			SDB: &v1alpha1.InstanceDisk{Size: quantity("40Gi"), Label: new("containerd"), Filesystem: new("ext4")},
			SDC: &v1alpha1.InstanceDisk{Size: quantity("1Gi"), Label: new("scratch"), Filesystem: new("raw")},
		},
		Configuration:  &v1alpha1.InstanceConfiguration{Kernel: new("linode/grub2")},
		PlacementGroup: &v1alpha1.PlacementGroup{ID: 7, CompliantOnly: new(true)},
		Kubelet:        &v1alpha1.KubeletConfiguration{CPUCFSQuota: new(false)},
		VPCID:          new(3),
		IPv6Options:    &v1alpha1.IPv6Options{EnableRanges: new(true)},
	}
	if !equality.Semantic.DeepEqual(alpha.Spec, want) {
		t.Errorf("v1alpha1 spec differs (-want +got):\n%s", diff.Diff(want, alpha.Spec))
	}
	if carried, ok := alpha.Annotations[v1alpha1.AnnotationV1Fields]; ok {
		t.Errorf("fields with an alpha form are carried as well: %s", carried)
	}

	// A mount path, a firewall on an interface: the alpha form cannot say them, so the v1alpha1
	// view carries the v1 fields and a client writing it back keeps them.
	hub.Spec.DataDisks[0].MountPath = new("/var/lib/containerd")
	hub.Spec.InterfaceGeneration = new(v1.InterfaceGenerationLinode)
	hub.Spec.Interfaces[1].FirewallID = new(12)
	alpha = fromV1(t, hub)
	if alpha.Spec.DataDisks != nil || alpha.Spec.VPCID != nil || alpha.Spec.IPv6Options != nil {
		t.Errorf("the v1alpha1 view shows in part what it cannot say: dataDisks %+v, vpcID %v, ipv6Options %+v", alpha.Spec.DataDisks, alpha.Spec.VPCID, alpha.Spec.IPv6Options)
	}
	if back := toV1(t, alpha); !equality.Semantic.DeepEqual(back.Spec, hub.Spec) {
		t.Errorf("a v1alpha1 client writing the class back changes it (-v1 +after):\n%s", diff.Diff(hub.Spec, back.Spec))
	}
}

// TestV1EditsWinOverCarriedAlphaFields: once a v1 client changes the field a carried alpha
// field maps to, the v1alpha1 view shows the change, and the stale carried value is no longer
// reported.
func TestV1EditsWinOverCarriedAlphaFields(t *testing.T) {
	hub := toV1(t, alphaClass(v1alpha1.LinodeNodeClassSpec{
		OSDisk:        &v1alpha1.InstanceDisk{Size: quantity("20Gi"), Filesystem: new("ext4"), DiskID: new(4)},
		Configuration: &v1alpha1.InstanceConfiguration{},
	}))
	if got := v1alpha1.UnmappedFields(hub); !equality.Semantic.DeepEqual(got, []string{"spec.configuration", "spec.osDisk.diskID"}) {
		t.Fatalf("UnmappedFields = %v", got)
	}
	hub.Spec.RootDiskSizeMB = new(int32(40960))
	alpha := fromV1(t, hub)
	want := &v1alpha1.InstanceDisk{Size: quantity("40Gi")}
	if !equality.Semantic.DeepEqual(alpha.Spec.OSDisk, want) || alpha.Spec.Configuration == nil {
		t.Errorf("v1alpha1 view after a v1 edit: osDisk %+v (want %+v), configuration %v (want kept)", alpha.Spec.OSDisk, want, alpha.Spec.Configuration)
	}
	if got := v1alpha1.UnmappedFields(hub); !equality.Semantic.DeepEqual(got, []string{"spec.configuration"}) {
		t.Errorf("UnmappedFields after a v1 edit = %v, want only spec.configuration", got)
	}
	delete(hub.Annotations, v1alpha1.AnnotationV1Alpha1Fields)
	if got := v1alpha1.UnmappedFields(hub); got != nil {
		t.Errorf("UnmappedFields without the annotation = %v", got)
	}
}

func TestStatusToV1(t *testing.T) {
	conditions := []status.Condition{{Type: "ValidationSucceeded", Status: metav1.ConditionTrue, Reason: "ValidationSucceeded", LastTransitionTime: metav1.Unix(1700000000, 0)}}
	alpha := alphaClass(v1alpha1.LinodeNodeClassSpec{})
	alpha.Status = v1alpha1.LinodeNodeClassStatus{Conditions: conditions, LinodeImages: []v1alpha1.LinodeImage{
		{ID: "linode/ubuntu22.04", Label: "Ubuntu 22.04", Requirements: []corev1.NodeSelectorRequirement{{Key: "k", Operator: corev1.NodeSelectorOpExists}}},
		{ID: "linode/debian12"},
	}}
	hub := toV1(t, alpha)
	want := v1.LinodeNodeClassStatus{Conditions: conditions, Image: &v1.ResolvedImage{ID: "linode/ubuntu22.04", Label: "Ubuntu 22.04"}}
	if !equality.Semantic.DeepEqual(hub.Status, want) {
		t.Errorf("v1 status differs (-want +got):\n%s", diff.Diff(want, hub.Status))
	}
}

// TestRandomRoundTrips converts random objects both ways and back: nothing a client wrote, in
// either version, is lost or altered (status aside, which the controller owns and rewrites).
func TestRandomRoundTrips(t *testing.T) {
	seed := time.Now().UnixNano()
	filler := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<42)-1<<20, []resource.Format{resource.BinarySI, resource.DecimalSI}[c.Intn(2)])
		},
		func(d *metav1.Duration, c randfill.Continue) { d.Duration = time.Duration(c.Int63n(1<<50) - 1<<40) },
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(1<<32), 0) },
		func(s *map[string]string, c randfill.Continue) {
			// Grace periods are durations more often than not.
			*s = map[string]string{c.String(5): []string{c.String(4), "90s", "1h", "5m0s"}[c.Intn(4)]}
		},
	)
	for i := range 500 {
		alpha := &v1alpha1.LinodeNodeClass{}
		filler.Fill(&alpha.ObjectMeta)
		filler.Fill(&alpha.Spec)
		hub := toV1(t, alpha)
		if back := fromV1(t, hub); !equality.Semantic.DeepEqual(back.ObjectMeta, alpha.ObjectMeta) || !equality.Semantic.DeepEqual(back.Spec, alpha.Spec) {
			t.Fatalf("seed %d, round %d: v1alpha1 -> v1 -> v1alpha1 changed the object (-wrote +read):\n%s", seed, i, diff.Diff(alpha, back))
		}

		hub = &v1.LinodeNodeClass{}
		filler.Fill(&hub.ObjectMeta)
		filler.Fill(&hub.Spec)
		if back := toV1(t, fromV1(t, hub)); !equality.Semantic.DeepEqual(back.ObjectMeta, hub.ObjectMeta) || !equality.Semantic.DeepEqual(back.Spec, hub.Spec) {
			t.Fatalf("seed %d, round %d: v1 -> v1alpha1 -> v1 changed the object (-wrote +read):\n%s", seed, i, diff.Diff(hub, back))
		}
	}
}
