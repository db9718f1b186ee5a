package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/samber/lo"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Annotations that carry, through a conversion, the spec fields the other version has no place
// for. Their value is JSON: {"spec": {"<field>": <value>, ...}}.
const (
	// AnnotationV1Alpha1Fields is kept on the stored (v1) object: the v1alpha1 fields that v1
	// cannot express. Reading the object as v1alpha1 puts each back as long as it still agrees
	// with the v1 spec; deleting the annotation drops them for good.
	AnnotationV1Alpha1Fields = apis.Group + "/v1alpha1-fields"
	// AnnotationV1Fields is shown on the v1alpha1 view of an object: the v1 fields that v1alpha1
	// cannot express, so that a v1alpha1 client writing the object back does not erase them.
	AnnotationV1Fields = apis.Group + "/v1-fields"
)

// ConvertTo converts the class to v1, the storage version.
func (in *LinodeNodeClass) ConvertTo(hub conversion.Hub) error {
	dst, ok := hub.(*v1.LinodeNodeClass)
	if !ok {
		return fmt.Errorf("a v1alpha1 LinodeNodeClass converts to a v1 LinodeNodeClass, not %T", hub)
	}
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	v1Fields := takeCarried(&dst.ObjectMeta)
	dst.Spec = specToV1(&src.Spec)
	dst.Status = statusToV1(&src.Status)
	restore(&dst.Spec, v1Fields, specFromV1, &src.Spec)
	kept, err := lostFields(&src.Spec, specFromV1(&dst.Spec))
	if err != nil {
		return err
	}
	return putCarried(&dst.ObjectMeta, AnnotationV1Alpha1Fields, kept)
}

// ConvertFrom converts a v1 class to v1alpha1.
func (in *LinodeNodeClass) ConvertFrom(hub conversion.Hub) error {
	src, ok := hub.(*v1.LinodeNodeClass)
	if !ok {
		return fmt.Errorf("a v1alpha1 LinodeNodeClass converts from a v1 LinodeNodeClass, not %T", hub)
	}
	src = src.DeepCopy()
	in.ObjectMeta = src.ObjectMeta
	alphaFields := takeCarried(&in.ObjectMeta)
	in.Spec = specFromV1(&src.Spec)
	in.Status = statusFromV1(&src.Status)
	restore(&in.Spec, alphaFields, specToV1, &src.Spec)
	kept, err := lostFields(&src.Spec, specToV1(&in.Spec))
	if err != nil {
		return err
	}
	return putCarried(&in.ObjectMeta, AnnotationV1Fields, kept)
}

// specToV1 maps every v1alpha1 field that has a v1 home onto it.
func specToV1(in *LinodeNodeClassSpec) v1.LinodeNodeClassSpec {
	out := v1.LinodeNodeClassSpec{
		FirewallID:      in.FirewallID,
		Kubelet:         kubeletToV1(in.Kubelet),
		LKEK8sVersion:   in.LKEK8sVersion,
		Image:           in.Image,
		AuthorizedKeys:  in.AuthorizedKeys,
		AuthorizedUsers: in.AuthorizedUsers,
		BackupsEnabled:  in.BackupsEnabled,
		SwapSizeMB:      toInt32(in.SwapSize),
		RootDiskSizeMB:  diskSizeMB(in.OSDisk),
		DataDisks:       dataDisksToV1(in.DataDisks),
	}
	for _, tag := range in.Tags {
		out.Tags = append(out.Tags, v1.Tag(tag))
	}
	if in.DiskEncryption != nil {
		out.DiskEncryption = new(v1.DiskEncryption(*in.DiskEncryption))
	}
	if in.OSDisk != nil {
		out.RootDiskLabel = in.OSDisk.Label
	}
	if in.Configuration != nil {
		out.Kernel = in.Configuration.Kernel
	}
	if in.PlacementGroup != nil {
		out.PlacementGroup = &v1.PlacementGroupSelector{ID: new(in.PlacementGroup.ID), RequireCompliance: in.PlacementGroup.CompliantOnly}
	}
	out.VPC, out.Interfaces = vpcToV1(in.VPCID, in.IPv6Options)
	return out
}

