package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/test/harness"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// Config says how to run the fault matrix (Run).
type Config struct {
	// Quick runs CI's short version: a few faults, fewer pods, shorter faults.
	Quick bool
	// Faults names the faults to run (Faults); empty runs the version's whole list.
	Faults []string
	// Modes names the controller's modes to run each fault in (harness.Linode for LKE mode,
	// harness.LinodeInstance); empty runs both, or the short version's choice.
	Modes []harness.Provider
	// ControllerBinary is cmd/controller, built once and run by every cluster.
	ControllerBinary string
	// Progress hears about each step; nil for silence.
	Progress func(string)
	// LogDir receives, in a directory per fault, the logs of the cluster of each fault that
	// misses a target (the controller's, kube-apiserver's and the other components'); with
	// KeepLogs, of every fault. Empty leaves them in a temporary directory the row names.
	LogDir   string
	KeepLogs bool
}

// chaosScale is the workload and the timings of a run.
type chaosScale struct {
	// peak and low are the pod counts the deployment scales between; a run starts and ends at peak.
	peak, low int
	// window is how long a fault that lasts lasts, unless the issue gives it a duration of its own.
	window time.Duration
	// storm is the 5xx storm's duration, apiDown the unreachable API's, signerDown the CSR
	// signer's outage.
	storm, apiDown, signerDown time.Duration
	// recoveryWait is how long after a fault ends the run waits for recovery before it counts
	// what is left as lost.
	recoveryWait time.Duration
	// faults are the faults the version runs, in order, each in both modes where it applies;
	// cases, when set, are the version's own choice of faults and modes instead.
	faults []string
	cases  []chaosCase
	// sideBySide runs the cases at once, each on clusters of its own: what they count (pods lost,
	// leaks, duplicates) does not depend on the machine's load, and recovery has minutes to spare.
	sideBySide bool
}

// chaosCase is a fault run in one of the controller's modes.
type chaosCase struct {
	fault string
	mode  harness.Provider
}

// The matrix: 50 pods, the 5xx storm for 2 minutes, the API and the CSR signer down for 5.
var fullChaos = chaosScale{
	peak: 50, low: 20, window: time.Minute, storm: 2 * time.Minute, apiDown: 5 * time.Minute, signerDown: 5 * time.Minute,
	recoveryWait: 3 * time.Minute, faults: Faults,
}

// quickChaos is CI's: three faults that exercise both modes and both halves of the system, at a
// smaller scale: Linode's API failing (LKE mode), the controller dying in the middle of a
// deletion, and creates and deletes that take effect but lose their answers while the leader
// dies (instance mode).
var quickChaos = chaosScale{
	peak: 20, low: 8, window: 30 * time.Second, storm: 30 * time.Second, apiDown: time.Minute, signerDown: time.Minute,
	recoveryWait: 2 * time.Minute, sideBySide: true, cases: []chaosCase{
		{Fault5xxStorm, harness.Linode}, {FaultControllerKilled, harness.LinodeInstance}, {FaultLostAnswers, harness.LinodeInstance},
		{FaultSharedAccount, harness.Linode},
	},
}

// Modes are the controller's modes the matrix runs in.
var Modes = []harness.Provider{harness.Linode, harness.LinodeInstance}

// appliesIn tells whether a fault exists in a mode: a recycle goes through the LKE API, and only
// LKE mode registers the Node webhook; only instance mode's nodes join through the cluster's CSR
// signer; the shared account runs once, with clusters of both modes.
func appliesIn(fault string, mode harness.Provider) bool {
	switch fault {
	case FaultRecycleHalf, FaultWebhookDown:
		return mode == harness.Linode
	case FaultCSRSignerDown:
		return mode == harness.LinodeInstance
	case FaultSharedAccount:
		// One run holds clusters of both modes.
		return mode == harness.Linode
	}
	return true
}

