package reallinode

import "testing"

func TestNewestVersionIsTheHighestWhateverTheOrder(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{[]string{"1.33", "1.35", "1.34"}, "1.35"},
		{[]string{"1.9", "1.10"}, "1.10"},
		{[]string{"v1.31.8+lke1", "v1.31.8+lke2", "v1.30.12+lke4"}, "v1.31.8+lke2"},
	} {
		if got := newest(c.ids); got != c.want {
			t.Errorf("newest(%v) = %s, want %s", c.ids, got, c.want)
		}
	}
}
