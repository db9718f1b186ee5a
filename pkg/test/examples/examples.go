// Package examples reads the LinodeNodeClasses and NodePools a user copies: the files of
// examples/ and the yaml blocks of the docs. It links nothing but the APIs and a YAML reader, so
// that a test binary that reads an example (a fuzz target's, whose every package go test -fuzz
// instruments) stays small.
package examples

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// File is the LinodeNodeClass and NodePool of examples/<file>, as a user applies them.
func File(file string) (*v1.LinodeNodeClass, *karpv1.NodePool, error) {
	path, err := shared.RepositoryFile(filepath.Join("examples", file))
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var nodeClass *v1.LinodeNodeClass
	var nodePool *karpv1.NodePool
	reader := yamlutil.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("examples/%s: %w", file, err)
		}
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return nil, nil, fmt.Errorf("examples/%s: %w", file, err)
		}
		switch kind.Kind {
		case v1.Kind:
			nodeClass = &v1.LinodeNodeClass{}
			err = yaml.UnmarshalStrict(doc, nodeClass)
		case "NodePool":
			nodePool = &karpv1.NodePool{}
			err = yaml.UnmarshalStrict(doc, nodePool)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("examples/%s: %s: %w", file, kind.Kind, err)
		}
	}
	if nodeClass == nil || nodePool == nil {
		return nil, nil, fmt.Errorf("examples/%s holds no LinodeNodeClass and NodePool", file)
	}
	return nodeClass, nodePool, nil
}

// yamlBlocks are a Markdown page's yaml code blocks.
var yamlBlocks = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// DocsNodeClass is the LinodeNodeClass called name in the yaml blocks of a page of the docs (a
// path from the repository's root, e.g. docs/instance-mode.md), as a user copies it.
func DocsNodeClass(page, name string) (*v1.LinodeNodeClass, error) {
	path, err := shared.RepositoryFile(page)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for _, block := range yamlBlocks.FindAllSubmatch(text, -1) {
		reader := yamlutil.NewYAMLReader(bufio.NewReader(bytes.NewReader(block[1])))
		for {
			doc, err := reader.Read()
			if err != nil {
				break
			}
			nodeClass := &v1.LinodeNodeClass{}
			if yaml.Unmarshal(doc, nodeClass) == nil && nodeClass.Kind == v1.Kind && nodeClass.Name == name {
				if err := yaml.UnmarshalStrict(doc, nodeClass); err != nil {
					return nil, fmt.Errorf("%s's LinodeNodeClass %s: %w", page, name, err)
				}
				return nodeClass, nil
			}
		}
	}
	return nil, fmt.Errorf("%s has no LinodeNodeClass %s", page, name)
}