// cases are the faults and modes a run goes through: the version's, narrowed to the faults and
// modes named.
func (s chaosScale) casesFor(faults []string, modes []harness.Provider) []chaosCase {
	var cases []chaosCase
	if len(faults) == 0 && len(s.cases) > 0 {
		for _, c := range s.cases {
			if len(modes) == 0 || slices.Contains(modes, c.mode) {
				cases = append(cases, c)
			}
		}
		return cases
	}
	if len(faults) == 0 {
		faults = s.faults
	}
	if len(modes) == 0 {
		modes = Modes
	}
	for _, fault := range faults {
		for _, mode := range modes {
			if appliesIn(fault, mode) {
				cases = append(cases, chaosCase{fault, mode})
			}
		}
	}
	return cases
}

// recoveryTarget is the issue's: everything back within 2 minutes of the fault ending.
const recoveryTarget = 2 * time.Minute

// registrationTimeout is core's: a NodeClaim whose node has not registered 15 minutes after
// launch is deleted.
const registrationTimeout = 15 * time.Minute

// chaosPool names the NodePool, its node class and the deployment of every fault's run.
const chaosPool = "chaos"

// chaosNodeCPUs sizes the nodes: three one-CPU pods fit a 4-vCPU node, so 50 pods need about 17
// nodes, and scaling to 20 leaves most of them to consolidate.
const chaosNodeCPUs = 4

// Row is what one fault cost.
type Row struct {
	Fault string `json:"fault"`
	// Mode is the controller's mode: LKE or instance.
	Mode string `json:"mode"`
	// PodsNeverRunning are the deployment's replicas not running when the run ended.
	PodsNeverRunning int `json:"podsNeverRunning"`
	// PodsLostUndrained are pods that were running when their Linode or Node went away: evicted
	// without a drain.
	PodsLostUndrained int `json:"podsLostUndrained"`
	// LinodesLeaked are Linodes no NodeClaim accounts for when the run ended.
	LinodesLeaked int `json:"linodesLeaked"`
	// DuplicateNodes are Linodes or Nodes beyond one per NodeClaim when the run ended.
	DuplicateNodes int `json:"duplicateNodes"`
	// RecoveryMinutes is from the fault's end until every replica ran and the fleet was
	// consistent; nil when that did not happen within the wait.
	RecoveryMinutes *float64 `json:"recoveryMinutes"`
	// WaitedMinutes is how long the run waited for recovery.
	WaitedMinutes float64 `json:"waitedMinutes"`
	Note          string  `json:"note,omitempty"`
	// Error says why the run could not measure the fault, when it could not.
	Error string `json:"error,omitempty"`
	// SharedAccount is what the shared-account scenario measured of each cluster.
	SharedAccount *SharedAccount `json:"sharedAccount,omitempty"`
}

// MeetsTargets tells whether the fault cost nothing and the system recovered within 2 minutes.
func (r Row) MeetsTargets() bool {
	return r.Error == "" && r.PodsNeverRunning == 0 && r.PodsLostUndrained == 0 && r.LinodesLeaked == 0 &&
		r.DuplicateNodes == 0 && r.RecoveryMinutes != nil && *r.RecoveryMinutes <= recoveryTarget.Minutes() &&
		(r.SharedAccount == nil || r.SharedAccount.meetsTargets())
}

// Report is a whole run of the matrix.
type Report struct {
	Started  time.Time         `json:"started"`
	Duration string            `json:"duration"`
	Command  string            `json:"command"`
	Machine  harness.Machine   `json:"machine"`
	Settings map[string]string `json:"settings"`
	Rows     []Row             `json:"rows"`
}

