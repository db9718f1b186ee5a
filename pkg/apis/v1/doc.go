// Package v1 contains the LinodeNodeClass API: the Linode-specific half of a Karpenter NodePool.
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.linode
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
)

// SchemeGroupVersion is the group and version of every type in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: apis.Group, Version: "v1"}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers the package's types with a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &LinodeNodeClass{}, &LinodeNodeClassList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

func init() {
	// Karpenter core and controller-runtime clients use client-go's global scheme.
	if err := AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
}
