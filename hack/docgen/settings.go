package main

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
)

// setting is one flag of the controller, with the environment variable that sets it too.
type setting struct {
	flag, env, def, usage string
}

// settingsPage lists the provider's settings, then core's, each with the Helm value the chart's
// Deployment template (deploymentTemplate) sets it from.
func settingsPage(deploymentTemplate string) (string, error) {
	template, err := os.ReadFile(deploymentTemplate)
	if err != nil {
		return "", err
	}
	helmValues := helmValuesByEnv(string(template))
	// Every flag's default is read from its environment variable when it registers: this
	// process's environment must not leak into the page.
	environment := os.Environ()
	os.Clearenv()
	ours := flagsOf(&options.Options{})
	core := flagsOf(&coreoptions.Options{})
	for _, kv := range environment {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			return "", err
		}
	}

	var b strings.Builder
	b.WriteString(generatedHeader("go run ./hack/docgen", "pkg/operator/options, Karpenter core's options and charts/karpenter/templates/deployment.yaml"))
	b.WriteString(`# Settings

The controller reads each setting from a flag or from the environment variable of the same name
(the flag wins). The Helm chart sets them from the values named here; a setting without a value
can still be given through ` + "`controller.env`" + `. The controller checks every setting at start-up
and exits with one line per problem, naming the setting and the Helm value.

`)
	writeSettings(&b, "Provider settings", ours, helmValues)
	writeSettings(&b, "Karpenter core settings", core, helmValues)
	return b.String(), nil
}

func writeSettings(b *strings.Builder, title string, settings []setting, helmValues map[string]string) {
	fmt.Fprintf(b, "## %s\n\n| environment variable | flag | Helm value | default | what it does |\n|---|---|---|---|---|\n", title)
	for _, s := range settings {
		helm := helmValues[s.env]
		if helm == "" {
			helm = "-"
		}
		fmt.Fprintf(b, "| `%s` | `--%s` | %s | %s | %s |\n", s.env, s.flag, helm, code(s.def), cell(s.usage))
	}
	b.WriteString("\n")
}

// flagsOf registers the option set's flags and lists them in the order flag.VisitAll gives (by
// name).
func flagsOf(set interface{ AddFlags(*coreoptions.FlagSet) }) []setting {
	fs := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("controller", flag.ContinueOnError)}
	set.AddFlags(fs)
	var out []setting
	fs.VisitAll(func(f *flag.Flag) {
		env, usage := envOf(f)
		def := f.DefValue
		if def == "" {
			def = boolFuncDefault(set, f.Name)
		}
		out = append(out, setting{flag: f.Name, env: env, def: def, usage: usage})
	})
	return out
}

// boolFuncDefault is the default of a boolean flag core registers as a function
// (FlagSet.BoolVarWithEnv), which keeps no default of its own: the value AddFlags left in the
// option set's field of the same name ("enable-profiling": EnableProfiling).
func boolFuncDefault(set any, flagName string) string {
	options := reflect.ValueOf(set).Elem()
	want := strings.ReplaceAll(flagName, "-", "")
	for i := range options.NumField() {
		field := options.Type().Field(i)
		if field.IsExported() && field.Type.Kind() == reflect.Bool && strings.EqualFold(field.Name, want) {
			return strconv.FormatBool(options.Field(i).Bool())
		}
	}
	return ""
}

// usageEnv is the "[ENV] " prefix the provider's flags name their environment variable with.
var usageEnv = regexp.MustCompile(`^\[([A-Z0-9_]+)\]\s*`)

// envOf is the flag's environment variable: the one its help names, or else (core's flags) its name
// in upper snake case, which is how core derives them.
func envOf(f *flag.Flag) (env, usage string) {
	if m := usageEnv.FindStringSubmatch(f.Usage); m != nil {
		return m[1], strings.TrimPrefix(f.Usage, m[0])
	}
	return strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), f.Usage
}

var (
	envName     = regexp.MustCompile(`^\s*- name: ([A-Z0-9_]+)\s*$`)
	valuesPath  = regexp.MustCompile(`\.Values\.([A-Za-z0-9_.]+)`)
	chartDerive = regexp.MustCompile(`include "|fieldRef|resourceFieldRef|secretKeyRef`)
)

// helmValuesByEnv reads, for each environment variable of the Deployment template, the value it
// comes from: ".Values.x.y" as `x.y`, or "set by the chart" when the template derives it.
func helmValuesByEnv(template string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(template, "\n")
	for i, line := range lines {
		m := envName.FindStringSubmatch(line)
		if m == nil || out[m[1]] != "" {
			continue
		}
		// {{- with .Values.x }} around the variable: its value is "{{ . }}".
		if i > 0 && strings.Contains(lines[i-1], "{{- with .Values.") {
			out[m[1]] = "`" + valuesPath.FindStringSubmatch(lines[i-1])[1] + "`"
			continue
		}
		// The variable's value is on the lines up to the next list item or block.
		for _, next := range lines[i+1 : min(i+6, len(lines))] {
			if envName.MatchString(next) || strings.Contains(next, "{{- end") || strings.Contains(next, "{{- else") {
				break
			}
			if v := valuesPath.FindStringSubmatch(next); v != nil {
				out[m[1]] = "`" + v[1] + "`"
				break
			}
			if chartDerive.MatchString(next) {
				out[m[1]] = "set by the chart"
				break
			}
		}
	}
	return out
}

func code(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// cell makes text fit in a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "\n", " "), "|", `\|`)
}

func generatedHeader(command, sources string) string {
	return fmt.Sprintf("<!-- Generated by `%s` from %s: do not edit; `make generate` writes it again. -->\n\n", command, sources)
}
