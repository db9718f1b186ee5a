package conversion_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/linode/karpenter-provider-linode/pkg/apis/v1alpha1"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
)

// TestServesConversionReviews sends the webhook what kube-apiserver sends it when a v1alpha1
// LinodeNodeClass is written: the class comes back as v1, alpha-only fields carried along.
func TestServesConversionReviews(t *testing.T) {
	server := webhook.NewServer(webhook.Options{})
	if err := conversion.Register(server); err != nil {
		t.Fatal(err)
	}
	mux := server.WebhookMux()
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{
			UID:               types.UID("review-1"),
			DesiredAPIVersion: "karpenter.k8s.linode/v1",
			Objects: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"karpenter.k8s.linode/v1alpha1","kind":"LinodeNodeClass",` +
				`"metadata":{"name":"default"},"spec":{"image":"linode/ubuntu22.04","swap_size":512,"vpcID":7,"osDisk":{"size":"20Gi","filesystem":"ext4"}}}`)}},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	recorder := httptest.NewRecorder()
	mux.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, conversion.Path, bytes.NewReader(body)))
	if recorder.Code != http.StatusOK {
		t.Fatalf("POST %s = %d: %s", conversion.Path, recorder.Code, recorder.Body)
	}
	var answer apiextensionsv1.ConversionReview
	if err := json.Unmarshal(recorder.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Response == nil || answer.Response.UID != "review-1" || answer.Response.Result.Status != metav1.StatusSuccess || len(answer.Response.ConvertedObjects) != 1 {
		t.Fatalf("answer = %+v", answer.Response)
	}
	var converted struct {
		APIVersion string            `json:"apiVersion"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Spec       map[string]any    `json:"spec"`
	}
	if err := json.Unmarshal(answer.Response.ConvertedObjects[0].Raw, &converted); err != nil {
		t.Fatal(err)
	}
	if converted.APIVersion != "karpenter.k8s.linode/v1" || converted.Spec["image"] != "linode/ubuntu22.04" || converted.Spec["swapSizeMB"] != float64(512) ||
		!reflect.DeepEqual(converted.Spec["vpc"], map[string]any{"vpcID": float64(7)}) {
		t.Errorf("converted = %s", answer.Response.ConvertedObjects[0].Raw)
	}
	// v1 has no place for the boot disk's filesystem (Linode makes it ext4 from the image).
	if carried := converted.Metadata.Annotations[v1alpha1.AnnotationV1Alpha1Fields]; carried != `{"spec":{"osDisk":{"size":"20Gi","filesystem":"ext4"}}}` {
		t.Errorf("annotation %s = %q, want osDisk carried", v1alpha1.AnnotationV1Alpha1Fields, carried)
	}
}
