package operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

func init() {
	// Core's operator parses every registered option set; ours travel with core's.
	coreoptions.Injectables = append(coreoptions.Injectables, options.Injectables...)
}

// ErrHelp is returned by ParseSettings when the user asked for --help; the usage was printed.
var ErrHelp = flag.ErrHelp

// SettingsError lists every bad setting, one problem per line, each naming the setting and
// saying what to do.
type SettingsError struct {
	Problems []string
}

func (e *SettingsError) Error() string {
	return "invalid settings:\n" + strings.Join(e.Problems, "\n")
}

// ParseSettings parses Karpenter core's settings and ours from args and the environment, as
// core's operator will, reports every problem, and returns ctx carrying both option sets. Core's
// operator panics with a stack trace on the first bad setting, so the controller runs this
// first: a user sees one line per problem and an exit status instead of a goroutine dump.
func ParseSettings(ctx context.Context, args []string, usage io.Writer) (context.Context, error) {
	fs := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	fs.SetOutput(io.Discard)
	core, provider := &coreoptions.Options{}, &options.Options{}
	core.AddFlags(fs)
	provider.AddFlags(fs)

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fs.PrintDefaults()
			return ctx, ErrHelp
		}
		return ctx, &SettingsError{Problems: []string{fmt.Sprintf("%v (run with --help for the list of flags)", err)}}
	}
	problems := malformedCoreEnvironment()
	if len(problems) == 0 {
		// Core stops at its first problem; the malformed values above are the likely ones.
		if err := core.Parse(fs, args...); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := provider.Validate(); err != nil {
		problems = append(problems, strings.Split(err.Error(), "\n")...)
	}
	if len(problems) > 0 {
		return ctx, &SettingsError{Problems: problems}
	}
	return provider.ToContext(core.ToContext(ctx)), nil
}

// coreSetting is one of Karpenter core's environment variables whose value has a form.
type coreSetting struct {
	name  string
	check func(string) bool
	hint  string
}

var (
	isDuration = func(v string) bool { _, err := time.ParseDuration(v); return err == nil }
	isInt      = func(v string) bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }
	isBool     = func(v string) bool { return v == "true" || v == "false" }
	oneOf      = func(values ...string) func(string) bool {
		return func(v string) bool { return slices.Contains(values, v) }
	}
)

// coreSettings are the core settings whose malformed values core would silently replace with
// its default (a BATCH_MAX_DURATION of "10" would become 10s without a word) or refuse with a
// message that does not say what is valid.
var coreSettings = []coreSetting{
	{"BATCH_MAX_DURATION", isDuration, "a duration such as 10s (helm: settings.batchMaxDuration)"},
	{"BATCH_IDLE_DURATION", isDuration, "a duration such as 1s (helm: settings.batchIdleDuration)"},
	{"METRICS_PORT", isInt, "a port number (helm: controller.metrics.port)"},
	{"HEALTH_PROBE_PORT", isInt, "a port number (helm: controller.healthProbe.port)"},
	{"KUBE_CLIENT_QPS", isInt, "a whole number"},
	{"KUBE_CLIENT_BURST", isInt, "a whole number"},
	{"MEMORY_LIMIT", isInt, "a number of bytes"},
	{"CPU_REQUESTS", isInt, "a number of millicores"},
	{"ENABLE_PROFILING", isBool, "true or false"},
	{"DISABLE_LEADER_ELECTION", isBool, "true or false"},
	{"LOG_LEVEL", oneOf("debug", "info", "error"), "debug, info or error (helm: logLevel)"},
	{"PREFERENCE_POLICY", oneOf(string(coreoptions.PreferencePolicyRespect), string(coreoptions.PreferencePolicyIgnore)), "Respect or Ignore (helm: settings.preferencePolicy)"},
	{"MIN_VALUES_POLICY", oneOf(string(coreoptions.MinValuesPolicyStrict), string(coreoptions.MinValuesPolicyBestEffort)), "Strict or BestEffort (helm: settings.minValuesPolicy)"},
	{"FEATURE_GATES", func(v string) bool { _, err := coreoptions.ParseFeatureGates(v); return err == nil }, "Name=true|false pairs separated by commas, e.g. NodeRepair=true (helm: settings.featureGates)"},
}

func malformedCoreEnvironment() []string {
	var problems []string
	for _, s := range coreSettings {
		if value, ok := os.LookupEnv(s.name); ok && !s.check(value) {
			problems = append(problems, fmt.Sprintf("%s %q is not valid: use %s", s.name, value, s.hint))
		}
	}
	return problems
}
