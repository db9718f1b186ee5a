package storageversion_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/storageversion"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var (
	ctx       context.Context
	env       *environment.Environment
	apiReader client.Reader
)

func TestStorageVersion(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	// CRDs take seconds to be served and to go, longer on a busy machine.
	SetDefaultEventuallyTimeout(time.Minute)
	RunSpecs(t, "Storage version migration")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
	apiReader, err = client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	Expect(err).ToNot(HaveOccurred())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

const group = "storage.example.com"

// gadgets is a CRD stored as v1alpha1 only, as the alpha LinodeNodeClass CRD was; upgrade makes
// v1 its storage version. Both versions have the same schema, so no conversion webhook is needed
// here: what is tested is which version etcd holds, not the conversion.
func gadgets() *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: new(true)}},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    group,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope:    apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true, Schema: schema}},
		},
	}
}

func upgrade(crd *apiextensionsv1.CustomResourceDefinition) {
	GinkgoHelper()
	Expect(apiReader.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
	crd.Spec.Versions[0].Storage = false
	crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
		Name: "v1", Served: true, Storage: true, Schema: crd.Spec.Versions[0].Schema,
	})
	Expect(env.Client.Update(ctx, crd)).To(Succeed())
}

func gadget(version, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": name}}}
	obj.SetAPIVersion(group + "/" + version)
	obj.SetKind("Gadget")
	obj.SetName(name)
	return obj
}

func resourceVersion(name string) string {
	GinkgoHelper()
	obj := gadget("v1", name)
	Expect(apiReader.Get(ctx, client.ObjectKey{Name: name}, obj)).To(Succeed())
	return obj.GetResourceVersion()
}

func storedVersions() []string {
	GinkgoHelper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(apiReader.Get(ctx, client.ObjectKey{Name: "gadgets." + group}, crd)).To(Succeed())
	return crd.Status.StoredVersions
}

var _ = Describe("Storage version migration", func() {
	var crd *apiextensionsv1.CustomResourceDefinition
	BeforeEach(func() {
		crd = gadgets()
		Expect(env.Client.Create(ctx, crd)).To(Succeed())
		DeferCleanup(func() {
			Expect(env.Client.Delete(ctx, crd)).To(Succeed())
			Eventually(func() error { return apiReader.Get(ctx, client.ObjectKeyFromObject(crd), crd) }).Should(MatchError(ContainSubstring("not found")))
		})
		// The clients learn of the new kind from discovery, a moment after the CRD is created.
		for i := range 3 {
			Eventually(func() error { return env.Client.Create(ctx, gadget("v1alpha1", fmt.Sprintf("old-%d", i))) }).Should(Succeed())
		}
		upgrade(crd)
		// Written after the upgrade, so stored as v1 already.
		Eventually(func() error { return env.Client.Create(ctx, gadget("v1", "new")) }).Should(Succeed())
	})

	It("rewrites the objects stored in the old version and trims storedVersions", func() {
		Expect(storedVersions()).To(Equal([]string{"v1alpha1", "v1"}))
		before := map[string]string{}
		for _, name := range []string{"old-0", "old-1", "old-2", "new"} {
			before[name] = resourceVersion(name)
		}
		result := ExpectSingletonReconciled(ctx, storageversion.NewController(env.Client, apiReader, crd.Name, func() error { return nil }))
		Expect(result.RequeueAfter).To(BeNumerically(">", 0))
		Expect(storedVersions()).To(Equal([]string{"v1"}))
		for _, name := range []string{"old-0", "old-1", "old-2"} {
			Expect(resourceVersion(name)).ToNot(Equal(before[name]), "%s, stored as v1alpha1, was not rewritten", name)
		}
		// kube-apiserver skips a write that would store the same bytes: the object written after
		// the upgrade was stored as v1 already.
		Expect(resourceVersion("new")).To(Equal(before["new"]))
	})

	It("waits for the conversion webhook", func() {
		before := resourceVersion("old-0")
		result := ExpectSingletonReconciled(ctx, storageversion.NewController(env.Client, apiReader, crd.Name, func() error { return errors.New("not serving") }))
		Expect(result.RequeueAfter).To(BeNumerically(">", 0))
		Expect(storedVersions()).To(Equal([]string{"v1alpha1", "v1"}))
		Expect(resourceVersion("old-0")).To(Equal(before))
	})

	It("leaves a CRD with nothing to migrate alone", func() {
		controller := storageversion.NewController(env.Client, apiReader, crd.Name, func() error { return nil })
		ExpectSingletonReconciled(ctx, controller)
		before := resourceVersion("old-0")
		ExpectSingletonReconciled(ctx, controller)
		Expect(resourceVersion("old-0")).To(Equal(before))
	})
})