// vpcToV1 maps the alpha VPC, chosen by id, with the IPv6 options of its interface. v1 gives a
// VPC interface IPv6 only in interfaces, where the alpha layout is a public interface and the
// VPC's, as spec.vpc gives without IPv6.
func vpcToV1(vpcID *int, ipv6 *IPv6Options) (*v1.VPCConfiguration, []v1.NetworkInterface) {
	if vpcID == nil {
		return nil, nil
	}
	vpc := v1.VPCConfiguration{VPCID: vpcID}
	if ipv6 == nil || (!lo.FromPtr(ipv6.EnableSLAAC) && !lo.FromPtr(ipv6.EnableRanges)) {
		return &vpc, nil
	}
	return nil, []v1.NetworkInterface{
		{Public: &v1.PublicInterface{}},
		{VPC: &v1.VPCInterface{VPCConfiguration: vpc, IPv6: &v1.VPCIPv6{SLAAC: ipv6.EnableSLAAC, Range: ipv6.EnableRanges, Public: ipv6.IsPublicIPv6}}},
	}
}

// vpcFromV1 is the alpha form of a VPC chosen by id alone, with nothing but the IPv6 of its
// interface set, beside a plain public interface; nil for any other network layout.
func vpcFromV1(in *v1.LinodeNodeClassSpec) (*int, *IPv6Options) {
	plain := func(vpc v1.VPCConfiguration) bool {
		return vpc.VPCID != nil && equality.Semantic.DeepEqual(vpc, v1.VPCConfiguration{VPCID: vpc.VPCID})
	}
	if in.VPC != nil && plain(*in.VPC) {
		return in.VPC.VPCID, nil
	}
	if in.InterfaceGeneration != nil || len(in.Interfaces) != 2 {
		return nil, nil
	}
	public, vpc := in.Interfaces[0], in.Interfaces[1]
	if !equality.Semantic.DeepEqual(public, v1.NetworkInterface{Public: &v1.PublicInterface{}}) || vpc.VPC == nil || vpc.VPC.IPv6 == nil ||
		!equality.Semantic.DeepEqual(vpc, v1.NetworkInterface{VPC: &v1.VPCInterface{VPCConfiguration: vpc.VPC.VPCConfiguration, IPv6: vpc.VPC.IPv6}}) ||
		!plain(vpc.VPC.VPCConfiguration) {
		return nil, nil
	}
	ipv6 := vpc.VPC.IPv6
	return vpc.VPC.VPCID, &IPv6Options{EnableSLAAC: ipv6.SLAAC, EnableRanges: ipv6.Range, IsPublicIPv6: ipv6.Public}
}

// dataDiskDevices are the alpha data disks' devices, in the order v1 lists the disks.
func dataDiskDevices(disks *InstanceDisks) []**InstanceDisk {
	return []**InstanceDisk{&disks.SDB, &disks.SDC, &disks.SDD, &disks.SDE, &disks.SDF, &disks.SDG, &disks.SDH}
}

var dataDiskDeviceNames = []string{"sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh"}

// dataDisksToV1 lists the alpha data disks by device. v1 finds a disk by its label, so a disk
// without one is labelled by its device; a disk of less than a MiB has no v1 size.
func dataDisksToV1(in *InstanceDisks) []v1.DataDisk {
	if in == nil {
		return nil
	}
	var out []v1.DataDisk
	for i, device := range dataDiskDevices(in) {
		disk := *device
		size := diskSizeMB(disk)
		if size == nil || *size == 0 {
			continue
		}
		out = append(out, v1.DataDisk{Label: lo.FromPtrOr(disk.Label, dataDiskDeviceNames[i]), SizeMB: *size, Filesystem: disk.Filesystem})
	}
	return out
}

// dataDisksFromV1 puts the disks on the alpha devices in order; nil when there are more disks
// than devices, or a disk mounted where the alpha form cannot say.
func dataDisksFromV1(in []v1.DataDisk) *InstanceDisks {
	out := &InstanceDisks{}
	devices := dataDiskDevices(out)
	if len(in) == 0 || len(in) > len(devices) {
		return nil
	}
	for i, disk := range in {
		if disk.MountPath != nil {
			return nil
		}
		*devices[i] = &InstanceDisk{
			Size:       *resource.NewQuantity(int64(disk.SizeMB)<<20, resource.BinarySI),
			Label:      new(disk.Label),
			Filesystem: disk.Filesystem,
		}
	}
	return out
}

