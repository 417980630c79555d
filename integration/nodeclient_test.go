package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// nodeClientDir holds the Node conformance client (written from
// docs/flight-api.md alone; `npm ci` there installs its modules).
const nodeClientDir = "nodeclient"

// nodeReport is what the Node client prints on stdout: the hash shuffle's
// row IDs per partition (the shuffle is left open) and the status code of
// each bad request it made; with --lost-owner, what the reads after the
// loss saw instead.
type nodeReport struct {
	Hash struct {
		Shuffle    string    `json:"shuffle"`
		Partitions [][]int64 `json:"partitions"`
	} `json:"hash"`
	Codes map[string]codes.Code `json:"codes"`
	Lost  *struct {
		Lost       []int `json:"lost"`
		Epoch      int   `json:"epoch"`
		Recoveries int   `json:"recoveries"`
	} `json:"lost"`
}

// TestNodeClient runs the Node conformance client against three serve
// processes, then checks that the Go client reads the same partitions of
// its hash shuffle and gets the same status codes for the same bad
// requests; then the Node client resumes its reads after one process is
// killed. The same again against processes that require a bearer token.
func TestNodeClient(t *testing.T) {
	nodeBin := nodeClientReady(t)
	t.Parallel()
	for _, token := range []string{"", "conformance-token"} {
		name := map[bool]string{false: "plain", true: "token"}[token != ""]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := startProcsToken(t, 3, token)
			rep := runNodeClient(t, nodeBin, c, "nodeclient-"+name)
			compareWithGo(t, c, rep)
			lost := runNodeClient(t, nodeBin, c, "nodeclient-"+name, "--lost-owner", strconv.Itoa(c.procs[2].cmd.Process.Pid))
			if lost.Lost == nil || lost.Lost.Epoch < 1 || len(lost.Lost.Lost) == 0 {
				t.Errorf("lost-owner report %+v: want the lost node's partitions and a later epoch", lost.Lost)
			}
		})
	}
}

// compareWithGo reads the Node client's hash shuffle with the Go client
// and makes its bad (and, with a token, unauthenticated) requests.
func compareWithGo(t *testing.T, c *procCluster, rep nodeReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := c.procs[1].dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	checkSamePartitions(ctx, t, cl, rep)
	checkSameCodes(ctx, t, cl, c.token, rep)
	if c.token != "" {
		checkAuthCodes(ctx, t, c, rep)
	}
	if err := cl.CloseShuffle(ctx, rep.Hash.Shuffle); err != nil {
		t.Error(err)
	}
}

// checkAuthCodes makes the Node client's calls without the token (or with
// a wrong one) with the Go client: all Unauthenticated, as the Node
// client's.
func checkAuthCodes(ctx context.Context, t *testing.T, c *procCluster, rep nodeReport) {
	t.Helper()
	anon, err := client.Dial(c.procs[0].api)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	wrong, err := client.DialAuth(c.procs[1].api, flightproto.ClientAuth{Token: "not-the-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	_, membersErr := anon.Members(ctx)
	for name, err := range map[string]error{
		"no token: handshake":        handshakeErr(ctx, c.procs[0].api, ""),
		"no token: members":          membersErr,
		"wrong token: handshake":     handshakeErr(ctx, c.procs[1].api, "not-the-token"),
		"wrong token: GetFlightInfo": locationsErr(ctx, wrong, "go-nope"),
	} {
		if got, want := status.Code(err), rep.Codes[name]; got != codes.Unauthenticated || want != codes.Unauthenticated {
			t.Errorf("%s: Go client got %s, Node client %s; want Unauthenticated (%v)", name, got, want, err)
		}
	}
}

// handshakeErr runs a Flight Handshake at addr with token ("" for none).
func handshakeErr(ctx context.Context, addr, token string) error {
	fc, err := flightproto.DialAuth(addr, flightproto.ClientAuth{Token: token})
	if err != nil {
		return err
	}
	defer fc.Close()
	stream, err := fc.Handshake(ctx)
	if err != nil {
		return err
	}
	_ = stream.CloseSend()
	_, err = stream.Recv()
	return err
}

// nodeClientReady returns the node binary, or skips the test saying what
// is missing.
func nodeClientReady(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the Node conformance client runs serve processes: skipped with -short")
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node conformance client (integration/nodeclient) needs Node.js 18 or later")
	}
	if _, err := os.Stat(filepath.Join(nodeClientDir, "node_modules", "apache-arrow")); err != nil {
		t.Skip("integration/nodeclient/node_modules is not installed: run `npm ci` in integration/nodeclient (.ci/run does)")
	}
	return nodeBin
}

// runNodeClient runs conformance.js on the cluster with the ID prefix and
// extra arguments (and the cluster's token file), and decodes its report;
// its stderr is logged.
func runNodeClient(t *testing.T, nodeBin string, c *procCluster, prefix string, extra ...string) nodeReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := append([]string{"conformance.js", strings.Join(c.apis(), ","), prefix}, extra...)
	if c.token != "" {
		args = append(args, "--token-file", c.tokenFile)
	}
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = nodeClientDir, &stdout, &stderr
	err := cmd.Run()
	t.Logf("node conformance.js:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("the Node conformance client failed: %v", err)
	}
	var rep nodeReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the Node client's report %q: %v", stdout.String(), err)
	}
	return rep
}

