// Package chartrender renders the project's Helm charts with Helm's own Go library, as `helm
// template` would: the chart tests apply what it renders to a real apiserver, the controller's
// tests run the binary with the environment the chart's Deployment gives it, and the local
// cluster (test/localcluster) gives its controller the chart's ServiceAccount and RBAC.
package chartrender

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/samber/lo"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/yaml"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// Namespace is where the install instructions put the release.
const Namespace = "kube-system"

// Dir returns the directory of the named chart under charts/; relative to the working directory
// when that is outside the repository, so that loading it fails naming the path.
func Dir(name string) string {
	root, err := shared.RepositoryRoot()
	if err != nil {
		return filepath.Join("charts", name)
	}
	return filepath.Join(root, "charts", name)
}

// Render renders the named chart as release "karpenter" in Namespace with values over the
// chart's defaults, and returns the objects in file order (NOTES.txt excluded).
func Render(name string, values map[string]any) ([]*unstructured.Unstructured, error) {
	return RenderIn(name, Namespace, values)
}

// RenderIn is Render with the release in namespace.
func RenderIn(name, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	chrt, err := loader.Load(Dir(name))
	if err != nil {
		return nil, err
	}
	renderValues, err := util.ToRenderValues(chrt, values,
		common.ReleaseOptions{Name: "karpenter", Namespace: namespace, IsInstall: true, Revision: 1}, nil)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, renderValues)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for file := range files {
		if strings.HasSuffix(file, ".yaml") {
			names = append(names, file)
		}
	}
	sort.Strings(names)
	var objects []*unstructured.Unstructured
	for _, file := range names {
		decoded, err := decode(files[file])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objects = append(objects, decoded...)
	}
	return objects, nil
}

func decode(manifest string) ([]*unstructured.Unstructured, error) {
	reader := yamlutil.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var objects []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 || isOnlyComments(doc) {
			continue
		}
		obj := &unstructured.Unstructured{}
		if _, _, err := yaml.NewDecodingSerializer(unstructured.UnstructuredJSONScheme).Decode(doc, nil, obj); err != nil {
			return nil, err
		}
		objects = append(objects, obj)
	}
}

func isOnlyComments(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if trimmed := strings.TrimSpace(line); trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return false
		}
	}
	return true
}

// Find returns the rendered object of the kind and name, or nil.
func Find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, obj := range objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

// As converts a rendered object to its typed form.
func As[T any](obj *unstructured.Unstructured) (*T, error) {
	data, err := sigsyaml.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	typed := new(T)
	return typed, sigsyaml.UnmarshalStrict(data, typed)
}

