package requestrules

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// TestRecordedBodiesTheAPIAcceptedPass checks every request body the real API answered with
// success in the recordings against the rules: none may be refused.
func TestRecordedBodiesTheAPIAcceptedPass(t *testing.T) {
	dir := shared.Require(t, shared.LinodeAPI)
	files, err := filepath.Glob(filepath.Join(dir, "recordings", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s: %v", dir, err)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Interactions []struct {
				Request  struct{ Method, URL, Body string }
				Response struct{ Code int }
			}
		}
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, in := range c.Interactions {
			if in.Request.Body == "" || in.Response.Code >= 300 {
				continue
			}
			u, err := url.Parse(in.Request.URL)
			if err != nil {
				t.Fatal(err)
			}
			refusal, err := Check(in.Request.Method, u.EscapedPath(), []byte(in.Request.Body))
			if err != nil {
				t.Fatal(err)
			}
			if refusal != nil {
				t.Errorf("%s: %s %s refused (%s: %s, by %s): %s", filepath.Base(f), in.Request.Method, u.Path, refusal.Field, refusal.Reason, refusal.Source, in.Request.Body)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("only %d recorded bodies checked", checked)
	}
}

// TestGoRulesWithoutTheDescription checks the old bodies of issue 46 against the Go rules alone,
// as on a checkout without ../shared.
func TestGoRulesWithoutTheDescription(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"kubernetes.io label", "PUT", "/v4/lke/clusters/1/pools/2", `{"labels":{"node.kubernetes.io/instance-type":"g6-standard-2"}}`, "labels"},
		{"empty label value", "POST", "/v4/lke/clusters/1/pools", `{"type":"g6-standard-2","count":1,"labels":{"team":""}}`, "labels"},
		{"taint valued linode.com", "POST", "/v4/lke/clusters/1/pools", `{"taints":[{"key":"a","value":"linode.com","effect":"NoSchedule"}]}`, "taints[0].value"},
		{"taint with an empty value", "POST", "/v4/lke/clusters/1/pools", `{"taints":[{"key":"nvidia.com/gpu","value":"","effect":"NoSchedule"}]}`, ""},
		{"pool labels null", "POST", "/v4/lke/clusters/1/pools", `{"type":"g6-standard-2","count":1,"labels":null,"taints":null}`, ""},
		{"prefix-only SLAAC range", "POST", "/v4/linode/instances", `{"interfaces":[{"purpose":"vpc","subnet_id":1,"ipv6":{"slaac":[{"range":"/64"}]}}]}`, "interfaces[0].ipv6.slaac[0].range"},
		{"SLAAC range of another length", "POST", "/v4/linode/instances", `{"interface_generation":"linode","interfaces":[{"vpc":{"subnet_id":1,"ipv6":{"slaac":[{"range":"2600:3c11::/56"}]}}}]}`, "interfaces[0].vpc.ipv6.slaac[0].range"},
		{"prefix-only ip_ranges", "POST", "/v4/linode/instances/1/configs", `{"interfaces":[{"purpose":"vpc","subnet_id":1,"ip_ranges":["/28"]}]}`, "interfaces[0].ip_ranges[0]"},
		{"ip_ranges on a public interface", "POST", "/v4/linode/instances", `{"interfaces":[{"purpose":"public","ip_ranges":["10.0.0.0/28"]}]}`, "interfaces[0].ip_ranges"},
		{"config update with interfaces null", "PUT", "/v4/linode/instances/1/configs/2", `{"interfaces":null}`, "interfaces"},
		{"config create with interfaces null", "POST", "/v4/linode/instances/1/configs", `{"label":"a","devices":{},"interfaces":null}`, ""},
		{"appended VPC interface with its subnet alone", "POST", "/v4beta/linode/instances/1/configs/2/interfaces", `{"purpose":"vpc","subnet_id":3}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *Refusal
			var object map[string]any
			if err := json.Unmarshal([]byte(tc.body), &object); err != nil {
				t.Fatal(err)
			}
			for _, rule := range goRules {
				if rule.method == tc.method && matchesPath(rule.path, tc.path) {
					got = rule.check(object)
				}
			}
			switch {
			case tc.field == "" && got != nil:
				t.Errorf("refused: %+v", *got)
			case tc.field != "" && (got == nil || got.Field != tc.field):
				t.Errorf("got %+v; want a refusal naming %q", got, tc.field)
			}
		})
	}
}

// TestAbsentDescription: on a clone without ../shared the Go rules apply alone; under CI=true the
// description is required.
func TestAbsentDescription(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "openapi.yaml")
	t.Setenv("CI", "")
	if _, err := readDescription(missing); !errors.Is(err, errDescriptionAbsent) {
		t.Errorf("without CI: %v; want the description reported absent", err)
	}
	t.Setenv("CI", "true")
	if _, err := readDescription(missing); err == nil || errors.Is(err, errDescriptionAbsent) {
		t.Errorf("under CI=true: %v; want an error", err)
	}
}
