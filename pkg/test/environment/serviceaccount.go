package environment

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountConfig connects to the API server admin reaches with a token of the
// ServiceAccount, which must exist, from the TokenRequest API: the credential a pod of that
// ServiceAccount is given, authenticated and authorized as the pod's own would be.
func ServiceAccountConfig(ctx context.Context, admin *rest.Config, namespace, name string) (*rest.Config, error) {
	c, err := client.New(admin, client.Options{})
	if err != nil {
		return nil, err
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	serviceAccount := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.SubResource("token").Create(ctx, serviceAccount, request); err != nil {
		return nil, fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	config := rest.AnonymousClientConfig(admin)
	config.BearerToken = request.Status.Token
	return config, nil
}