// specFromV1 maps every v1 field that has a v1alpha1 home onto it.
func specFromV1(in *v1.LinodeNodeClassSpec) LinodeNodeClassSpec {
	out := LinodeNodeClassSpec{
		FirewallID:      in.FirewallID,
		Kubelet:         kubeletFromV1(in.Kubelet),
		LKEK8sVersion:   in.LKEK8sVersion,
		Image:           in.Image,
		AuthorizedKeys:  in.AuthorizedKeys,
		AuthorizedUsers: in.AuthorizedUsers,
		BackupsEnabled:  in.BackupsEnabled,
	}
	for _, tag := range in.Tags {
		out.Tags = append(out.Tags, string(tag))
	}
	if in.DiskEncryption != nil {
		out.DiskEncryption = new(string(*in.DiskEncryption))
	}
	if in.SwapSizeMB != nil {
		out.SwapSize = new(int(*in.SwapSizeMB))
	}
	if in.RootDiskSizeMB != nil {
		out.OSDisk = &InstanceDisk{Size: *resource.NewQuantity(int64(*in.RootDiskSizeMB)<<20, resource.BinarySI), Label: in.RootDiskLabel}
	}
	if in.Kernel != nil {
		out.Configuration = &InstanceConfiguration{Kernel: in.Kernel}
	}
	if in.PlacementGroup != nil && in.PlacementGroup.ID != nil {
		out.PlacementGroup = &PlacementGroup{ID: *in.PlacementGroup.ID, CompliantOnly: in.PlacementGroup.RequireCompliance}
	}
	out.DataDisks = dataDisksFromV1(in.DataDisks)
	out.VPCID, out.IPv6Options = vpcFromV1(in)
	return out
}

// diskSizeMB is the disk's size in whole MiB, rounded down, as Linode sizes disks.
func diskSizeMB(disk *InstanceDisk) *int32 {
	if disk == nil || disk.Size.Sign() <= 0 {
		return nil
	}
	return toInt32(new(int(disk.Size.Value() >> 20)))
}

func toInt32(n *int) *int32 {
	if n == nil || *n < math.MinInt32 || *n > math.MaxInt32 {
		return nil
	}
	return new(int32(*n))
}

func kubeletToV1(in *KubeletConfiguration) *v1.KubeletConfiguration {
	if in == nil {
		return nil
	}
	out := &v1.KubeletConfiguration{
		MaxPods:                   in.MaxPods,
		PodsPerCore:               in.PodsPerCore,
		KubeReserved:              convertMap[v1.ReservedQuantity](in.KubeReserved),
		SystemReserved:            convertMap[v1.ReservedQuantity](in.SystemReserved),
		EvictionHard:              convertMap[v1.EvictionThreshold](in.EvictionHard),
		EvictionSoft:              convertMap[v1.EvictionThreshold](in.EvictionSoft),
		EvictionMaxPodGracePeriod: in.EvictionMaxPodGracePeriod,
		ClusterDNS:                in.ClusterDNS,
		CPUCFSQuota:               in.CPUCFSQuota,
	}
	for signal, period := range in.EvictionSoftGracePeriod {
		// A period that is not a duration has no v1 form; the whole kubelet field is then
		// carried in the annotation, and the signal reported as unmapped.
		if d, err := time.ParseDuration(period); err == nil {
			if out.EvictionSoftGracePeriod == nil {
				out.EvictionSoftGracePeriod = map[string]metav1.Duration{}
			}
			out.EvictionSoftGracePeriod[signal] = metav1.Duration{Duration: d}
		}
	}
	if equality.Semantic.DeepEqual(out, &v1.KubeletConfiguration{}) {
		return nil
	}
	return out
}

func kubeletFromV1(in *v1.KubeletConfiguration) *KubeletConfiguration {
	if in == nil {
		return nil
	}
	out := &KubeletConfiguration{
		ClusterDNS:                in.ClusterDNS,
		MaxPods:                   in.MaxPods,
		PodsPerCore:               in.PodsPerCore,
		SystemReserved:            convertMap[string](in.SystemReserved),
		KubeReserved:              convertMap[string](in.KubeReserved),
		EvictionHard:              convertMap[string](in.EvictionHard),
		EvictionSoft:              convertMap[string](in.EvictionSoft),
		EvictionMaxPodGracePeriod: in.EvictionMaxPodGracePeriod,
		CPUCFSQuota:               in.CPUCFSQuota,
	}
	for signal, period := range in.EvictionSoftGracePeriod {
		if out.EvictionSoftGracePeriod == nil {
			out.EvictionSoftGracePeriod = map[string]string{}
		}
		out.EvictionSoftGracePeriod[signal] = period.Duration.String()
	}
	if equality.Semantic.DeepEqual(out, &KubeletConfiguration{}) {
		return nil
	}
	return out
}

func convertMap[To, From ~string](in map[string]From) map[string]To {
	if in == nil {
		return nil
	}
	out := make(map[string]To, len(in))
	for key, value := range in {
		out[key] = To(value)
	}
	return out
}

