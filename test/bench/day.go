package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// dayScenario names the day's rows.
const dayScenario = "A day"

// Labels the day puts on the pods it plays: the workload a pod belongs to, and the run of a
// CronJob a pod runs in.
const (
	dayWorkloadLabel = "bench.karpenter.k8s.linode/workload"
	dayRunLabel      = "bench.karpenter.k8s.linode/run"
	dayRolloutKey    = "bench.karpenter.k8s.linode/rollout"
)

// dayNodePool names the NodePool and node class the day's pods run on.
const dayNodePool = "day"

// dayRun says how the day scenario plays its trace: how long the day lasts on the clock, and on
// which providers, side by side.
type dayRun struct {
	length    time.Duration
	providers []harness.Provider
	// sample is how often, in the day's time, the lower bound is sampled (defaultDaySample when
	// zero).
	sample time.Duration
}

// The day's timers on Linode, which the scenario scales with the day: an LKE node from create to
// running (the emulator's delays, as measured on Linode), and the README NodePool's
// consolidateAfter, read from examples/default.yaml.
const linodeBootOnLinode = 160 * time.Second

// dayTimers are the timers in effect, each the real one divided by the compression.
type dayTimers struct {
	// compression is how many seconds of the day pass in a second on the clock.
	compression float64
	// boot is a node's time from create to registered, consolidateAfter the NodePool's.
	boot, consolidateAfter time.Duration
	// readmeConsolidateAfter is the README's, before scaling.
	readmeConsolidateAfter time.Duration
}

func newDayTimers(length time.Duration, readme *karpv1.NodePool) dayTimers {
	t := dayTimers{compression: float64(Day) / float64(length)}
	if after := readme.Spec.Disruption.ConsolidateAfter.Duration; after != nil {
		t.readmeConsolidateAfter = *after
	}
	// Both the NodePool's consolidateAfter and kwok's registration delay are whole seconds.
	t.boot = max(time.Second, t.clock(linodeBootOnLinode).Round(time.Second))
	t.consolidateAfter = max(time.Second, t.clock(t.readmeConsolidateAfter).Round(time.Second))
	return t
}

// clock is how long a duration of the day lasts on the clock.
func (t dayTimers) clock(d time.Duration) time.Duration {
	return time.Duration(float64(d) / t.compression)
}

// dayOf is how long a duration on the clock lasts in the day.
func (t dayTimers) dayOf(d time.Duration) time.Duration {
	return time.Duration(float64(d) * t.compression)
}

// dayRecord is what one provider's cluster did over the day.
type dayRecord struct {
	provider harness.Provider
	// start and end are the day's midnights on the clock.
	start, end time.Time
	pods       []harness.PodLife
	claims     []harness.ClaimLife
	// late is the most an event of the trace was applied after its time, on the clock: a
	// machine too busy to play the day on time says so here.
	late time.Duration
	// warmUp is how long the midnight workloads took to run before the clock started.
	warmUp time.Duration
}

// dayInput is everything the day needs that does not depend on the provider.
type dayInput struct {
	trace    *DayTrace
	objects  []traceObject
	midnight []int32
	events   []dayEvent
	readme   *karpv1.NodePool
	timers   dayTimers
	// sample is how often, in the day's time, the lower bound and the plot are sampled.
	sample time.Duration
	// instanceTypes are the plans the README's NodePool allows, as the controller describes them
	// in each mode.
	instanceTypes map[mode.Mode][]*cloudprovider.InstanceType
}

