package planner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/examples"
	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Manifests are the workloads read from files, and the objects they held that are not workloads.
type Manifests struct {
	Workloads
	// Skipped name the objects of kinds the planner does not plan for, with where they are.
	Skipped []string
	// seen is where each object planned for was read, by kind, namespace and name.
	seen map[string]string
}

// parseError is a manifest that could not be read, at a file and line.
type parseError struct {
	file string
	line int
	err  error
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.file, e.line, e.err) }

// ReadManifests reads every path: a file, a directory (its .yaml, .yml and .json files, in
// subdirectories too), or "-" for stdin.
func ReadManifests(paths []string, stdin io.Reader) (*Manifests, error) {
	m := &Manifests{}
	for _, path := range paths {
		if path == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			if err := m.add("<stdin>", data); err != nil {
				return nil, err
			}
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			if err := m.addFile(path); err != nil {
				return nil, err
			}
			continue
		}
		err = filepath.WalkDir(path, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(file) {
			case ".yaml", ".yml", ".json":
				return m.addFile(file)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Manifests) addFile(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return m.add(file, data)
}

// add reads the YAML documents (or a JSON object) of a file.
func (m *Manifests) add(file string, data []byte) error {
	for _, doc := range splitDocuments(data) {
		var object map[string]any
		if err := yaml.Unmarshal(doc.data, &object); err != nil {
			return &parseError{file: file, line: doc.start + yamlErrorLine(err) - 1, err: cleanYAMLError(err)}
		}
		if len(object) == 0 {
			continue
		}
		if err := m.addObject(&unstructured.Unstructured{Object: object}, file, doc.line); err != nil {
			return err
		}
	}
	return nil
}

// document is a YAML document, the line of the file it starts on, and the line of its first
// content, after comments and blank lines, where its object is said to be.
type document struct {
	data        []byte
	start, line int
}

// splitDocuments splits a YAML stream at its "---" lines, as helm template and kubectl write it.
func splitDocuments(data []byte) []document {
	var docs []document
	var current bytes.Buffer
	doc := document{start: 1}
	line := 0
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for scanner.Scan() {
		line++
		text := scanner.Text()
		if text == "---" || strings.HasPrefix(text, "--- ") || strings.HasPrefix(text, "---\t") {
			doc.data = bytes.Clone(current.Bytes())
			docs = append(docs, doc)
			current.Reset()
			doc = document{start: line + 1}
			continue
		}
		if trimmed := strings.TrimSpace(text); doc.line == 0 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			doc.line = line
		}
		current.WriteString(text)
		current.WriteByte('\n')
	}
	doc.data = current.Bytes()
	return append(docs, doc)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine is the line within the document that the YAML parser's error names, 1 if none.
func yamlErrorLine(err error) int {
	if match := yamlLine.FindStringSubmatch(err.Error()); match != nil {
		if n, err := strconv.Atoi(match[1]); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// cleanYAMLError drops the YAML parser's own prefixes and line number, which the file and line
// before it replace.
func cleanYAMLError(err error) error {
	message := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	message = strings.TrimPrefix(message, "yaml: ")
	message = yamlLine.ReplaceAllString(message, "")
	return errors.New(strings.TrimLeft(message, ": "))
}

// addObject adds a workload, a NodePool or a LinodeNodeClass; other kinds are skipped.
func (m *Manifests) addObject(u *unstructured.Unstructured, file string, line int) error {
	at := fmt.Sprintf("%s:%d", file, line)
	decode := func(into any) error {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			return &parseError{file: file, line: line, err: fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)}
		}
		return nil
	}
	group := u.GroupVersionKind().Group
	if u.GetKind() != "List" && u.GetKind() != "" {
		if err := m.once(u, at); err != nil {
			return &parseError{file: file, line: line, err: err}
		}
	}
	switch {
	case u.GetKind() == "List" && u.GetAPIVersion() == "v1":
		items, _, _ := unstructured.NestedSlice(u.Object, "items")
		for _, item := range items {
			object, ok := item.(map[string]any)
			if !ok {
				return &parseError{file: file, line: line, err: errors.New("a List item is not an object")}
			}
			if err := m.addObject(&unstructured.Unstructured{Object: object}, file, line); err != nil {
				return err
			}
		}
		return nil
	case group == "apps" && u.GetKind() == "Deployment":
		var d appsv1.Deployment
		if err := decode(&d); err != nil {
			return err
		}
		m.addPods(d.ObjectMeta, d.Spec.Template, replicas(d.Spec.Replicas))
	case group == "apps" && u.GetKind() == "StatefulSet":
		var s appsv1.StatefulSet
		if err := decode(&s); err != nil {
			return err
		}
		m.addPods(s.ObjectMeta, s.Spec.Template, replicas(s.Spec.Replicas))
	case group == "apps" && u.GetKind() == "ReplicaSet":
		var r appsv1.ReplicaSet
		if err := decode(&r); err != nil {
			return err
		}
		m.addPods(r.ObjectMeta, r.Spec.Template, replicas(r.Spec.Replicas))
	case group == "apps" && u.GetKind() == "DaemonSet":
		var d appsv1.DaemonSet
		if err := decode(&d); err != nil {
			return err
		}
		d.Namespace = namespaceOf(d.ObjectMeta)
		m.DaemonSets = append(m.DaemonSets, &d)
	case group == "batch" && u.GetKind() == "Job":
		var j batchv1.Job
		if err := decode(&j); err != nil {
			return err
		}
		m.addPods(j.ObjectMeta, j.Spec.Template, jobPods(j.Spec))
	case group == "batch" && u.GetKind() == "CronJob":
		var c batchv1.CronJob
		if err := decode(&c); err != nil {
			return err
		}
		m.addPods(c.ObjectMeta, c.Spec.JobTemplate.Spec.Template, jobPods(c.Spec.JobTemplate.Spec))
	case group == "" && u.GetKind() == "Pod":
		var p corev1.Pod
		if err := decode(&p); err != nil {
			return err
		}
		p.Namespace = namespaceOf(p.ObjectMeta)
		m.Pods = append(m.Pods, &p)
	case group == "karpenter.sh" && u.GetKind() == "NodePool":
		var p karpv1.NodePool
		if err := decode(&p); err != nil {
			return err
		}
		m.NodePools = append(m.NodePools, &p)
	case group == apis.Group && u.GetKind() == v1.Kind:
		var c v1.LinodeNodeClass
		if err := decode(&c); err != nil {
			return err
		}
		m.NodeClasses = append(m.NodeClasses, &c)
	case u.GetKind() == "":
		return &parseError{file: file, line: line, err: errors.New("the object has no kind")}
	default:
		name := u.GetName()
		if u.GetNamespace() != "" {
			name = u.GetNamespace() + "/" + name
		}
		m.Skipped = append(m.Skipped, fmt.Sprintf("%s %s (%s)", u.GetKind(), name, at))
	}
	return nil
}

// once refuses a second object of the same kind, namespace and name: the cluster would hold one.
func (m *Manifests) once(u *unstructured.Unstructured, at string) error {
	key := u.GetKind() + " " + u.GetName()
	if u.GetNamespace() != "" {
		key = u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	}
	if first, ok := m.seen[key]; ok {
		return fmt.Errorf("%s is given twice, first at %s", key, first)
	}
	if m.seen == nil {
		m.seen = map[string]string{}
	}
	m.seen[key] = at
	return nil
}

func replicas(n *int32) int {
	if n == nil {
		return 1
	}
	return int(*n)
}

// jobPods is how many pods a Job runs at once: its parallelism (1 by default), at most its
// completions.
func jobPods(spec batchv1.JobSpec) int {
	n := replicas(spec.Parallelism)
	if spec.Completions != nil {
		n = min(n, int(*spec.Completions))
	}
	return n
}

func namespaceOf(meta metav1.ObjectMeta) string {
	if meta.Namespace == "" {
		return corev1.NamespaceDefault
	}
	return meta.Namespace
}

// addPods adds n pods of the template, named after the workload.
func (m *Manifests) addPods(owner metav1.ObjectMeta, template corev1.PodTemplateSpec, n int) {
	for i := range n {
		m.Pods = append(m.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", owner.Name, i), Namespace: namespaceOf(owner),
				Labels: template.Labels, Annotations: template.Annotations,
			},
			Spec: *template.Spec.DeepCopy(),
		})
	}
}

