package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// TestDefaultDayTrace reads the committed trace and checks the day it plays: the web curve's night
// floor and noon peak, the API's rollout at 10:30, and a run of the report batch every four hours.
func TestDefaultDayTrace(t *testing.T) {
	path, err := shared.RepositoryFile(defaultTraceFile)
	if err != nil {
		t.Fatal(err)
	}
	trace, err := LoadDayTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := trace.objects()
	if err != nil {
		t.Fatal(err)
	}
	midnight, events := trace.schedule(objects)
	index := map[string]int{}
	for i, o := range objects {
		index[o.name] = i
	}
	web := index["web"]
	counts := map[time.Duration]int32{0: midnight[web]}
	replicas := midnight[web]
	var rollouts, runs []string
	for _, e := range events {
		switch {
		case e.workload == web && e.kind == eventScale:
			replicas = e.replicas
		case e.kind == eventRollout:
			rollouts = append(rollouts, objects[e.workload].name+"@"+TimeOfDay(e.at).String())
		case e.kind == eventRunStart:
			runs = append(runs, e.run)
		}
		counts[e.at] = replicas
	}
	if midnight[web] < 4 || midnight[web] > 8 {
		t.Errorf("web at midnight: %d replicas, want the night floor of about 6", midnight[web])
	}
	if noon := counts[12*time.Hour]; noon < 24 || noon > 36 {
		t.Errorf("web at noon: %d replicas, want the peak of about 30", noon)
	}
	if got := strings.Join(rollouts, ","); got != "api@10:30" {
		t.Errorf("rollouts %s, want api@10:30", got)
	}
	if got := strings.Join(runs, ","); got != "00:00,04:00,08:00,12:00,16:00,20:00" {
		t.Errorf("report runs at %s, want every four hours", got)
	}
	// The same trace plays the same day.
	_, again := trace.schedule(objects)
	if len(again) != len(events) || again[len(again)/2] != events[len(events)/2] {
		t.Errorf("a second schedule of the trace differs from the first")
	}
}