// ControllerEnvironment returns the controller container's environment as the kubelet would
// set it from the rendered objects: Secret references resolved against the rendered (or the
// given) Secrets, the namespace filled in, resource references resolved from the container's
// resources. The Secret volumes the container mounts are written under volumeRoot, as the
// kubelet writes them on the node, and values naming a file in a mounted volume name the file
// written there.
func ControllerEnvironment(objects []*unstructured.Unstructured, volumeRoot string, externalSecrets ...*corev1.Secret) (map[string]string, error) {
	var deployment *appsv1.Deployment
	secrets := map[string]*corev1.Secret{}
	for _, s := range externalSecrets {
		secrets[s.Name] = s
	}
	for _, obj := range objects {
		switch obj.GetKind() {
		case "Deployment":
			d, err := As[appsv1.Deployment](obj)
			if err != nil {
				return nil, err
			}
			// The controller's, not the node identity component's.
			if slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "controller" }) {
				deployment = d
			}
		case "Secret":
			s, err := As[corev1.Secret](obj)
			if err != nil {
				return nil, err
			}
			secrets[s.Name] = s
		}
	}
	if deployment == nil {
		return nil, errors.New("the chart rendered no Deployment")
	}
	var container *corev1.Container
	for i := range deployment.Spec.Template.Spec.Containers {
		if deployment.Spec.Template.Spec.Containers[i].Name == "controller" {
			container = &deployment.Spec.Template.Spec.Containers[i]
		}
	}
	if container == nil {
		return nil, errors.New("the Deployment has no container named controller")
	}
	mounts, err := writeSecretVolumes(deployment, container, secrets, volumeRoot)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	defer func() {
		for name, value := range env {
			// Mounts nest (the key's inside the token's directory): a path is in the deepest
			// mount it is under, as in the container.
			deepest := ""
			for mountPath := range mounts {
				if strings.HasPrefix(value, mountPath+"/") && len(mountPath) > len(deepest) {
					deepest = mountPath
				}
			}
			if deepest != "" {
				env[name] = filepath.Join(mounts[deepest], strings.TrimPrefix(value, deepest+"/"))
			}
		}
	}()
	for _, v := range container.Env {
		switch {
		case v.ValueFrom == nil:
			env[v.Name] = v.Value
		case v.ValueFrom.SecretKeyRef != nil:
			ref := v.ValueFrom.SecretKeyRef
			secret, ok := secrets[ref.Name]
			if !ok {
				return nil, fmt.Errorf("%s: Secret %q is neither rendered nor given", v.Name, ref.Name)
			}
			value, ok := secret.Data[ref.Key]
			if !ok {
				value, ok = []byte(secret.StringData[ref.Key]), secret.StringData[ref.Key] != ""
			}
			switch {
			case ok:
				env[v.Name] = string(value)
			case ref.Optional == nil || !*ref.Optional:
				return nil, fmt.Errorf("%s: Secret %q has no key %q", v.Name, ref.Name, ref.Key)
			}
		case v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[v.Name] = deployment.Namespace
		case v.ValueFrom.ResourceFieldRef != nil:
			ref := v.ValueFrom.ResourceFieldRef
			list := container.Resources.Limits
			if strings.HasPrefix(ref.Resource, "requests.") {
				list = container.Resources.Requests
			}
			quantity, ok := list[corev1.ResourceName(strings.SplitN(ref.Resource, ".", 2)[1])]
			if !ok {
				return nil, fmt.Errorf("%s: the container sets no %s", v.Name, ref.Resource)
			}
			divisor := ref.Divisor
			if divisor.IsZero() {
				env[v.Name] = fmt.Sprint(quantity.Value())
			} else {
				env[v.Name] = fmt.Sprint(quantity.MilliValue() / divisor.MilliValue())
			}
		default:
			return nil, fmt.Errorf("%s: unsupported valueFrom", v.Name)
		}
	}
	return env, nil
}

// writeSecretVolumes writes the Secret volumes the container mounts into directories under root,
// one per mount, and returns the directory of each mount path.
func writeSecretVolumes(deployment *appsv1.Deployment, container *corev1.Container, secrets map[string]*corev1.Secret, root string) (map[string]string, error) {
	mounts := map[string]string{}
	for i, mount := range container.VolumeMounts {
		volume, found := lo.Find(deployment.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })
		if !found || volume.Secret == nil {
			continue
		}
		dir := filepath.Join(root, fmt.Sprintf("volume-%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		secret, ok := secrets[volume.Secret.SecretName]
		if !ok && volume.Secret.Optional != nil && *volume.Secret.Optional {
			// The kubelet mounts an optional Secret that is not there yet as an empty directory.
			mounts[strings.TrimSuffix(mount.MountPath, "/")] = dir
			continue
		}
		if !ok {
			return nil, fmt.Errorf("volume %s: Secret %q is neither rendered nor given", volume.Name, volume.Secret.SecretName)
		}
		files := map[string]string{}
		for key := range secret.Data {
			files[key] = key
		}
		if len(volume.Secret.Items) > 0 {
			files = map[string]string{}
			for _, item := range volume.Secret.Items {
				files[item.Key] = item.Path
			}
		}
		for key, path := range files {
			value, ok := secret.Data[key]
			if !ok {
				value, ok = []byte(secret.StringData[key]), secret.StringData[key] != ""
			}
			if !ok {
				return nil, fmt.Errorf("volume %s: Secret %q has no key %q", volume.Name, secret.Name, key)
			}
			if err := os.WriteFile(filepath.Join(dir, path), value, 0o600); err != nil {
				return nil, err
			}
		}
		mounts[strings.TrimSuffix(mount.MountPath, "/")] = dir
	}
	return mounts, nil
}

// DecodeFile decodes every object in a YAML file.
func DecodeFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decode(string(data))
}
