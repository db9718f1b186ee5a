package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// DayTrace is one day of a cluster's workloads, the input of the day scenario: what each
// workload's pods ask for, as its manifest says, and when its replica count, its pod template and
// its runs change over the day. docs/benchmarks.md describes the format; test/bench/testdata/day.yaml
// is the default trace.
type DayTrace struct {
	// Name names the trace in the report.
	Name string `json:"name"`
	// Description says what the trace stands for.
	Description string `json:"description,omitempty"`
	// Seed draws the noise of every replica count: the same seed gives the same counts.
	Seed uint64 `json:"seed"`
	// Step is how often, in the day's time, replica counts are set: 5m when unset.
	Step metav1.Duration `json:"step,omitempty"`
	// Workloads are the day's objects, created at midnight in their order.
	Workloads []TraceWorkload `json:"workloads"`
}

// TraceWorkload is one object of the day and how it changes.
type TraceWorkload struct {
	// Manifest is the object as `kubectl get -o yaml` prints it: a Deployment, StatefulSet or
	// DaemonSet (apps/v1), a CronJob (batch/v1) or a PodDisruptionBudget (policy/v1). Status and
	// server-set metadata are ignored.
	Manifest runtime.RawExtension `json:"manifest"`
	// Replicas are a Deployment's or StatefulSet's replica counts at times of the day, linear in
	// between; before the first and after the last the nearest holds. Without them the
	// manifest's spec.replicas holds all day.
	Replicas []ReplicaPoint `json:"replicas,omitempty"`
	// Noise is the relative standard deviation of each step's count around the curve (0.1: 10%),
	// drawn from the trace's seed and correlated from step to step as load is. A count the curve
	// keeps at 1 or more never falls below 1, as an autoscaler's minimum would not.
	Noise float64 `json:"noise,omitempty"`
	// Rollouts are the times of day a Deployment's or StatefulSet's pod template changes (an
	// annotation), which rolls its pods as its update strategy says.
	Rollouts []TimeOfDay `json:"rollouts,omitempty"`
	// RunFor is how long each run of a CronJob runs: a run's pods start at each time its
	// spec.schedule names and finish RunFor later.
	RunFor metav1.Duration `json:"runFor,omitempty"`
}

// ReplicaPoint is a replica count at a time of the day.
type ReplicaPoint struct {
	At       TimeOfDay `json:"at"`
	Replicas int32     `json:"replicas"`
}

// TimeOfDay is a time of the day, "HH:MM" from "00:00" to "24:00", as the time since midnight.
type TimeOfDay time.Duration

// Day is the length of the day a trace spans.
const Day = 24 * time.Hour

// UnmarshalJSON reads "HH:MM".
func (t *TimeOfDay) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a time of day is a string \"HH:MM\": %w", err)
	}
	hours, minutes, ok := strings.Cut(s, ":")
	h, herr := strconv.Atoi(hours)
	m, merr := strconv.Atoi(minutes)
	at := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if !ok || herr != nil || merr != nil || len(minutes) != 2 || h < 0 || m < 0 || m > 59 || at > Day {
		return fmt.Errorf("%q is not a time of day \"HH:MM\" from 00:00 to 24:00", s)
	}
	*t = TimeOfDay(at)
	return nil
}

// MarshalJSON writes "HH:MM".
func (t TimeOfDay) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

