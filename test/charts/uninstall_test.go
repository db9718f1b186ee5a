package charts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmkube "helm.sh/helm/v4/pkg/kube"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// TestCRDChartKeepsTheCRDsOnUninstall installs the CRD chart with Helm into a real apiserver and
// uninstalls it: by default the CRDs stay, and installing the chart again adopts them; with
// keepOnUninstall=false the uninstall deletes them. A misspelt value fails the install itself.
func TestCRDChartKeepsTheCRDsOnUninstall(t *testing.T) {
	env, err := environment.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := env.Client

	// The environment installs the CRDs itself: they are marked as the release's, as Helm adopts
	// objects, rather than deleted, which can take minutes on a busy machine.
	rendered, err := chartrender.Render("karpenter-crd", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, obj := range rendered {
		names = append(names, obj.GetName())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := kube.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); err != nil {
			t.Fatal(err)
		}
		crd.Labels = map[string]string{"app.kubernetes.io/managed-by": "Helm"}
		crd.Annotations["meta.helm.sh/release-name"] = "karpenter-crd"
		crd.Annotations["meta.helm.sh/release-namespace"] = chartrender.Namespace
		if err := kube.Update(ctx, crd); err != nil {
			t.Fatal(err)
		}
	}

	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.KubeconfigPath
	config := action.NewConfiguration()
	if err := config.Init(flags, chartrender.Namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	chrt, err := loader.Load(chartrender.Dir("karpenter-crd"))
	if err != nil {
		t.Fatal(err)
	}
	install := func(values map[string]any) error {
		install := action.NewInstall(config)
		install.ReleaseName, install.Namespace, install.WaitStrategy = "karpenter-crd", chartrender.Namespace, helmkube.HookOnlyStrategy
		_, err := install.RunWithContext(ctx, chrt, values)
		return err
	}
	uninstall := func() {
		t.Helper()
		uninstall := action.NewUninstall(config)
		uninstall.WaitStrategy = helmkube.HookOnlyStrategy
		if _, err := uninstall.Run("karpenter-crd"); err != nil {
			t.Fatal(err)
		}
	}

	if err := install(map[string]any{"keepOnUninstal": false}); err == nil || !strings.Contains(err.Error(), "'keepOnUninstal'") {
		t.Errorf("helm install with keepOnUninstal: %v, want the misspelt value named", err)
	}
	if err := install(nil); err != nil {
		t.Fatal(err)
	}
	uninstall()
	// Helm sends its deletions before Uninstall returns: a deleted CRD is gone or terminating now.
	if deleted := deletedCRDs(ctx, t, kube, names); len(deleted) > 0 {
		t.Errorf("helm uninstall with the defaults deleted CRDs %v; want them kept", deleted)
	}

	if err := install(map[string]any{"keepOnUninstall": false}); err != nil {
		t.Fatalf("installing the chart again over the kept CRDs: %v", err)
	}
	uninstall()
	if deleted := deletedCRDs(ctx, t, kube, names); len(deleted) != len(names) {
		t.Errorf("helm uninstall with keepOnUninstall=false deleted CRDs %v; want all of %v", deleted, names)
	}
}

// deletedCRDs are the named CRDs that are gone or terminating.
func deletedCRDs(ctx context.Context, t *testing.T, kube client.Client, names []string) []string {
	t.Helper()
	var deleted []string
	for _, name := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := kube.Get(ctx, client.ObjectKey{Name: name}, crd)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if err != nil || crd.DeletionTimestamp != nil {
			deleted = append(deleted, name)
		}
	}
	return deleted
}
