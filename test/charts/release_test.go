package charts_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// alphaVersion is the alpha provider's last release: a version at or below it is one that
// Renovate, Flux and Argo CD would never offer as an upgrade to the alpha's users.
const alphaVersion = "0.1.5"

// TestTheChartsDefaultImageIsTheOneTheReleasePublishes renders the chart as the README installs
// it and checks that its Deployments pull the image `make release` pushes: the Makefile's
// RELEASE_REPO at v<VERSION>, the version both charts carry.
func TestTheChartsDefaultImageIsTheOneTheReleasePublishes(t *testing.T) {
	root := filepath.Join(chartrender.Dir("karpenter"), "..", "..")
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	parsed, err := semver.Parse(version)
	if err != nil {
		t.Fatalf("VERSION %q is not a semantic version: %v", version, err)
	}
	if !parsed.GT(semver.MustParse(alphaVersion)) {
		t.Errorf("VERSION %s is not above the alpha's %s: its users would never be offered it", version, alphaVersion)
	}
	for _, name := range []string{"karpenter", "karpenter-crd"} {
		chart, err := loader.Load(chartrender.Dir(name))
		if err != nil {
			t.Fatal(err)
		}
		if chart.Metadata.Version != version || chart.Metadata.AppVersion != version {
			t.Errorf("chart %s is version %s, appVersion %s; VERSION is %s", name, chart.Metadata.Version, chart.Metadata.AppVersion, version)
		}
	}

	want := makeVariable(t, filepath.Join(root, "Makefile"), "RELEASE_REPO") + ":v" + version
	// Instance mode adds the node identity component's Deployment, from the same image.
	var objects []*unstructured.Unstructured
	for _, values := range []map[string]any{required(nil), instanceMode(nil)} {
		rendered, err := chartrender.Render("karpenter", values)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, rendered...)
	}
	deployments := 0
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		deployments++
		d, err := chartrender.As[appsv1.Deployment](obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			if c.Image != want {
				t.Errorf("Deployment %s, container %s: image %s, want %s, which the release publishes", d.Name, c.Name, c.Image, want)
			}
		}
	}
	if deployments < 3 {
		t.Fatalf("the chart rendered %d Deployments, want the controller's in both modes and the node identity component's", deployments)
	}
}

// makeVariable is the value of a simply expanded variable (NAME := value) of the Makefile.
func makeVariable(t *testing.T, makefile, name string) string {
	t.Helper()
	file, err := os.Open(makefile)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), name+" := "); ok {
			return strings.TrimSpace(value)
		}
	}
	t.Fatalf("%s sets no %s", makefile, name)
	return ""
}