// checkSamePartitions reads the Node client's hash shuffle with the Go
// client: every partition must hold the same rows in the same order.
func checkSamePartitions(ctx context.Context, t *testing.T, cl *client.Client, rep nodeReport) {
	t.Helper()
	eps, err := cl.Locations(ctx, rep.Hash.Shuffle)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != len(rep.Hash.Partitions) {
		t.Fatalf("Go client: %d partitions, Node client: %d", len(eps), len(rep.Hash.Partitions))
	}
	for _, ep := range eps {
		var rows []int64
		err := cl.Read(ctx, ep, func(rec arrow.Record) error {
			rows = append(rows, rec.Column(0).(*array.Int64).Int64Values()...)
			return nil
		})
		if err != nil {
			t.Fatalf("Go client: partition %d: %v", ep.Partition, err)
		}
		if want := rep.Hash.Partitions[ep.Partition]; !slices.Equal(rows, want) {
			t.Errorf("partition %d: Go client read %d rows, Node client %d (or another order)", ep.Partition, len(rows), len(want))
		}
	}
}

// checkSameCodes makes the Node client's bad requests with the Go client
// and compares the codes; token is the cluster's ("" for none).
func checkSameCodes(ctx context.Context, t *testing.T, cl *client.Client, token string, rep nodeReport) {
	t.Helper()
	sp, err := job.DemoConfig{ID: "go-bad", Rows: 10, Tasks: 2, Partitions: 3}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	future := *sp
	future.ID = "go-future"
	capped := *sp
	capped.ID, capped.Tasks = "go-capped", service.DefaultMaxTasks+1
	listed := *sp
	listed.ID, listed.Schema = "go-listed", flightproto.SerializeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil), memory.DefaultAllocator)
	put := func(task uint64, attempt uint32, rec arrow.Record) error {
		_, err := cl.Put(ctx, flightproto.PutCmd{Shuffle: sp.ID, Task: task, Attempt: attempt}, rec.Schema(), records(rec))
		return err
	}
	good := table.GenTask(nil, table.GenConfig{Rows: 10}, 0, 2)
	defer good.Release()
	bad := int32Record()
	defer bad.Release()
	cases := []struct {
		name string
		err  error
	}{ // in this order: the same attempt's second put needs the first
		{"unknown shuffle: barrier", barrierErr(ctx, cl, "go-nope")},
		{"unknown shuffle: GetFlightInfo", locationsErr(ctx, cl, "go-nope")},
		{"create: future version", createVersion(ctx, cl.Addr(), token, &future, flightproto.ProtocolVersion+1)},
		{"create: same ID", cl.Create(ctx, sp)},
		{"create: over --max-tasks", cl.Create(ctx, &capped)},
		{"create: unsupported column type", cl.Create(ctx, &listed)},
		{"put: wrong schema", put(0, 0, bad)},
		{"put: task out of range", put(2, 0, good)},
		{"put: same attempt again, same node", secondErr(put(0, 0, good), put(0, 0, good))},
	}
	for _, c := range cases {
		if got, want := status.Code(c.err), rep.Codes[c.name]; got != want {
			t.Errorf("%s: Go client got %s, Node client %s (%v)", c.name, got, want, c.err)
		}
	}
	if err := cl.CloseShuffle(ctx, sp.ID); err != nil {
		t.Error(err)
	}
}

// secondErr is the second error when the first call worked.
func secondErr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}

func barrierErr(ctx context.Context, cl *client.Client, id string) error {
	_, err := cl.Barrier(ctx, id)
	return err
}

func locationsErr(ctx context.Context, cl *client.Client, id string) error {
	_, err := cl.Locations(ctx, id)
	return err
}

// createVersion creates sp at addr (with token, "" for none) asking for
// protocol version v.
func createVersion(ctx context.Context, addr, token string, sp *spec.Spec, v int) error {
	fc, err := flightproto.DialAuth(addr, flightproto.ClientAuth{Token: token})
	if err != nil {
		return err
	}
	defer fc.Close()
	body, _ := json.Marshal(flightproto.CreateRequest{Spec: sp, Version: v})
	stream, err := fc.DoAction(ctx, &flight.Action{Type: flightproto.ActionCreate, Body: body})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// int32Record is a record of a schema no demo shuffle has.
func int32Record() arrow.Record {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int32{1, 2}, nil)
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "row", Type: arrow.PrimitiveTypes.Int32}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, 2)
}
