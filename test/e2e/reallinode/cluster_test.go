package reallinode

import (
	"testing"

	"github.com/linode/linodego"
)

func TestNewestVersionIsTheHighestWhateverTheOrder(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{[]string{"1.33", "1.35", "1.34"}, "1.35"},
		{[]string{"1.9", "1.10"}, "1.10"},
		{[]string{"v1.31.8+lke1", "v1.31.8+lke2", "v1.30.12+lke4"}, "v1.31.8+lke2"},
	} {
		var versions []linodego.LKETierVersion
		for _, id := range c.ids {
			versions = append(versions, linodego.LKETierVersion{ID: id})
		}
		if got := newest(versions); got != c.want {
			t.Errorf("newest(%v) = %s, want %s", c.ids, got, c.want)
		}
	}
}
