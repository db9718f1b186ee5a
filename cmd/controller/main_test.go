package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// token is what the emulator accepts; the tests look for it in everything the controller writes.
const token = "tok-5f1c0e9b2d7a4c8e"

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "karpenter-controller-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "controller")
	// Stamped as the release build stamps it, so that the tests see the version where users do.
	build := exec.Command("go", "build", "-o", binary, "-ldflags", "-X github.com/linode/karpenter-provider-linode/pkg/version.version="+releaseVersion(), ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the controller:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// releaseVersion is the VERSION file's.
func releaseVersion() string {
	data, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(data))
}

// process is a running controller and what it wrote.
type process struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	err    error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs the controller with env as its whole environment (plus PATH and HOME), so that
// nothing of the test's own environment changes its behaviour.
func start(t *testing.T, env map[string]string) *process {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for key, value := range env {
		cmd.Env = append(cmd.Env, key+"="+value)
	}
	p := &process{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// wait returns the exit code once the process exits, or fails the test after timeout.
func (p *process) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("the controller was still running after %s; it wrote:\n%s", timeout, p.output)
	}
	var exitErr *exec.ExitError
	if errors.As(p.err, &exitErr) {
		return exitErr.ExitCode()
	}
	return 0
}

func (p *process) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		// SIGQUIT makes the Go runtime print every goroutine: what the shutdown waits for.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		t.Errorf("the controller did not stop within 15s of SIGINT; the end of its output:\n%s", goroutinesOf(p.output.String()))
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// chartPort is a port as the chart's values take it: a number, which its schema requires.
func chartPort(port string) int {
	n, err := strconv.Atoi(port)
	if err != nil {
		panic(fmt.Sprintf("port %q is not a number", port))
	}
	return n
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// eventually polls until condition holds or fails the test with the controller's output.
func eventually(t *testing.T, p *process, timeout time.Duration, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !condition() {
		select {
		case <-p.done:
			t.Fatalf("the controller exited while waiting until %s; it wrote:\n%s", what, p.output)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s; the end of the controller's output:\n%s", what, timeout, tail(p.output.String(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func startEmulator(t *testing.T, opts ...emulator.Option) *test.Emulator {
	t.Helper()
	e := test.StartEmulatorForTest(t, append([]emulator.Option{emulator.WithToken(token)}, opts...)...)
	if _, err := e.AddLKECluster("prod", "us-ord", "standard"); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStartupReportsMisconfiguration starts the controller the way users get it wrong and
// checks that it exits with the line that says what to fix, never showing the token.
func TestStartupReportsMisconfiguration(t *testing.T) {
	e := startEmulator(t)
	base := func(overrides map[string]string) map[string]string {
		env := map[string]string{
			"CLUSTER_NAME": "prod", "LINODE_TOKEN": token, "LINODE_URL": e.URL(),
			"HEALTH_PROBE_PORT": freePort(t), "METRICS_PORT": freePort(t),
		}
		for key, value := range overrides {
			if value == "" {
				delete(env, key)
			} else {
				env[key] = value
			}
		}
		return env
	}
	tests := []struct {
		name     string
		env      map[string]string
		wantCode int
		wantLine string
	}{
		{
			name:     "no token",
			env:      base(map[string]string{"LINODE_TOKEN": ""}),
			wantCode: 2,
			wantLine: "karpenter: LINODE_TOKEN is not set: create a personal access token",
		},
		{
			name:     "no cluster name",
			env:      base(map[string]string{"CLUSTER_NAME": ""}),
			wantCode: 2,
			wantLine: "karpenter: CLUSTER_NAME is not set: set it to the label of your LKE cluster",
		},
		{
			name:     "unknown mode",
			env:      base(map[string]string{"KARPENTER_MODE": "fargate"}),
			wantCode: 2,
			wantLine: `karpenter: KARPENTER_MODE "fargate" is not valid: use lke or instance`,
		},
		{
			name:     "instance mode without a region",
			env:      base(map[string]string{"KARPENTER_MODE": "instance", "CLUSTER_NAME": ""}),
			wantCode: 2,
			wantLine: "karpenter: LINODE_REGION is not set: instance mode has no LKE cluster to discover it from",
		},
		{
			name:     "instance mode with a CLUSTER_ENDPOINT that is not an https URL",
			env:      base(map[string]string{"KARPENTER_MODE": "instance", "CLUSTER_NAME": "", "LINODE_REGION": "us-ord", "CLUSTER_ENDPOINT": "10.0.0.1:6443"}),
			wantCode: 2,
			wantLine: `karpenter: CLUSTER_ENDPOINT "10.0.0.1:6443" is not the https URL of a Kubernetes API server`,
		},
		{
			name:     "malformed batch duration",
			env:      base(map[string]string{"BATCH_IDLE_DURATION": "1"}),
			wantCode: 2,
			wantLine: `karpenter: BATCH_IDLE_DURATION "1" is not valid: use a duration such as 1s`,
		},
		{
			name:     "a setting of the alpha provider with no equivalent",
			env:      base(map[string]string{"DISABLE_DRY_RUN": "true"}),
			wantCode: 2,
			wantLine: "karpenter: DISABLE_DRY_RUN=true is not supported: LinodeNodeClasses are validated at apply time and by their status conditions",
		},
		{
			name:     "unknown cluster name",
			env:      base(map[string]string{"CLUSTER_NAME": "prdo"}),
			wantCode: 1,
			wantLine: `karpenter: CLUSTER_NAME "prdo" matches no LKE cluster; clusters this token sees: "prod"`,
		},
		{
			name:     "unknown region",
			env:      base(map[string]string{"KARPENTER_MODE": "instance", "LINODE_REGION": "us-nowhere"}),
			wantCode: 1,
			wantLine: `karpenter: LINODE_REGION "us-nowhere" is not a Linode region`,
		},
		{
			name:     "a region other than the LKE cluster's",
			env:      base(map[string]string{"LINODE_REGION": "us-sea"}),
			wantCode: 1,
			wantLine: `karpenter: LINODE_REGION "us-sea" is not the region of LKE cluster "prod" (us-ord), where LKE launches all its nodes: unset LINODE_REGION in LKE mode (helm: region)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, tt.env)
			code := p.wait(t, 30*time.Second)
			output := p.output.String()
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(output, tt.wantLine+"") {
				t.Errorf("output lacks %q:\n%s", tt.wantLine, output)
			}
			if strings.Contains(output, "goroutine ") || strings.Contains(output, "panic") {
				t.Errorf("the controller crashed instead of explaining:\n%s", output)
			}
			for _, secret := range []string{token, tt.env["LINODE_TOKEN"]} {
				if secret != "" && strings.Contains(output, secret) {
					t.Errorf("the output shows the token %q:\n%s", secret, output)
				}
			}
		})
	}
}

// TestStartupWaitsOutLinodeOutages: while the Linode API fails, or refuses the token, the
// controller stays up and ready, serving its webhooks, which need no Linode API; it says why it
// waits, neither exits nor crash-loops, and starts its controllers once the API answers (for a
// refused token, once the token's file holds a valid one, as the kubelet updates a mounted Secret).
func TestStartupWaitsOutLinodeOutages(t *testing.T) {
	tests := []struct {
		name     string
		apiToken string
		// fail makes the API fail and returns what ends the failure.
		fail    func(t *testing.T, e *test.Emulator, tokenFile string) (restore func())
		wantLog string
	}{
		{
			name:     "an outage",
			apiToken: token,
			fail: func(t *testing.T, e *test.Emulator, _ string) func() {
				outage := e.InjectFault(emulator.Fault{Route: "/lke/clusters", ErrorRate: 1, ErrorStatus: http.StatusInternalServerError})
				return func() { e.RemoveFault(outage) }
			},
			wantLog: "Linode API unavailable, retrying",
		},
		{
			name:     "a refused token",
			apiToken: "tok-revoked-0000",
			fail: func(t *testing.T, _ *test.Emulator, tokenFile string) func() {
				return func() {
					next := tokenFile + ".next"
					if err := os.WriteFile(next, []byte(token), 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(next, tokenFile); err != nil {
						t.Fatal(err)
					}
				}
			},
			wantLog: "the Linode API refuses LINODE_TOKEN (401 Unauthorized)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := startCluster(t)
			e := startEmulator(t)
			probePort := freePort(t)
			objects, controllerEnv := renderRelease(t, map[string]any{
				"apiToken":   tt.apiToken,
				"settings":   map[string]any{"clusterName": "prod", "apiURL": e.URL()},
				"controller": map[string]any{"healthProbe": map[string]any{"port": chartPort(probePort)}, "metrics": map[string]any{"port": chartPort(freePort(t))}},
			})
			applyAsHelm(context.Background(), t, env.Client, objects)
			controllerEnv["KUBECONFIG"] = env.KubeconfigPath
			restore := tt.fail(t, e, controllerEnv["LINODE_TOKEN_FILE"])
			p := start(t, controllerEnv)

			eventually(t, p, time.Minute, "ready, serving the webhooks, while the Linode API fails", func() bool {
				code, _, err := get("http://127.0.0.1:" + probePort + "/readyz")
				return err == nil && code == http.StatusOK
			})
			if code, _, err := get("http://127.0.0.1:" + probePort + "/healthz"); err != nil || code != http.StatusOK {
				t.Errorf("/healthz = %d, %v while the Linode API fails; the kubelet would restart the pod", code, err)
			}
			eventually(t, p, 20*time.Second, "retrying at least twice, saying why", func() bool {
				return strings.Count(p.output.String(), "Linode API unavailable, retrying") >= 2 && strings.Contains(p.output.String(), tt.wantLog)
			})
			if strings.Contains(p.output.String(), "found the Linode side of the cluster") {
				t.Fatalf("the controllers started while the Linode API failed")
			}
			restore()
			eventually(t, p, 2*time.Minute, "starting the controllers once the API answers", func() bool {
				return strings.Contains(p.output.String(), "found the Linode side of the cluster")
			})
			p.stop(t)
			if strings.Contains(p.output.String(), token) || strings.Contains(p.output.String(), tt.apiToken) {
				t.Errorf("the token shows in the output")
			}
		})
	}
}

// TestStartupExitsForASettingTheAPIProvesWrongAfterAnOutage: a controller that started serving
// its webhooks during an outage still exits with the line that says what to fix once the API
// answers that the cluster does not exist.
func TestStartupExitsForASettingTheAPIProvesWrongAfterAnOutage(t *testing.T) {
	env := startCluster(t)
	e := startEmulator(t)
	outage := e.InjectFault(emulator.Fault{Route: "/lke/clusters", ErrorRate: 1, ErrorStatus: http.StatusInternalServerError})
	probePort := freePort(t)
	objects, controllerEnv := renderRelease(t, map[string]any{
		"apiToken":   token,
		"settings":   map[string]any{"clusterName": "prdo", "apiURL": e.URL()},
		"controller": map[string]any{"healthProbe": map[string]any{"port": chartPort(probePort)}, "metrics": map[string]any{"port": chartPort(freePort(t))}},
	})
	applyAsHelm(context.Background(), t, env.Client, objects)
	controllerEnv["KUBECONFIG"] = env.KubeconfigPath
	p := start(t, controllerEnv)
	eventually(t, p, time.Minute, "ready, serving the webhooks, during the outage", func() bool {
		code, _, err := get("http://127.0.0.1:" + probePort + "/readyz")
		return err == nil && code == http.StatusOK
	})
	e.RemoveFault(outage)
	if code := p.wait(t, 2*time.Minute); code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	if want := `karpenter: CLUSTER_NAME "prdo" matches no LKE cluster`; !strings.Contains(p.output.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, tail(p.output.String(), 40))
	}
}

// tail returns the last n lines of text.
// goroutinesOf keeps, of a Go runtime's SIGQUIT dump, the goroutines that run the project's code
// or wait in controller-runtime's manager: what a hung shutdown waits for.
func goroutinesOf(output string) string {
	start := strings.Index(output, "SIGQUIT")
	if start < 0 {
		return tail(output, 40)
	}
	var kept []string
	for _, goroutine := range strings.Split(output[start:], "\n\n") {
		if strings.Contains(goroutine, "karpenter-provider-linode/pkg") || strings.Contains(goroutine, "pkg/manager.") {
			kept = append(kept, goroutine)
		}
	}
	return strings.Join(kept, "\n\n")
}

func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startCluster starts a kube-apiserver with etcd and a kube-scheduler, stopped when the test ends.
func startCluster(t *testing.T) *environment.Environment {
	t.Helper()
	env, err := environment.New(environment.WithScheduler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return env
}

// renderRelease renders the karpenter chart with the values, and the environment its Deployment
// gives the controller (the token's file in a directory of the test's).
func renderRelease(t *testing.T, values map[string]any) ([]*unstructured.Unstructured, map[string]string) {
	t.Helper()
	// Every controller serves the conversion webhook: on the chart's port 8443 it would meet any
	// other controller on this machine that does the same.
	if webhook, _ := values["webhook"].(map[string]any); webhook["port"] == nil {
		withPort := map[string]any{"port": chartPort(freePort(t))}
		maps.Copy(withPort, webhook)
		values = maps.Clone(values)
		values["webhook"] = withPort
	}
	objects, err := chartrender.Render("karpenter", values)
	if err != nil {
		t.Fatal(err)
	}
	controllerEnv, err := chartrender.ControllerEnvironment(objects, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return objects, controllerEnv
}

// applyAsHelm creates or updates the objects as `helm install` and `helm upgrade` do; a
// Deployment stays without pods (nothing runs them here), the test runs its controller instead.
func applyAsHelm(ctx context.Context, t *testing.T, c client.Client, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objects {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}