// Markdown renders the report as one table, a row per fault.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault matrix\n\n")
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Started: %s, took %s\n", r.Started.UTC().Format(time.RFC3339), r.Duration)
	fmt.Fprintf(&b, "- Machine: %s, %d cores, %.1f GiB, %s/%s, %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.OS, r.Machine.Arch, r.Machine.Go)
	for _, key := range harness.SortedKeys(r.Settings) {
		fmt.Fprintf(&b, "- %s: %s\n", key, r.Settings[key])
	}
	b.WriteString("\n| Fault | Pods never running | Pods evicted without drain | Linodes leaked | Duplicate nodes | Minutes to recover | Targets | Note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		recovery := fmt.Sprintf("> %.1f", row.WaitedMinutes)
		if row.RecoveryMinutes != nil {
			recovery = fmt.Sprintf("%.1f", *row.RecoveryMinutes)
		}
		met, note := "met", row.Note
		if !row.MeetsTargets() {
			met = "**missed**"
		}
		if row.Error != "" {
			note = strings.TrimSpace("not measured: " + row.Error + "; " + note)
			fmt.Fprintf(&b, "| %s | | | | | | %s | %s |\n", row.Fault, met, oneLine(note))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s | %s | %s |\n", row.Fault, row.PodsNeverRunning, row.PodsLostUndrained,
			row.LinodesLeaked, row.DuplicateNodes, recovery, met, oneLine(note))
	}
	b.WriteString("\nTargets: 0, 0, 0, 0 and recovery within 2 minutes of the fault's end.\n")
	for _, row := range r.Rows {
		if row.SharedAccount != nil {
			b.WriteString(row.SharedAccount.Markdown())
		}
	}
	return b.String()
}

// Write writes report.md and report.json into dir, creating it.
func (r *Report) Write(dir string) error { return harness.WriteReport(dir, r, r.Markdown()) }

func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "/")
}

// Run runs the fault matrix: for each fault in turn, a new local cluster with the controller
// running as in the benchmarks, 50 pods (20 for the short version) scaling up and down through
// the fault, and a count of what a user lost. It returns a row per fault and the settings in
// effect; a fault that could not be measured has its error in its row and in the error.
func Run(ctx context.Context, cfg Config) ([]Row, map[string]string, error) {
	scale := fullChaos
	if cfg.Quick {
		scale = quickChaos
	}
	settings := map[string]string{
		"Workload": fmt.Sprintf("a Deployment of pause pods asking for 1 CPU each on a NodePool of %[1]d-vCPU plans, consolidating "+
			"when empty or underutilized after 0 s with a budget of 50%% of its nodes; "+
			"a fault that lasts starts with %[3]d pods running, scales up to %[2]d under the fault and halfway back to %[3]d, and returns to %[2]d once the fault ends; "+
			"the API down and kube-apiserver's restart start with %[3]d and come as the scale-up to %[2]d launches; "+
			"the others start with %[2]d: the controller is killed once a scale-down to %[3]d has Karpenter deleting a NodeClaim, and restarted after a scale-up back to %[2]d; "+
			"the recycle and the NodeClaims' deletion hit %[2]d running pods; "+
			"the leader's loss runs the chart's 2 replicas with leader election, times a scale-up from %[3]d to %[2]d without the fault, "+
			"consolidates back to %[3]d, and kills the leader (SIGKILL, left down) as the second scale-up launches", chaosNodeCPUs, scale.peak, scale.low),
		"Clusters": "a new local cluster per fault and mode: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok kubelets, " +
			"the Linode API emulator (Linodes boot in 5 s) and the controller as a process configured as the Helm chart configures it; " +
			"in LKE mode the controller launches LKE pools, in instance mode (rows so named) plain Linodes that boot from their user data " +
			"and join by TLS bootstrap (kubelets keep trying to join for 15 minutes, core's registration timeout); " +
			"the recycle and the webhook's loss are LKE mode's alone, the CSR signer's loss instance mode's; " +
			map[bool]string{false: "one fault at a time", true: "every fault at once, side by side on the machine"}[scale.sideBySide],
		"Durations": fmt.Sprintf("faults that last: %v, except the 5xx storm (%v), the API down (%v) and the CSR signer down (%v); recovery waited for up to %v after the fault's end",
			scale.window, scale.storm, scale.apiDown, scale.signerDown, scale.recoveryWait),
		"Columns": "pods never running: replicas not running when the run ended; pods evicted without drain: pods still running " +
			"when their Linode or their Node went away; Linodes leaked: Linodes no NodeClaim accounts for at the end; duplicate nodes: " +
			"Linodes or Nodes beyond one per NodeClaim at the end; minutes to recover: from the fault's end until every replica runs " +
			"and Kubernetes and Linode agree (one Linode and one Node per NodeClaim, nothing else)",
	}
	cases := scale.casesFor(cfg.Faults, cfg.Modes)
	for _, c := range cases {
		if _, ok := c.chaosFault(); !ok {
			return nil, settings, fmt.Errorf("unknown fault %q; known: %s", c.fault, strings.Join(Faults, ", "))
		}
	}
	rows := make([]Row, len(cases))
	caseErrs := make([]error, len(cases))
	if scale.sideBySide {
		titles := make([]string, len(cases))
		for i, c := range cases {
			titles[i] = c.title()
		}
		cfg.progress("faults side by side: %s", strings.Join(titles, "; "))
		var wg sync.WaitGroup
		for i, c := range cases {
			wg.Go(func() { rows[i], caseErrs[i] = runCase(ctx, cfg.prefixed(c.title()), scale, c) })
		}
		wg.Wait()
	} else {
		for i, c := range cases {
			cfg.progress("fault: %s", c.title())
			rows[i], caseErrs[i] = runCase(ctx, cfg, scale, c)
			if ctx.Err() != nil {
				rows = rows[:i+1]
				break
			}
		}
	}
	return rows, settings, errors.Join(caseErrs...)
}

