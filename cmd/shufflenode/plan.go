package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/shufflenode/shufflenode/splitaxes"
)

const planUsage = `usage: shufflenode plan rechunk --old JSON|@FILE --new JSON|@FILE

Prints how the old chunks of an n-d array split into its new chunks, as
{"axes": A}: A[axis][old_chunk] is the list of splits of that old chunk, each
[new_chunk, split_index, start, stop] (start and stop local to the old chunk;
stop is null when open-ended). JSON is a list of axes, each a list of chunk
sizes, null for an unknown size; @FILE reads it from a file.
Exit status: 0 ok, 2 invalid input (one line on stderr), 1 output failed.
`

// cmdPlan runs `shufflenode plan ARGS...` (args excludes "plan"); returns the
// exit status.
func cmdPlan(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return planFail(stderr, "shufflenode plan", errors.New("missing plan kind (want: rechunk)"))
	}
	switch args[0] {
	case "rechunk":
		return planRechunk(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, planUsage)
		return 0
	}
	return planFail(stderr, "shufflenode plan", fmt.Errorf("unknown plan kind %q (want: rechunk)", args[0]))
}

// planRechunk runs `shufflenode plan rechunk`.
func planRechunk(args []string, stdout, stderr io.Writer) int {
	const name = "shufflenode plan rechunk"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	oldArg := fs.String("old", "", "old chunk sizes: JSON list of axes, or @FILE")
	newArg := fs.String("new", "", "new chunk sizes: JSON list of axes, or @FILE")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, planUsage)
		return 0
	} else if err != nil {
		return planFail(stderr, name, err)
	}
	plan, err := planBuild(fs, *oldArg, *newArg)
	if err != nil {
		return planFail(stderr, name, err)
	}
	if err := planWrite(stdout, plan); err != nil {
		fmt.Fprintf(stderr, "%s: writing plan: %s\n", name, planOneLine(err))
		return 1
	}
	return 0
}

// planBuild reads both chunkings and plans the rechunk.
func planBuild(fs *flag.FlagSet, oldArg, newArg string) (*splitaxes.Plan, error) {
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	old, err := planChunks("--old", oldArg)
	if err != nil {
		return nil, err
	}
	new, err := planChunks("--new", newArg)
	if err != nil {
		return nil, err
	}
	return splitaxes.New(old, new)
}

// planChunks parses a flag's chunk sizes: JSON inline or, after '@', in a
// file; null sizes become splitaxes.Unknown.
func planChunks(flagName, arg string) ([][]int64, error) {
	if arg == "" {
		return nil, fmt.Errorf("%s is required", flagName)
	}
	data := []byte(arg)
	if file, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
	}
	var axes [][]*int64
	if err := json.Unmarshal(data, &axes); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON (want a list of axes, each a list of sizes or null): %w", flagName, err)
	}
	return planSizes(flagName, axes)
}

// planSizes converts decoded axes, rejecting null lists and negative sizes.
func planSizes(flagName string, axes [][]*int64) ([][]int64, error) {
	if axes == nil {
		return nil, fmt.Errorf("%s: want a list of axes, got null", flagName)
	}
	out := make([][]int64, len(axes))
	for d, axis := range axes {
		if axis == nil {
			return nil, fmt.Errorf("%s: axis %d: want a list of sizes, got null", flagName, d)
		}
		out[d] = make([]int64, len(axis))
		for i, s := range axis {
			switch {
			case s == nil:
				out[d][i] = splitaxes.Unknown
			case *s < 0:
				return nil, fmt.Errorf("%s: axis %d chunk %d: size %d is negative", flagName, d, i, *s)
			default:
				out[d][i] = *s
			}
		}
	}
	return out, nil
}

// planWrite prints the plan as one line of JSON: {"axes": A}, compact, in the
// same form encoding/json would give.
func planWrite(stdout io.Writer, p *splitaxes.Plan) error {
	w := bufio.NewWriterSize(stdout, 1<<16)
	w.WriteString(`{"axes":[`)
	var buf []byte
	for d := range p.NDim() {
		if d > 0 {
			w.WriteByte(',')
		}
		buf = planAxis(w, p.Axis(d), buf)
	}
	w.WriteString("]}\n")
	return w.Flush()
}

// planAxis writes the splits of every old chunk of one axis; buf is scratch.
func planAxis(w *bufio.Writer, a *splitaxes.Axis, buf []byte) []byte {
	w.WriteByte('[')
	for i := range a.NumOld() {
		if i > 0 {
			w.WriteByte(',')
		}
		buf = append(buf[:0], '[')
		for s := range a.Splits(i) {
			if len(buf) > 1 {
				buf = append(buf, ',')
			}
			buf = planSplit(buf, s)
		}
		buf = append(buf, ']')
		w.Write(buf)
	}
	w.WriteByte(']')
	return buf
}

// planSplit appends [new_chunk, split_index, start, stop|null].
func planSplit(buf []byte, s splitaxes.Split) []byte {
	buf = append(buf, '[')
	buf = strconv.AppendInt(buf, int64(s.NewChunk), 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, int64(s.SplitIndex), 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, s.Start, 10)
	buf = append(buf, ',')
	if s.OpenEnded() {
		buf = append(buf, "null"...)
	} else {
		buf = strconv.AppendInt(buf, s.Stop, 10)
	}
	return append(buf, ']')
}

// planFail prints err as one line on stderr and returns exit status 2.
func planFail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", name, planOneLine(err))
	return 2
}

// planOneLine returns the error text with line breaks turned into spaces.
func planOneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