func (t TimeOfDay) String() string {
	d := time.Duration(t)
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// defaultTraceFile is the day scenario's trace when -trace names none.
const defaultTraceFile = "test/bench/testdata/day.yaml"

// defaultStep is how often replica counts change when the trace does not say.
const defaultStep = 5 * time.Minute

// LoadDayTrace reads and checks a trace file, YAML or JSON.
func LoadDayTrace(path string) (*DayTrace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trace, err := ParseDayTrace(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trace, nil
}

// ParseDayTrace reads a trace, YAML or JSON, refusing fields the format does not have, and checks
// it: each error names the workload and the field.
func ParseDayTrace(data []byte) (*DayTrace, error) {
	var trace DayTrace
	if err := yaml.UnmarshalStrict(data, &trace); err != nil {
		return nil, err
	}
	if _, err := trace.objects(); err != nil {
		return nil, err
	}
	return &trace, nil
}

// traceObject is a workload's manifest decoded, with what the trace says of it.
type traceObject struct {
	TraceWorkload
	object runtimeObject
	// name is the workload's name, kind its kind, for the report and errors.
	name, kind string
}

// runtimeObject is a decoded manifest.
type runtimeObject interface {
	runtime.Object
	metav1.Object
}

// objects decodes and checks the workloads.
func (t *DayTrace) objects() ([]traceObject, error) {
	if t.Name == "" {
		return nil, errors.New("name: missing")
	}
	if t.Step.Duration < 0 || (t.Step.Duration > 0 && Day%t.Step.Duration != 0) {
		return nil, fmt.Errorf("step: %v does not divide the day", t.Step.Duration)
	}
	if len(t.Workloads) == 0 {
		return nil, errors.New("workloads: none")
	}
	var out []traceObject
	names := map[string]bool{}
	for i, w := range t.Workloads {
		o, err := decodeWorkload(w)
		if err != nil {
			return nil, fmt.Errorf("workloads[%d]: %w", i, err)
		}
		where := fmt.Sprintf("workloads[%d] (%s %s)", i, o.kind, o.name)
		if names[o.kind+"/"+o.name] {
			return nil, fmt.Errorf("%s: a second %s of that name", where, o.kind)
		}
		names[o.kind+"/"+o.name] = true
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func decodeWorkload(w TraceWorkload) (traceObject, error) {
	if len(w.Manifest.Raw) == 0 {
		return traceObject{}, errors.New("manifest: missing")
	}
	decoded, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(w.Manifest.Raw, nil, nil)
	if err != nil {
		return traceObject{}, fmt.Errorf("manifest: %w", err)
	}
	o := traceObject{TraceWorkload: w, kind: gvk.Kind}
	switch obj := decoded.(type) {
	case *appsv1.Deployment, *appsv1.StatefulSet, *appsv1.DaemonSet, *batchv1.CronJob, *policyv1.PodDisruptionBudget:
		o.object = obj.(runtimeObject)
	default:
		return traceObject{}, fmt.Errorf("manifest: kind %s %s is not one the day plays (apps/v1 Deployment, StatefulSet, DaemonSet; batch/v1 CronJob; policy/v1 PodDisruptionBudget)", gvk.GroupVersion(), gvk.Kind)
	}
	o.name = o.object.GetName()
	if o.name == "" {
		return traceObject{}, fmt.Errorf("manifest: %s without metadata.name", gvk.Kind)
	}
	return o, nil
}

// check refuses what the trace says of a workload that its kind has no use for, and curves and
// schedules that cannot be played.
func (o traceObject) check() error {
	scalable := o.kind == "Deployment" || o.kind == "StatefulSet"
	switch {
	case !scalable && len(o.Replicas) > 0:
		return fmt.Errorf("replicas: a %s has no replica count", o.kind)
	case !scalable && o.Noise != 0:
		return fmt.Errorf("noise: a %s has no replica count", o.kind)
	case !scalable && len(o.Rollouts) > 0:
		return fmt.Errorf("rollouts: only Deployments and StatefulSets roll")
	case o.kind != "CronJob" && o.RunFor.Duration != 0:
		return fmt.Errorf("runFor: only a CronJob's runs run for a time")
	case o.Noise < 0 || o.Noise > 1:
		return fmt.Errorf("noise: %v is not between 0 and 1", o.Noise)
	}
	for i, p := range o.Replicas {
		if p.Replicas < 0 {
			return fmt.Errorf("replicas[%d].replicas: %d is negative", i, p.Replicas)
		}
		if i > 0 && p.At < o.Replicas[i-1].At {
			return fmt.Errorf("replicas[%d].at: %s is before replicas[%d].at %s", i, p.At, i-1, o.Replicas[i-1].At)
		}
	}
	for i, at := range o.Rollouts {
		if time.Duration(at) >= Day {
			return fmt.Errorf("rollouts[%d]: %s is not within the day", i, at)
		}
	}
	if cronJob, ok := o.object.(*batchv1.CronJob); ok {
		if _, err := cron.ParseStandard(cronJob.Spec.Schedule); err != nil {
			return fmt.Errorf("manifest: spec.schedule %q: %w", cronJob.Spec.Schedule, err)
		}
		if o.RunFor.Duration <= 0 {
			return errors.New("runFor: a CronJob needs how long its runs run")
		}
	}
	return nil
}

// dayEventKind is what happens to a workload at a time of the day.
type dayEventKind string

const (
	// eventScale sets a Deployment's or StatefulSet's replicas.
	eventScale dayEventKind = "scale"
	// eventRollout changes a pod template, rolling the pods.
	eventRollout dayEventKind = "rollout"
	// eventRunStart starts a CronJob's run, eventRunEnd ends it.
	eventRunStart dayEventKind = "run-start"
	eventRunEnd   dayEventKind = "run-end"
)

// dayEvent is a change of the day: at a time since midnight, to the workload'th workload.
type dayEvent struct {
	at       time.Duration
	workload int
	kind     dayEventKind
	replicas int32
	// run names a CronJob's run, by the time it started.
	run string
}

// schedule is every change of the day, in the order played, and each workload's replicas at
// midnight. It depends on the trace alone, so every provider plays the same day.
func (t *DayTrace) schedule(objects []traceObject) (midnight []int32, events []dayEvent) {
	step := t.Step.Duration
	if step == 0 {
		step = defaultStep
	}
	midnight = make([]int32, len(objects))
	for i, o := range objects {
		switch obj := o.object.(type) {
		case *appsv1.Deployment, *appsv1.StatefulSet:
			counts := o.counts(t.Seed, step, manifestReplicas(obj))
			midnight[i] = counts[0]
			for s := 1; s < len(counts); s++ {
				if counts[s] != counts[s-1] {
					events = append(events, dayEvent{at: time.Duration(s) * step, workload: i, kind: eventScale, replicas: counts[s]})
				}
			}
			for _, at := range o.Rollouts {
				events = append(events, dayEvent{at: time.Duration(at), workload: i, kind: eventRollout})
			}
		case *batchv1.CronJob:
			schedule, _ := cron.ParseStandard(obj.Spec.Schedule)
			midnightUTC := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			for at := schedule.Next(midnightUTC.Add(-time.Second)); at.Sub(midnightUTC) < Day; at = schedule.Next(at) {
				start := at.Sub(midnightUTC)
				run := TimeOfDay(start).String()
				events = append(events, dayEvent{at: start, workload: i, kind: eventRunStart, run: run})
				if end := start + o.RunFor.Duration; end < Day {
					events = append(events, dayEvent{at: end, workload: i, kind: eventRunEnd, run: run})
				}
			}
		}
	}
	slices.SortStableFunc(events, func(a, b dayEvent) int { return int(a.at - b.at) })
	return midnight, events
}

// manifestReplicas is a Deployment's or StatefulSet's spec.replicas, 1 when unset as the API
// server defaults it.
func manifestReplicas(obj runtime.Object) int32 {
	var replicas *int32
	switch o := obj.(type) {
	case *appsv1.Deployment:
		replicas = o.Spec.Replicas
	case *appsv1.StatefulSet:
		replicas = o.Spec.Replicas
	}
	if replicas == nil {
		return 1
	}
	return *replicas
}

// noiseCorrelation is how much of one step's noise carries into the next (an AR(1) process of
// unit variance): load drifts around its curve rather than jumping every step.
const noiseCorrelation = 0.7

// counts are the workload's replica counts at each step of the day, from midnight: the curve
// with its noise, drawn from a generator seeded by the trace's seed and the workload's name.
func (o traceObject) counts(seed uint64, step time.Duration, fixed int32) []int32 {
	steps := int(Day / step)
	counts := make([]int32, steps)
	hash := fnv.New64a()
	hash.Write([]byte(o.kind + "/" + o.name))
	random := rand.New(rand.NewPCG(seed, hash.Sum64()))
	noise := random.NormFloat64()
	for s := range steps {
		base := float64(fixed)
		if len(o.Replicas) > 0 {
			base = o.curve(time.Duration(s) * step)
		}
		if s > 0 {
			noise = noiseCorrelation*noise + math.Sqrt(1-noiseCorrelation*noiseCorrelation)*random.NormFloat64()
		}
		n := math.Round(base * (1 + o.Noise*noise))
		if base >= 1 {
			n = max(n, 1)
		}
		counts[s] = int32(max(n, 0))
	}
	return counts
}

// curve is the replica count the points give at a time of the day, linear between them.
func (o traceObject) curve(at time.Duration) float64 {
	points := o.Replicas
	i := slices.IndexFunc(points, func(p ReplicaPoint) bool { return time.Duration(p.At) > at })
	switch i {
	case 0:
		return float64(points[0].Replicas)
	case -1:
		return float64(points[len(points)-1].Replicas)
	}
	before, after := points[i-1], points[i]
	f := float64(at-time.Duration(before.At)) / float64(after.At-before.At)
	return float64(before.Replicas) + f*float64(after.Replicas-before.Replicas)
}