// loadDayInput reads the trace (tracePath, or the default one) and the README's NodePool, and
// the plans it allows as the controller describes them.
func loadDayInput(ctx context.Context, tracePath string, run dayRun) (*dayInput, error) {
	if tracePath == "" {
		var err error
		if tracePath, err = shared.RepositoryFile(defaultTraceFile); err != nil {
			return nil, err
		}
	}
	trace, err := LoadDayTrace(tracePath)
	if err != nil {
		return nil, err
	}
	objects, err := trace.objects()
	if err != nil {
		return nil, err
	}
	in := &dayInput{trace: trace, objects: objects, instanceTypes: map[mode.Mode][]*cloudprovider.InstanceType{}, sample: run.sample}
	if in.sample == 0 {
		in.sample = defaultDaySample
	}
	in.midnight, in.events = trace.schedule(objects)
	path, err := shared.RepositoryFile(defaultNodePoolFile)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if in.readme, err = decodeNodePool(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.timers = newDayTimers(run.length, in.readme)
	for _, m := range mode.All {
		if in.instanceTypes[m], err = allowedInstanceTypes(ctx, m, in.readme); err != nil {
			return nil, fmt.Errorf("the plans of %s in %s mode: %w", defaultNodePoolFile, m, err)
		}
	}
	return in, nil
}

// allowedInstanceTypes are the region's plans the NodePool allows, as the controller in the mode
// describes them, read from an emulator of Linode's API.
func allowedInstanceTypes(ctx context.Context, m mode.Mode, nodePool *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	emu, err := test.StartEmulator()
	if err != nil {
		return nil, err
	}
	defer func() { _ = emu.Close() }()
	provider := instancetype.NewDefaultProvider(emu.Client, benchRegion, m, cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL),
		instancetype.WithHypervisorMemoryPercent(localcluster.HypervisorMemoryPercent))
	if err := provider.UpdateCatalogue(ctx); err != nil {
		return nil, err
	}
	all, err := provider.List(ctx, &v1.LinodeNodeClass{})
	if err != nil {
		return nil, err
	}
	requirements := corescheduling.NewNodeSelectorRequirementsWithMinValues(nodePool.Spec.Template.Spec.Requirements...)
	return slices.DeleteFunc(all, func(it *cloudprovider.InstanceType) bool {
		return it.Requirements.Intersects(requirements) != nil || it.Offerings.Available().Cheapest() == nil
	}), nil
}

// kwokCatalogue writes, for core's kwok provider (its INSTANCE_TYPES_FILE_PATH), the plans as
// kwok instance types of the same names and prices, each with the capacity that leaves, after
// the 100m CPU and 10Mi kwok reserves on every instance type, the allocatable resources the
// controller reports in LKE mode: both providers then choose among the same nodes at the same
// prices, and one yardstick measures both.
func kwokCatalogue(instanceTypes []*cloudprovider.InstanceType, path string) error {
	type offering struct {
		Price        float64                          `json:"Price"`
		Available    bool                             `json:"Available"`
		Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
	}
	type kwokInstanceType struct {
		Name             string              `json:"name"`
		Offerings        []offering          `json:"offerings"`
		Architecture     string              `json:"architecture"`
		OperatingSystems []corev1.OSName     `json:"operatingSystems"`
		Resources        corev1.ResourceList `json:"resources"`
	}
	var out []kwokInstanceType
	for _, it := range instanceTypes {
		allocatable := it.Allocatable()
		capacity := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
			capacity[name] = allocatable[name].DeepCopy()
		}
		cpu, memory := capacity[corev1.ResourceCPU], capacity[corev1.ResourceMemory]
		cpu.Add(kwokReservedCPU)
		memory.Add(kwokReservedMemory)
		capacity[corev1.ResourceCPU], capacity[corev1.ResourceMemory] = cpu, memory
		out = append(out, kwokInstanceType{
			Name: it.Name, Architecture: karpv1.ArchitectureAmd64, OperatingSystems: []corev1.OSName{corev1.Linux}, Resources: capacity,
			Offerings: []offering{{Price: it.Offerings.Available().Cheapest().Price, Available: true, Requirements: []corev1.NodeSelectorRequirement{
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{benchRegion}},
			}}},
		})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// What core's kwok provider keeps of every instance type (kube-reserved in its cloudprovider).
var (
	kwokReservedCPU    = resource.MustParse("100m")
	kwokReservedMemory = resource.MustParse("10Mi")
)

