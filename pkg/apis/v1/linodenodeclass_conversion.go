package v1

// Hub makes v1 the version every other version of LinodeNodeClass converts to and from
// (sigs.k8s.io/controller-runtime/pkg/conversion); v1alpha1 implements the conversions.
func (*LinodeNodeClass) Hub() {}
