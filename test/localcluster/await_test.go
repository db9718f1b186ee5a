package localcluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAwait(t *testing.T) {
	broken := errors.New("apiserver unreachable")
	for _, tc := range []struct {
		name    string
		cond    func(polls int) (bool, error)
		wantErr error
	}{
		{"holds after a few polls", func(polls int) (bool, error) { return polls >= 3, nil }, nil},
		{"never holds", func(int) (bool, error) { return false, nil }, ErrAwaitTimedOut},
		{"fails", func(int) (bool, error) { return false, broken }, broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			polls := 0
			_, err := (&Cluster{}).Await(context.Background(), 200*time.Millisecond, time.Millisecond, func(context.Context) (bool, error) {
				polls++
				return tc.cond(polls)
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Await: got %v, want %v", err, tc.wantErr)
			}
		})
	}
}