// statusToV1 keeps the conditions and the first resolved image. The controller rewrites the v1
// status, so the rest of an alpha status has no use and is not carried.
func statusToV1(in *LinodeNodeClassStatus) v1.LinodeNodeClassStatus {
	out := v1.LinodeNodeClassStatus{Conditions: in.Conditions}
	if len(in.LinodeImages) > 0 {
		out.Image = &v1.ResolvedImage{ID: in.LinodeImages[0].ID, Label: in.LinodeImages[0].Label}
	}
	return out
}

func statusFromV1(in *v1.LinodeNodeClassStatus) LinodeNodeClassStatus {
	out := LinodeNodeClassStatus{Conditions: in.Conditions}
	if in.Image != nil {
		out.LinodeImages = []LinodeImage{{ID: in.Image.ID, Label: in.Image.Label}}
	}
	return out
}

// carried is the value of AnnotationV1Alpha1Fields and AnnotationV1Fields.
type carried struct {
	Spec map[string]json.RawMessage `json:"spec,omitempty"`
}

// takeCarried removes both carrying annotations from meta and returns the spec fields of the
// one the other version wrote: each conversion writes its own afresh.
func takeCarried(meta *metav1.ObjectMeta) map[string]json.RawMessage {
	var value string
	for _, key := range []string{AnnotationV1Alpha1Fields, AnnotationV1Fields} {
		if v, ok := meta.Annotations[key]; ok {
			value = v
			delete(meta.Annotations, key)
		}
	}
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
	return carriedFields(value)
}

// carriedFields parses a carrying annotation. A value that is not ours (edited by hand beyond
// recognition) carries nothing, rather than failing the conversion, which would make every
// LinodeNodeClass unreadable.
func carriedFields(value string) map[string]json.RawMessage {
	var c carried
	if value == "" || json.Unmarshal([]byte(value), &c) != nil {
		return nil
	}
	return c.Spec
}

func putCarried(meta *metav1.ObjectMeta, key string, spec map[string]json.RawMessage) error {
	if len(spec) == 0 {
		return nil
	}
	value, err := json.Marshal(carried{Spec: spec})
	if err != nil {
		return err
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = string(value)
	return nil
}

// lostFields returns the top-level fields of spec whose JSON differs in roundTripped, the spec
// converted to the other version and back: what the conversion cannot carry by mapping. A field
// that only roundTripped has is returned as null, so that putting it back removes it.
func lostFields(spec, roundTripped any) (map[string]json.RawMessage, error) {
	want, err := jsonFields(spec)
	if err != nil {
		return nil, err
	}
	got, err := jsonFields(roundTripped)
	if err != nil {
		return nil, err
	}
	lost := map[string]json.RawMessage{}
	for name, value := range want {
		if !bytes.Equal(value, got[name]) {
			lost[name] = value
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			lost[name] = json.RawMessage("null")
		}
	}
	return lost, nil
}

// restore puts each carried field back into spec, the conversion of source, unless that makes
// spec convert to something source does not say: a field the other version has no place for
// always comes back, a mapped one only while it still agrees with source. So a field that the
// other version's client changed since keeps the change.
func restore[T, Other any](spec *T, fields map[string]json.RawMessage, convert func(*T) Other, source *Other) {
	want, err := jsonFields(source)
	if err != nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		candidate, err := withField(spec, name, fields[name])
		if err != nil {
			continue
		}
		before, errBefore := jsonFields(new(convert(spec)))
		after, errAfter := jsonFields(new(convert(candidate)))
		if errBefore != nil || errAfter != nil {
			continue
		}
		agrees := true
		for field := range maps.Keys(mergeKeys(before, after)) {
			agrees = agrees && (bytes.Equal(after[field], before[field]) || bytes.Equal(after[field], want[field]))
		}
		if agrees {
			*spec = *candidate
		}
	}
}

func mergeKeys(a, b map[string]json.RawMessage) map[string]json.RawMessage {
	merged := maps.Clone(a)
	maps.Copy(merged, b)
	return merged
}

// withField returns a copy of spec with its top-level JSON field name set to value, or removed
// when value is null.
func withField[T any](spec *T, name string, value json.RawMessage) (*T, error) {
	fields, err := jsonFields(spec)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(value, []byte("null")) {
		delete(fields, name)
	} else {
		fields[name] = value
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	out := new(T)
	return out, json.Unmarshal(data, out)
}

func jsonFields(v any) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	return fields, json.Unmarshal(data, &fields)
}