// runDay plays the trace on a new cluster of each provider, side by side, so that they share the
// machine's load alike, and measures what each did.
func runDay(ctx context.Context, cfg Config, run dayRun) ([]Row, map[string]string, error) {
	in, err := loadDayInput(ctx, cfg.Trace, run)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "karpenter-linode-day-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	catalogue := filepath.Join(dir, "kwok-instance-types.json")
	if err := kwokCatalogue(in.instanceTypes[mode.LKE], catalogue); err != nil {
		return nil, nil, err
	}
	providers := slices.DeleteFunc(slices.Clone(run.providers), func(p harness.Provider) bool { return !cfg.runsWith(p) })
	if len(providers) == 0 {
		return nil, nil, nil
	}
	cfg.Progressf("%s: the %s trace on %s, side by side (a day in %v: %.0f× compressed)", ScenarioDay, in.trace.Name,
		providerList(providers), run.length, in.timers.compression)
	records := make([]dayRecord, len(providers))
	errs := make([]error, len(providers))
	var wg sync.WaitGroup
	for i, provider := range providers {
		wg.Go(func() {
			tune := func(o *localcluster.Options) {
				if provider == harness.Kwok {
					o.ControllerEnv = append(o.ControllerEnv, "INSTANCE_TYPES_FILE_PATH="+catalogue)
				}
			}
			e, err := startEnv(ctx, cfg, provider, in.timers.boot, tune)
			if err == nil {
				records[i], err = e.playDay(ctx, in, run)
				err = errors.Join(err, e.StopAfter(err))
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s, %s provider: %w", ScenarioDay, provider, err)
				cfg.Progressf("  %s: %v", provider, errs[i])
			}
		})
	}
	wg.Wait()
	// The providers whose day played are measured whatever befell the others.
	records = slices.DeleteFunc(records, func(r dayRecord) bool { return r.provider == "" })
	if len(records) == 0 {
		return nil, nil, errors.Join(errs...)
	}
	cfg.Progressf("%s: measuring each day against the lower bound", ScenarioDay)
	days, err := measureDays(in, records)
	if err != nil {
		return nil, nil, errors.Join(append(errs, err)...)
	}
	settings := map[string]string{"Day": in.describe(run, days)}
	if cfg.ReportDir != "" {
		if err := writeDayFiles(cfg.ReportDir, in, days); err != nil {
			return nil, nil, err
		}
		settings["Day"] += fmt.Sprintf(". Side by side in %s; the plot: ![fleet $/h, lower bound and pending pods over the day](%s)", dayTableFile, dayPlotFile)
	}
	return dayRows(days), settings, errors.Join(errs...)
}

func providerList(providers []harness.Provider) string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// playDay creates the day's NodePool and midnight workloads, waits until they run, then plays the
// trace's changes on the compressed clock until the next midnight, and returns what it saw.
func (e *env) playDay(ctx context.Context, in *dayInput, run dayRun) (dayRecord, error) {
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	lifetimes, err := harness.StartLifetimes(watchCtx, e.Cluster.KubeconfigPath)
	if err != nil {
		return dayRecord{}, err
	}
	if err := e.createDayNodePool(ctx, in); err != nil {
		return dayRecord{}, err
	}
	for i, o := range in.objects {
		if err := e.createDayObject(ctx, o, in.midnight[i]); err != nil {
			return dayRecord{}, fmt.Errorf("%s %s: %w", o.kind, o.name, err)
		}
	}
	warmUp := time.Now()
	if err := e.WaitFor(ctx, "the midnight workloads running", 10*time.Minute, func(ctx context.Context) (bool, error) {
		return e.dayWorkloadsRunning(ctx, in)
	}); err != nil {
		return dayRecord{}, err
	}
	record := dayRecord{provider: e.Provider, warmUp: time.Since(warmUp), start: time.Now()}
	e.Config.Progressf("  %s: midnight; the day lasts %v", e.Provider, run.length)
	late, err := e.playEvents(ctx, in, record.start)
	if err != nil {
		return dayRecord{}, err
	}
	record.late = late
	if err := sleepUntil(ctx, record.start.Add(run.length)); err != nil {
		return dayRecord{}, err
	}
	record.end = time.Now()
	if err := e.CheckHealthy(); err != nil {
		return dayRecord{}, err
	}
	record.pods, record.claims = lifetimes.Pods(), lifetimes.Claims()
	return record, nil
}

