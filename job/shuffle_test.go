package job

import "testing"

func TestPartFile(t *testing.T) {
	cases := []struct {
		p, n int
		want string
	}{
		{0, 1, "part-00000.parquet"},
		{99999, 100000, "part-99999.parquet"},
		{7, 100001, "part-000007.parquet"},
		{4194303, 4194304, "part-4194303.parquet"},
	}
	for _, tc := range cases {
		if got := PartFile(tc.p, tc.n); got != tc.want {
			t.Errorf("PartFile(%d, %d) = %s, want %s", tc.p, tc.n, got, tc.want)
		}
	}
}