// runCase runs one fault in one mode on clusters of its own and returns its row.
func runCase(ctx context.Context, cfg Config, scale chaosScale, c chaosCase) (Row, error) {
	title := c.title()
	var row Row
	var err error
	f, _ := c.chaosFault()
	if c.fault == FaultSharedAccount {
		row, err = runSharedAccount(ctx, cfg, scale, f)
	} else {
		row, err = runFault(ctx, cfg, scale, f, c.mode)
	}
	row.Fault, row.Mode = title, modeName(c.mode)
	if c.fault == FaultSharedAccount {
		row.Mode = "both"
	}
	if err != nil {
		row.Error = err.Error()
		err = fmt.Errorf("%s (%s): %w", c.fault, row.Mode, err)
	}
	cfg.progress("  done: never running %d, evicted without drain %d, leaked %d, duplicates %d, recovery %s",
		row.PodsNeverRunning, row.PodsLostUndrained, row.LinodesLeaked, row.DuplicateNodes, formatRecovery(row))
	return row, err
}

// chaosFault is the fault the case runs: one of the matrix's, or the shared account's clusters.
func (c chaosCase) chaosFault() (chaosFault, bool) {
	if c.fault == FaultSharedAccount {
		return sharedAccountFault, true
	}
	return chaosFaultByName(c.fault)
}

// title names the case in the report: the fault's title, and the mode when it is instance mode.
func (c chaosCase) title() string {
	f, _ := c.chaosFault()
	if c.mode == harness.LinodeInstance {
		return f.title + harness.InstanceModeSuffix
	}
	return f.title
}

// prefixed is the configuration with every progress line naming the case, for cases run side
// by side.
func (c Config) prefixed(title string) Config {
	if c.Progress != nil {
		progress := c.Progress
		c.Progress = func(line string) { progress(title + ": " + strings.TrimLeft(line, " ")) }
	}
	return c
}

// modeName names a mode in the report.
func modeName(mode harness.Provider) string {
	if mode == harness.LinodeInstance {
		return "instance"
	}
	return "lke"
}