// playEvents plays the trace's changes, each workload's in order and the workloads' side by side,
// so that one slow request delays no other workload. A workload that fell behind skips to its
// latest replica count. It returns the most an event was played after its time.
func (e *env) playEvents(ctx context.Context, in *dayInput, start time.Time) (time.Duration, error) {
	byWorkload := make([][]dayEvent, len(in.objects))
	for _, event := range in.events {
		byWorkload[event.workload] = append(byWorkload[event.workload], event)
	}
	lates := make([]time.Duration, len(in.objects))
	errs := make([]error, len(in.objects))
	var wg sync.WaitGroup
	for i, events := range byWorkload {
		o := in.objects[i]
		wg.Go(func() {
			for j := 0; j < len(events); j++ {
				event := events[j]
				at := start.Add(in.timers.clock(event.at))
				if errs[i] = sleepUntil(ctx, at); errs[i] != nil {
					return
				}
				for event.kind == eventScale && j+1 < len(events) && events[j+1].kind == eventScale && !time.Now().Before(start.Add(in.timers.clock(events[j+1].at))) {
					j++
					event = events[j]
				}
				if errs[i] = e.applyDayEvent(ctx, o, event); errs[i] != nil {
					errs[i] = fmt.Errorf("%s of %s at %s: %w", event.kind, o.name, TimeOfDay(event.at), errs[i])
					return
				}
				lates[i] = max(lates[i], time.Since(at))
			}
		})
	}
	wg.Wait()
	return slices.Max(lates), errors.Join(errs...)
}

func sleepUntil(ctx context.Context, at time.Time) error {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// createDayNodePool creates the README's NodePool (its requirements and disruption, its
// consolidateAfter scaled to the day; no limits, which would cap the day's peak) for the
// provider's node class: for kwok, a KWOKNodeClass registering nodes after the scaled boot, and
// requirements that keep to the Linode plans of its catalogue.
func (e *env) createDayNodePool(ctx context.Context, in *dayInput) error {
	nodePool := &karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: dayNodePool},
		Spec: karpv1.NodePoolSpec{
			Template:   *in.readme.Spec.Template.DeepCopy(),
			Disruption: *in.readme.Spec.Disruption.DeepCopy(),
		},
	}
	nodePool.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration(in.timers.consolidateAfter.String())
	var nodeClass client.Object
	switch e.Provider {
	case harness.Kwok:
		nodeClass = localcluster.KwokNodeClass(dayNodePool, in.timers.boot)
		nodePool.Spec.Template.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: dayNodePool}
		nodePool.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.ArchitectureAmd64}},
			{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Linux)}},
			{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
		}
	default:
		class := v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: dayNodePool}}
		if e.Provider == harness.LinodeInstance {
			class.Spec.Image = ptr.To(harness.InstanceImage)
		}
		nodeClass = test.LinodeNodeClass(class)
		nodePool.Spec.Template.Spec.NodeClassRef = &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: dayNodePool}
	}
	if err := e.Cluster.Kube.Create(ctx, nodeClass); err != nil {
		return fmt.Errorf("creating the node class %s: %w", dayNodePool, err)
	}
	if err := e.Cluster.Kube.Create(ctx, nodePool); err != nil {
		return fmt.Errorf("creating NodePool %s: %w", dayNodePool, err)
	}
	return e.WaitFor(ctx, "NodePool "+dayNodePool+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
		if err := e.Cluster.Kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool); err != nil {
			return false, err
		}
		return nodePool.StatusConditions().Root().IsTrue(), nil
	})
}

// createDayObject creates a workload as its manifest says, without what the server sets, its pods
// labelled with the workload's name; a Deployment or StatefulSet with its midnight replicas. A
// CronJob is not created: its runs are played (applyDayEvent).
func (e *env) createDayObject(ctx context.Context, o traceObject, replicas int32) error {
	if o.kind == "CronJob" {
		return nil
	}
	obj := o.object.DeepCopyObject().(runtimeObject)
	if obj.GetNamespace() == "" {
		obj.SetNamespace(harness.Namespace)
	}
	if err := e.ensureNamespace(ctx, obj.GetNamespace()); err != nil {
		return err
	}
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	switch w := obj.(type) {
	case *appsv1.Deployment:
		w.Status, w.Spec.Replicas = appsv1.DeploymentStatus{}, ptr.To(replicas)
		labelTemplate(&w.Spec.Template, o.name)
	case *appsv1.StatefulSet:
		w.Status, w.Spec.Replicas = appsv1.StatefulSetStatus{}, ptr.To(replicas)
		labelTemplate(&w.Spec.Template, o.name)
	case *appsv1.DaemonSet:
		w.Status = appsv1.DaemonSetStatus{}
		labelTemplate(&w.Spec.Template, o.name)
	}
	return e.Cluster.Kube.Create(ctx, obj)
}

