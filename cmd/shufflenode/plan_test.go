package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

func runPlan(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cmdPlan(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlanRechunk(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "old.json")
	if err := os.WriteFile(file, []byte("[[10,10,10,10,10]]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	issue := `{"axes":[[[[0,0,0,10]],[[0,1,0,10]],[[0,2,0,5],[1,0,5,10]],[[2,0,0,10]],[[2,1,0,10]]]]}` + "\n"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"issue example", []string{"rechunk", "--old", "[[10,10,10,10,10]]", "--new", "[[25,5,20]]"}, issue},
		{"old from file", []string{"rechunk", "--old", "@" + file, "--new", "[[25, 5, 20]]"}, issue},
		{"single dash flags", []string{"rechunk", "-old=[[10,10,10,10,10]]", "-new=[[25,5,20]]"}, issue},
		{"unknown sizes", []string{"rechunk", "--old", "[[null,null],[4]]", "--new", "[[null,null],[2,2]]"},
			`{"axes":[[[[0,0,0,null]],[[1,0,0,null]]],[[[0,0,0,2],[1,0,2,4]]]]}` + "\n"},
		{"zero sizes", []string{"rechunk", "--old", "[[5,0,5]]", "--new", "[[5,0,5,0]]"},
			`{"axes":[[[[0,0,0,5]],[],[[1,0,0,0],[2,0,0,5],[3,0,5,5]]]]}` + "\n"},
		{"no axes", []string{"rechunk", "--old", "[]", "--new", " [ ] "}, `{"axes":[]}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runPlan(tt.args...)
			if code != 0 || out != tt.want || errs != "" {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errs, tt.want)
			}
		})
	}
}

func TestPlanRechunkInvalid(t *testing.T) {
	ok := "[[4]]"
	tests := []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"no kind", nil, "missing plan kind"},
		{"unknown kind", []string{"shuffle"}, `unknown plan kind "shuffle"`},
		{"missing old", []string{"rechunk", "--new", ok}, "--old is required"},
		{"missing new", []string{"rechunk", "--old", ok}, "--new is required"},
		{"unknown flag", []string{"rechunk", "--old", ok, "--new", ok, "--bogus"}, "bogus"},
		{"extra argument", []string{"rechunk", "--old", ok, "--new", ok, "more"}, `unexpected argument "more"`},
		{"bad json", []string{"rechunk", "--old", "[[4,", "--new", ok}, "--old: invalid JSON"},
		{"trailing data", []string{"rechunk", "--old", "[[4]] [[4]]", "--new", ok}, "--old: invalid JSON"},
		{"not a list", []string{"rechunk", "--old", `{"a":1}`, "--new", ok}, "--old: invalid JSON"},
		{"null axes", []string{"rechunk", "--old", "null", "--new", ok}, "--old: want a list of axes"},
		{"null axis", []string{"rechunk", "--old", ok, "--new", "[null]"}, "--new: axis 0: want a list of sizes"},
		{"float size", []string{"rechunk", "--old", "[[2.5,1.5]]", "--new", ok}, "--old: invalid JSON"},
		{"exponent size", []string{"rechunk", "--old", "[[4e0]]", "--new", ok}, "--old: invalid JSON"},
		{"string size", []string{"rechunk", "--old", `[["4"]]`, "--new", ok}, "--old: invalid JSON"},
		{"huge size", []string{"rechunk", "--old", "[[99999999999999999999]]", "--new", ok}, "--old: invalid JSON"},
		{"negative size", []string{"rechunk", "--old", "[[5,-1]]", "--new", ok}, "axis 0 chunk 1: size -1 is negative"},
		{"totals differ", []string{"rechunk", "--old", "[[4],[3]]", "--new", "[[4],[2]]"}, "axis 1: old total 3, new total 2"},
		{"axes differ", []string{"rechunk", "--old", "[[4],[3]]", "--new", ok}, "old has 2 axes, new has 1"},
		{"unknown changed", []string{"rechunk", "--old", "[[null,null]]", "--new", "[[null]]"}, "chunks must be unchanging along an axis with unknown sizes"},
		{"missing file", []string{"rechunk", "--old", "@/nonexistent/chunks.json", "--new", ok}, "--old: open /nonexistent/chunks.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runPlan(tt.args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") || !strings.Contains(errs, tt.want) {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 2 and one line containing %q", code, out, errs, tt.want)
			}
		})
	}
}

func TestPlanHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"rechunk", "-h"}, {"rechunk", "--help"}} {
		if code, out, _ := runPlan(args...); code != 0 || !strings.Contains(out, "plan rechunk --old") {
			t.Fatalf("%v: exit %d, stdout %q", args, code, out)
		}
	}
}

// refPlanJSON is the plan as encoding/json prints it: the format planWrite
// must keep.
func refPlanJSON(t *testing.T, p *splitaxes.Plan) string {
	t.Helper()
	axes := make([][][][4]any, p.NDim())
	for d := range axes {
		a := p.Axis(d)
		axes[d] = make([][][4]any, a.NumOld())
		for i := range axes[d] {
			axes[d][i] = [][4]any{}
			for s := range a.Splits(i) {
				var stop any = s.Stop
				if s.OpenEnded() {
					stop = nil
				}
				axes[d][i] = append(axes[d][i], [4]any{s.NewChunk, s.SplitIndex, s.Start, stop})
			}
		}
	}
	b, err := json.Marshal(map[string]any{"axes": axes})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestPlanMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		old, new := make([][]int64, r.IntN(4)), [][]int64{}
		for d := range old {
			old[d] = randomSizes(r, 20)
			new = append(new, randomSizes(r, 20))
			if s := sum(old[d]) - sum(new[d]); s > 0 {
				new[d] = append(new[d], s)
			} else {
				old[d] = append(old[d], -s)
			}
			if r.IntN(5) == 0 {
				old[d] = []int64{splitaxes.Unknown, splitaxes.Unknown}
				new[d] = old[d]
			}
		}
		p, err := splitaxes.New(old, new)
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := runPlan("rechunk", "--old", planJSON(old), "--new", planJSON(new))
		if want := refPlanJSON(t, p); code != 0 || out != want {
			t.Fatalf("exit %d %s\n got %s\nwant %s", code, errs, out, want)
		}
	}
}

func randomSizes(r *rand.Rand, max int) []int64 {
	out := make([]int64, r.IntN(6))
	for i := range out {
		out[i] = r.Int64N(int64(max))
	}
	return out
}

func sum(s []int64) (t int64) {
	for _, v := range s {
		t += v
	}
	return t
}

// planJSON prints chunk sizes as the flags take them.
func planJSON(axes [][]int64) string {
	out := make([][]*int64, len(axes))
	for d, axis := range axes {
		out[d] = []*int64{}
		for _, s := range axis {
			if s == splitaxes.Unknown {
				out[d] = append(out[d], nil)
			} else {
				out[d] = append(out[d], &s)
			}
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// FuzzPlanRechunk feeds the chunk decoder arbitrary bytes: it must either
// print valid JSON and exit 0, or exit 2 with one line on stderr.
func FuzzPlanRechunk(f *testing.F) {
	f.Add("[[10,10,10,10,10]]", "[[25,5,20]]")
	f.Add("[[null,null],[4]]", "[[null,null],[2,2]]")
	f.Add("[[5,0,5]]", "[[5,0,5,0]]")
	f.Add("[[-1]]", "[[1e3]]")
	f.Fuzz(func(t *testing.T, old, new string) {
		if len(old) > 1000 || len(new) > 1000 {
			return
		}
		code, out, errs := runPlan("rechunk", "--old", old, "--new", new)
		switch code {
		case 0:
			var v struct{ Axes [][][][4]*int64 }
			if err := json.Unmarshal([]byte(out), &v); err != nil || errs != "" {
				t.Fatalf("exit 0 with stdout %q (%v), stderr %q", out, err, errs)
			}
		case 2:
			if out != "" || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit 2 with stdout %q, stderr %q", out, errs)
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}