func formatRecovery(row Row) string {
	if row.RecoveryMinutes == nil {
		return fmt.Sprintf("none within %.1f min", row.WaitedMinutes)
	}
	return fmt.Sprintf("%.1f min", *row.RecoveryMinutes)
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

// chaosRun is one fault's run on its own cluster.
type chaosRun struct {
	env   *harness.Env
	scale chaosScale
	// target is the deployment's replicas.
	target int
	// notes are what the run saw worth saying in the report.
	notes []string
}

func (r *chaosRun) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// runFault starts a cluster, brings the workload to where the fault starts, runs the fault, waits
// for recovery and counts.
func runFault(ctx context.Context, cfg Config, scale chaosScale, f chaosFault, mode harness.Provider) (row Row, err error) {
	// The cluster's logs are kept when the fault misses a target, and named in its note.
	logDir, err := os.MkdirTemp("", "karpenter-linode-chaos-"+f.name+"-"+modeName(mode)+"-")
	if err != nil {
		return row, err
	}
	e, err := harness.Start(ctx, harness.Config{ControllerBinary: cfg.ControllerBinary, Progress: cfg.Progress, WorkDir: logDir}, mode, 5*time.Second,
		func(opts *localcluster.Options) { opts.ControllerReplicas = controllerReplicas(f.name) })
	if err != nil {
		return row, err
	}
	// A kubelet keeps trying to join until core gives its NodeClaim up, 15 minutes after launch.
	e.Cluster.Nodes.SetJoinTimeout(registrationTimeout)
	defer func() {
		if stopErr := e.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
		if err == nil && row.MeetsTargets() && !cfg.KeepLogs {
			err = os.RemoveAll(logDir)
			return
		}
		kept, keepErr := keepLogs(e.Cluster.LogDir, cfg.LogDir, f.name+"-"+modeName(mode))
		err = errors.Join(err, keepErr)
		row.Note = strings.TrimPrefix(row.Note+"; logs in "+kept, "; ")
	}()
	r := &chaosRun{env: e, scale: scale}
	if err := r.createPool(ctx); err != nil {
		return row, err
	}
	r.target = scale.peak
	if f.startLow {
		r.target = scale.low
	}
	if _, err := e.Deploy(ctx, chaosPool, r.target); err != nil {
		return row, err
	}
	if _, ok, err := r.awaitSettled(ctx, "the workload's first scale-up", 4*time.Minute); err != nil || !ok {
		return row, errors.Join(err, fmt.Errorf("%d replicas were not running on a consistent fleet within 4 minutes, before any fault", r.target))
	}

	monitor, err := startLossMonitor(ctx, e.Cluster)
	if err != nil {
		return row, err
	}
	defer monitor.stop()
	cfg.progress("  injecting: %s", f.title)
	faultEnd, err := f.run(ctx, r)
	if err != nil {
		return row, fmt.Errorf("running the fault: %w", err)
	}
	cfg.progress("  the fault ended; waiting up to %v for recovery", scale.recoveryWait)
	recovered, ok, err := r.awaitSettled(ctx, "recovery", scale.recoveryWait)
	if err != nil {
		return row, err
	}
	row.WaitedMinutes = scale.recoveryWait.Minutes()
	if ok {
		row.RecoveryMinutes = ptr.To(math.Round(recovered.Sub(faultEnd).Minutes()*10) / 10)
	}
	monitor.stop()
	row.PodsLostUndrained = monitor.lostCount()
	if row.PodsNeverRunning, err = r.podsNotRunning(ctx); err != nil {
		return row, err
	}
	if row.PodsNeverRunning > 0 {
		states, err := r.podStates(ctx)
		if err != nil {
			return row, err
		}
		r.note("the deployment's pods: %s", states)
	}
	if row.LinodesLeaked, row.DuplicateNodes, err = harness.FleetMismatches(ctx, e.Cluster); err != nil {
		return row, err
	}
	if lost := monitor.lostPods(); len(lost) > 0 {
		r.note("evicted without drain: %s", strings.Join(firstOf(lost, 3), ", "))
	}
	if row.RecoveryMinutes == nil {
		if err := e.Cluster.CheckConsistency(ctx); err != nil {
			r.note("at the end: %s", strings.Join(firstOf(strings.Split(err.Error(), "\n"), 3), "; "))
		}
		if errs := e.Cluster.RecentControllerErrors(2); len(errs) > 0 {
			r.note("the controller's last errors: %s", strings.Join(errs, "; "))
		}
	}
	if restarts := e.Cluster.ControllerRestarts(); restarts > 0 {
		r.note("the controller was started again %d times after it exited or was killed, as its Deployment would", restarts)
	}
	row.Note = strings.Join(r.notes, "; ")
	return row, nil
}

// keepLogs moves the cluster's logs (its *.log files, not its certificates, kubeconfig or token)
// from workDir into dir/fault and removes workDir; without dir, it leaves workDir as it is. It
// returns where the logs are.
func keepLogs(workDir, dir, fault string) (string, error) {
	if dir == "" {
		return workDir, nil
	}
	kept := filepath.Join(dir, fault)
	if err := os.MkdirAll(kept, 0o755); err != nil {
		return workDir, err
	}
	logs, err := filepath.Glob(filepath.Join(workDir, "*.log"))
	if err != nil {
		return workDir, err
	}
	for _, log := range logs {
		if err := os.Rename(log, filepath.Join(kept, filepath.Base(log))); err != nil {
			return workDir, err
		}
	}
	return kept, os.RemoveAll(workDir)
}

// podStates counts the deployment's pods by what keeps them from counting as running: not bound
// to a node, bound but not running, running but not Ready, or being deleted.
func (r *chaosRun) podStates(ctx context.Context) (string, error) {
	var pods corev1.PodList
	if err := r.env.Cluster.Kube.List(ctx, &pods, client.InNamespace(harness.Namespace), client.MatchingLabels{harness.PoolLabel: chaosPool}); err != nil {
		return "", err
	}
	counts := map[string]int{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch {
		case !pod.DeletionTimestamp.IsZero():
			counts["being deleted"]++
		case pod.Spec.NodeName == "":
			counts["unscheduled"]++
		case pod.Status.Phase != corev1.PodRunning:
			counts[fmt.Sprintf("bound, %s", pod.Status.Phase)]++
		case !nodesim.PodReady(pod):
			counts["running, not Ready"]++
		default:
			counts["running and Ready"]++
		}
	}
	var parts []string
	for _, state := range harness.SortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[state], state))
	}
	return strings.Join(parts, ", "), nil
}