func labelTemplate(template *corev1.PodTemplateSpec, workload string) {
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	template.Labels[dayWorkloadLabel] = workload
}

func (e *env) ensureNamespace(ctx context.Context, name string) error {
	err := e.Cluster.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return client.IgnoreAlreadyExists(err)
}

// dayWorkloadsRunning tells whether every Deployment and StatefulSet has its replicas ready and
// every pod runs.
func (e *env) dayWorkloadsRunning(ctx context.Context, in *dayInput) (bool, error) {
	for i, o := range in.objects {
		key := client.ObjectKey{Namespace: namespaceOf(o.object), Name: o.name}
		switch o.kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := e.Cluster.Kube.Get(ctx, key, &d); err != nil {
				return false, err
			}
			if d.Status.ReadyReplicas != in.midnight[i] || d.Status.Replicas != in.midnight[i] {
				return false, nil
			}
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := e.Cluster.Kube.Get(ctx, key, &s); err != nil {
				return false, err
			}
			if s.Status.ReadyReplicas != in.midnight[i] {
				return false, nil
			}
		}
	}
	var pods corev1.PodList
	if err := e.Cluster.Kube.List(ctx, &pods, client.HasLabels{dayWorkloadLabel}); err != nil {
		return false, err
	}
	for i := range pods.Items {
		if pod := &pods.Items[i]; pod.Status.Phase != corev1.PodRunning || !nodesim.PodReady(pod) {
			return false, nil
		}
	}
	return len(pods.Items) > 0, nil
}

func namespaceOf(obj runtimeObject) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	return harness.Namespace
}

// applyDayEvent plays one change: a new replica count, a rollout (a new annotation on the pod
// template), or a CronJob's run. Kwok completes a Job's pods as soon as they run, so a run is
// played as what it is to the cluster: a ReplicaSet of the Job's parallelism and pod template
// (its pods recreated if evicted, as a Job's are), deleted when the run ends.
func (e *env) applyDayEvent(ctx context.Context, o traceObject, event dayEvent) error {
	key := client.ObjectKey{Namespace: namespaceOf(o.object), Name: o.name}
	kube := e.Cluster.Kube
	switch event.kind {
	case eventScale, eventRollout:
		var obj client.Object = &appsv1.Deployment{}
		if o.kind == "StatefulSet" {
			obj = &appsv1.StatefulSet{}
		}
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, event.replicas)
		if event.kind == eventRollout {
			patch = fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, dayRolloutKey, TimeOfDay(event.at).String())
		}
		return kube.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
	case eventRunStart:
		cronJob := o.object.(*batchv1.CronJob)
		run := cronRunName(o.name, event.run)
		template := cronJob.Spec.JobTemplate.Spec.Template.DeepCopy()
		labelTemplate(template, o.name)
		template.Labels[dayRunLabel] = run
		template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		return kube.Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: run, Namespace: key.Namespace},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptr.To(ptr.Deref(cronJob.Spec.JobTemplate.Spec.Parallelism, 1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{dayRunLabel: run}},
				Template: *template,
			},
		})
	case eventRunEnd:
		err := kube.Delete(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: cronRunName(o.name, event.run), Namespace: key.Namespace}},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		return client.IgnoreNotFound(err)
	}
	return fmt.Errorf("unknown event %q", event.kind)
}

// cronRunName names a CronJob's run by its start, e.g. report-0800.
func cronRunName(cronJob, run string) string {
	return cronJob + "-" + strings.ReplaceAll(run, ":", "")
}