// Merge adds the other manifests' objects.
func (m *Manifests) Merge(other Manifests) {
	m.Pods = append(m.Pods, other.Pods...)
	m.DaemonSets = append(m.DaemonSets, other.DaemonSets...)
	m.NodePools = append(m.NodePools, other.NodePools...)
	m.NodeClasses = append(m.NodeClasses, other.NodeClasses...)
	m.Skipped = append(m.Skipped, other.Skipped...)
}

// DefaultNodePoolSource names the NodePool the planner uses when given none.
const DefaultNodePoolSource = examples.DefaultFile

// Defaults adds the README's NodePool and LinodeNodeClass when no NodePool is given, and says
// whether it did. A LinodeNodeClass of the same name given with the manifests is kept.
func (m *Manifests) Defaults() bool {
	if len(m.NodePools) > 0 {
		return false
	}
	readme := &Manifests{}
	if err := readme.add(DefaultNodePoolSource, examples.Default); err != nil {
		panic(fmt.Sprintf("the built-in %s: %v", DefaultNodePoolSource, err))
	}
	m.NodePools = readme.NodePools
	for _, nodeClass := range readme.NodeClasses {
		if !slices.ContainsFunc(m.NodeClasses, func(c *v1.LinodeNodeClass) bool { return c.Name == nodeClass.Name }) {
			m.NodeClasses = append(m.NodeClasses, nodeClass)
		}
	}
	return true
}