func firstOf(items []string, n int) []string {
	if len(items) > n {
		return append(slices.Clone(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
	}
	return items
}

// createPool creates the node class and the NodePool: 4-vCPU plans, consolidated as soon as
// they are empty or underutilized, half the nodes at a time, so scaling down deletes Linodes
// while the fault is on.
func (r *chaosRun) createPool(ctx context.Context) error {
	kube := r.env.Cluster.Kube
	class := v1.LinodeNodeClass{}
	if r.env.Provider == harness.LinodeInstance {
		class.Spec.Image = ptr.To(harness.InstanceImage)
	}
	nodeClass := test.LinodeNodeClass(class)
	nodeClass.Name = chaosPool
	nodePool := &karpv1.NodePool{}
	nodePool.Name = chaosPool
	nodePool.Spec.Disruption = karpv1.Disruption{
		ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		ConsolidateAfter:    karpv1.MustParseNillableDuration("0s"),
		Budgets:             []karpv1.Budget{{Nodes: "50%"}},
	}
	nodePool.Spec.Template.Spec.NodeClassRef = test.NodeClassRef(chaosPool)
	nodePool.Spec.Template.Spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"standard", "dedicated"}},
		{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpIn, Values: []string{fmt.Sprint(chaosNodeCPUs)}},
	}
	if err := kube.Create(ctx, nodeClass); err != nil {
		return fmt.Errorf("creating the node class: %w", err)
	}
	if err := kube.Create(ctx, nodePool); err != nil {
		return fmt.Errorf("creating the NodePool: %w", err)
	}
	return r.env.WaitFor(ctx, "NodePool "+chaosPool+" is Ready", time.Minute, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(nodePool), nodePool); err != nil {
			return false, err
		}
		return nodePool.StatusConditions().Root().IsTrue(), nil
	})
}

