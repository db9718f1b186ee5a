package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

const (
	defaultManifests  = "examples/default.yaml"
	instanceManifests = "examples/instance.yaml"
	demoNamespace     = "default"
	deploymentName    = "inflate"
)

// manifestsOf is the README's default LinodeNodeClass and NodePool for the mode: instance mode's
// class adds an image and the userData that installs the kubelet.
func manifestsOf(mode string) string {
	if mode == localcluster.ModeInstance {
		return instanceManifests
	}
	return defaultManifests
}

// readManifests reads the README's default LinodeNodeClass and NodePool of the mode.
func readManifests(mode string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(manifestsOf(mode))
	if err != nil {
		return nil, fmt.Errorf("%w (run the demo from the repository root)", err)
	}
	return decodeManifests(data)
}

func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objects, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

// inflate is the README's deployment: pause containers that each ask for a whole CPU, so that
// every replica needs room on a node and nothing else does.
func inflate() *appsv1.Deployment {
	labels := map[string]string{"app": deploymentName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName, Namespace: demoNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{
						Name:  deploymentName,
						Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
						},
					}},
				},
			},
		},
	}
}

// plan asks the planner, before the deployment exists, what Karpenter will launch for inflate's
// replicas on the README's NodePool, at the prices the emulator's catalogue lists.
func (d *demo) plan(ctx context.Context) error {
	in, err := planner.ReadManifests([]string{manifestsOf(d.mode)}, nil)
	if err != nil {
		return err
	}
	catalogue, err := planner.ReadCatalogue(ctx, d.linode)
	if err != nil {
		return err
	}
	template := inflate().Spec.Template
	for i := range d.replicas {
		in.Pods = append(in.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", deploymentName, i), Namespace: demoNamespace, Labels: template.Labels},
			Spec:       *template.Spec.DeepCopy(),
		})
	}
	report, err := planner.Plan(ctx, planner.Settings{Region: d.cluster.Region(), Mode: mode.Mode(d.mode), Catalogue: catalogue}, in.Workloads)
	if err != nil {
		return fmt.Errorf("planning: %w", err)
	}
	d.planned, d.plannedHourly = map[string]int{}, report.Fleet.Hourly
	for _, pool := range report.NodePools {
		for _, plan := range pool.Plans {
			d.planned[plan.Plan] += plan.Nodes
		}
	}
	fmt.Printf("  karpenter-linode plan, before the deployment: %s, $%.3f/h\n", planner.FormatPlans(d.planned), d.plannedHourly)
	return nil
}
