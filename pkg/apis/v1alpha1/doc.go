// Package v1alpha1 is the LinodeNodeClass API as the alpha Linode provider published it, served
// beside v1 so that clusters upgrading from that provider keep their objects, manifests and
// GitOps tools working. v1 is the storage version and the conversion hub; every v1alpha1 object
// is converted to and from it by the controller's conversion webhook (ConvertTo, ConvertFrom).
//
// The schema reproduces the alpha CRD's exactly, validation rules included: anything the alpha
// provider accepted is accepted here. Fields with a v1 home are mapped onto it; the others travel
// in an annotation on the v1 object, so that a v1alpha1 client reads back what it wrote, and the
// NodeClass reports them in a condition instead of dropping them silently.
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.linode
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
)

// SchemeGroupVersion is the group and version of every type in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: apis.Group, Version: "v1alpha1"}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers the package's types with a scheme. Unlike v1, the package does not
	// register itself with client-go's global scheme: only the conversion webhook and tests
	// handle v1alpha1 objects as such.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &LinodeNodeClass{}, &LinodeNodeClassList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
