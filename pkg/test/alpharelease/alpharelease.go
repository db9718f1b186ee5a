// Package alpharelease reads what the alpha Linode provider published (its CRD, example
// manifests and chart values) from ../shared/seed-compat, beside the repository, for the tests
// of the upgrade from it. The files are read where they are, never copied into the repository.
package alpharelease

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/awslabs/operatorpkg/object"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// Dir is the directory of the alpha release's files: ../shared/seed-compat from the repository
// root. A test reading them first calls shared.Require(t, shared.SeedCompat).
func Dir() string { return shared.Dir(shared.SeedCompat) }

// CRD is the alpha LinodeNodeClass CRD, as its karpenter-crd chart installs it.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), "crds", "karpenter.k8s.linode_linodenodeclasses.yaml"))
	if err != nil {
		return nil, err
	}
	return object.Unmarshal[apiextensionsv1.CustomResourceDefinition](data), nil
}

// Example is one manifest file of the alpha release's examples.
type Example struct {
	Name    string
	Objects []*unstructured.Unstructured
}

// Examples are the alpha release's example manifests (its examples directory and the manifests
// of its end-to-end tests), each file's objects in file order, files by name.
func Examples() ([]Example, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "examples", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no example manifests in %s", Dir())
	}
	sort.Strings(files)
	var examples []Example
	for _, file := range files {
		objects, err := decodeFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		examples = append(examples, Example{Name: filepath.Base(file), Objects: objects})
	}
	return examples, nil
}

// ChartValues are the alpha chart's values.yaml, as Helm reads them.
func ChartValues() (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), "chart", "values.yaml"))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	return values, sigsyaml.Unmarshal(data, &values)
}

func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}