// TestDayTraceErrors checks that a trace the day cannot play is refused with the workload and
// field named.
func TestDayTraceErrors(t *testing.T) {
	deployment := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}}`
	cronJob := `{apiVersion: batch/v1, kind: CronJob, metadata: {name: report}, spec: {schedule: "%s", jobTemplate: {spec: {template: {spec: {}}}}}}`
	for _, c := range []struct {
		name, trace, want string
	}{
		{"unknown field", "name: x\nworkloads: [{manifest: " + deployment + ", replica: []}]", `unknown field "replica"`},
		{"bad time", "name: x\nworkloads: [{manifest: " + deployment + `, replicas: [{at: "25:00", replicas: 1}]}]`, `"25:00" is not a time of day`},
		{"times out of order", "name: x\nworkloads: [{manifest: " + deployment + `, replicas: [{at: "10:00", replicas: 1}, {at: "09:00", replicas: 2}]}]`,
			"workloads[0] (Deployment web): replicas[1].at: 09:00 is before replicas[0].at 10:00"},
		{"cron without runFor", "name: x\nworkloads: [{manifest: " + strings.Replace(cronJob, "%s", "0 */4 * * *", 1) + "}]",
			"workloads[0] (CronJob report): runFor: a CronJob needs how long its runs run"},
		{"bad schedule", "name: x\nworkloads: [{runFor: 1h, manifest: " + strings.Replace(cronJob, "%s", "every hour", 1) + "}]",
			`workloads[0] (CronJob report): manifest: spec.schedule "every hour"`},
		{"replicas of a DaemonSet", "name: x\nworkloads: [{replicas: [{at: \"00:00\", replicas: 1}], manifest: {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: logs}}}]",
			"workloads[0] (DaemonSet logs): replicas: a DaemonSet has no replica count"},
		{"a kind the day does not play", "name: x\nworkloads: [{manifest: {apiVersion: v1, kind: Service, metadata: {name: web}}}]",
			"workloads[0]: manifest: kind v1 Service is not one the day plays"},
		{"no name", "workloads: []", "name: missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseDayTrace([]byte(c.trace))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestPlainPoolDay prices the default trace's plain LKE pool: one plan, as many nodes as noon
// needs, all day, which costs more than the day's lower bound and no less than the peak's bound
// held all day.
func TestPlainPoolDay(t *testing.T) {
	// Sampled every quarter hour, which keeps the test's lower bounds to 96.
	in, err := loadDayInput(t.Context(), "", dayRun{length: 24 * time.Minute, sample: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	overhead := in.daemonSetRequests()
	pool, err := plainPoolDay(in, overhead, newBoundMemo(in.instanceTypes[mode.LKE], overhead))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d× %s: $%.2f a day against a bound of $%.2f (%.2f×), computed in %v", pool.onePlan.Nodes, pool.onePlan.Plan, pool.cost, pool.bound, pool.ratio(), time.Since(start))
	peak := 0.0
	for _, b := range pool.series.bound {
		peak = max(peak, b)
	}
	if pool.cost < peak*Day.Hours()-1e-9 || pool.bound >= pool.cost || pool.bound <= 0 {
		t.Errorf("pool $%.2f a day, bound $%.2f a day, peak bound $%.2f/h: want bound < pool and the pool at least the peak's bound all day", pool.cost, pool.bound, peak)
	}
	if in.timers.boot != 3*time.Second || in.timers.consolidateAfter != time.Second {
		t.Errorf("a day in 24 minutes: boot %v and consolidateAfter %v, want 3s and 1s", in.timers.boot, in.timers.consolidateAfter)
	}
}

// TestMeasureDay reads a day off a record made by hand: two nodes of known plans for known spans
// of the day, a pod evicted by consolidation, a pod that waited, and a DaemonSet's pod that counts
// for nothing.
func TestMeasureDay(t *testing.T) {
	in, err := loadDayInput(t.Context(), "", dayRun{length: 24 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	at := func(h float64) time.Time { return start.Add(in.timers.clock(time.Duration(h * float64(time.Hour)))) }
	pod := func(uid, workload string, cpu string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Labels: map[string]string{dayWorkloadLabel: workload}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		}
	}
	daemon := pod("logs-1", "logs", "100m")
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "logs"}}
	record := dayRecord{
		provider: harness.Linode, start: start, end: at(24),
		claims: []harness.ClaimLife{
			// All day: a g6-standard-2 ($0.036/h).
			{Name: "a", InstanceType: "g6-standard-2", Node: "node-a", Created: at(-1), Launched: at(-1)},
			// From 06:00 to 18:00: a g6-standard-4 ($0.072/h), consolidated away.
			{Name: "b", InstanceType: "g6-standard-4", Node: "node-b", Created: at(6), Launched: at(6), Gone: at(18), DisruptionReason: "Underutilized"},
		},
		pods: []harness.PodLife{
			{Pod: pod("web-1", "web", "500m"), Created: at(-1), Running: at(-1), Node: "node-a"},
			// Waits an hour of the day (a minute on the clock), runs until evicted at 18:00.
			{Pod: pod("web-2", "web", "500m"), Created: at(6), Running: at(7), Ended: at(18), Node: "node-b", Disrupted: "EvictionByEvictionAPI"},
			{Pod: daemon, Created: at(-1), Running: at(-1), Node: "node-a"},
		},
	}
	overhead := in.daemonSetRequests()
	f, err := measureDay(in, record, in.instanceTypes[mode.LKE], newBoundMemo(in.instanceTypes[mode.LKE], overhead))
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.036*24 + 0.072*12; math.Abs(f.cost-want) > 0.01 {
		t.Errorf("day's cost $%.3f, want $%.3f", f.cost, want)
	}
	if f.bound <= 0 || f.bound > f.cost {
		t.Errorf("bound $%.3f, want between 0 and the cost $%.3f", f.bound, f.cost)
	}
	if f.evicted["Underutilized"] != 1 || f.evictedTotal() != 1 {
		t.Errorf("evicted %v, want one pod by Underutilized", f.evicted)
	}
	if want := 24.0 + 11; math.Abs(f.podHours-want) > 0.1 {
		t.Errorf("%.2f pod-hours, want %.0f (the DaemonSet's pod aside)", f.podHours, want)
	}
	if f.launches != 1 || f.deletions != 1 {
		t.Errorf("%d launches and %d deletions over the day, want 1 and 1 (node a launched before midnight)", f.launches, f.deletions)
	}
	if w := f.pending["web"]; w.n != 1 || math.Abs(w.p95-60) > 0.5 {
		t.Errorf("web's waits %+v, want one pod that waited 60 s on the clock", w)
	}
	if _, ok := f.pending["logs"]; ok {
		t.Errorf("the DaemonSet's pod counted as a workload's")
	}
	if got := f.series.pending[int(6.5*float64(time.Hour)/float64(in.sample))]; got != 1 {
		t.Errorf("%.0f pods pending at 06:30, want 1", got)
	}
}