// scaleTo sets the deployment's replicas, retrying while kube-apiserver does not answer.
func (r *chaosRun) scaleTo(ctx context.Context, replicas int) error {
	r.target = replicas
	return r.retryKube(ctx, func(ctx context.Context) error {
		deployment := &appsv1.Deployment{}
		if err := r.env.Cluster.Kube.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: chaosPool}, deployment); err != nil {
			return err
		}
		stored := deployment.DeepCopy()
		deployment.Spec.Replicas = ptr.To(int32(replicas))
		return r.env.Cluster.Kube.Patch(ctx, deployment, client.MergeFrom(stored))
	})
}

// retryKube retries a change for up to a minute while kube-apiserver does not answer.
func (r *chaosRun) retryKube(ctx context.Context, change func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = change(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// settledFor is how long everything must stay settled to count: one look can fall between a
// fault's effects, e.g. after a node is gone and before its pods are seen to be.
const settledFor = 10 * time.Second

// awaitSettled waits until every replica runs and Kubernetes and Linode agree, and stay so for
// settledFor, and returns when that began; ok is false when it did not begin within timeout. The
// controller, should it exit, is started again meanwhile by the local cluster, as by its
// Deployment, and counted there.
func (r *chaosRun) awaitSettled(ctx context.Context, what string, timeout time.Duration) (settledAt time.Time, ok bool, err error) {
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout+settledFor, true, func(ctx context.Context) (bool, error) {
		if !r.settled(ctx) {
			settledAt = time.Time{}
			return false, nil
		}
		if settledAt.IsZero() {
			settledAt = time.Now()
		}
		return time.Since(settledAt) >= settledFor, nil
	})
	switch {
	case ctx.Err() != nil:
		return time.Time{}, false, ctx.Err()
	case err != nil && !wait.Interrupted(err):
		return time.Time{}, false, fmt.Errorf("%s: %w", what, err)
	case err != nil || settledAt.After(start.Add(timeout)):
		r.env.Config.Progressf("  %s: not settled within %v", what, timeout)
		return time.Time{}, false, nil
	}
	r.env.Config.Progressf("  %s: settled (%.1f s)", what, settledAt.Sub(start).Seconds())
	return settledAt, true, nil
}

// settled tells whether every replica runs and Kubernetes and Linode agree; not while
// kube-apiserver does not answer.
func (r *chaosRun) settled(ctx context.Context) bool {
	notRunning, err := r.podsNotRunning(ctx)
	return err == nil && notRunning == 0 && r.env.Cluster.CheckConsistency(ctx) == nil
}

// podsNotRunning counts the replicas that are not running and ready: the target less the pods
// that run, not being deleted, on a node.
func (r *chaosRun) podsNotRunning(ctx context.Context) (int, error) {
	var pods corev1.PodList
	if err := r.env.Cluster.Kube.List(ctx, &pods, client.InNamespace(harness.Namespace), client.MatchingLabels{harness.PoolLabel: chaosPool}); err != nil {
		return 0, err
	}
	running := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp.IsZero() && pod.Status.Phase == corev1.PodRunning && nodesim.PodReady(pod) {
			running++
		}
	}
	return max(0, r.target-running), nil
}
