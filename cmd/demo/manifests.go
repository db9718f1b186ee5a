package main

import (
	"bytes"
	"errors"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
)

const (
	defaultManifests = "examples/default.yaml"
	demoNamespace    = "default"
	deploymentName   = "inflate"
)

// readmeManifests are the README's LinodeNodeClass and NodePool, applied when the repository has
// no examples/default.yaml.
const readmeManifests = `
apiVersion: karpenter.k8s.linode/v1
kind: LinodeNodeClass
metadata:
  name: default
spec:
  tags: ["team:platform"]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.linode
        kind: LinodeNodeClass
        name: default
      requirements:
        - key: karpenter.k8s.linode/instance-class
          operator: In
          values: ["standard", "dedicated"]
  limits:
    cpu: "64"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`

// readManifests reads the default LinodeNodeClass and NodePool and says where they came from.
func readManifests() ([]*unstructured.Unstructured, string, error) {
	source := defaultManifests
	data, err := os.ReadFile(defaultManifests)
	if errors.Is(err, os.ErrNotExist) {
		source, data, err = "the README", []byte(readmeManifests), nil
	}
	if err != nil {
		return nil, "", err
	}
	objects, err := decodeManifests(data)
	return objects, source, err
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
