package wire

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestRefusalRoundTrip(t *testing.T) {
	long := strings.Repeat("é", MaxReasonLen) // 2 bytes per rune
	cases := []struct {
		name string
		in   Refusal
		want string
	}{
		{"no reason", Refusal{Code: RefuseSealed}, ""},
		{"reason", Refusal{RefuseStaleEpoch, "shuffle s1: epoch 3, current 4"}, "shuffle s1: epoch 3, current 4"},
		{"unknown code", Refusal{Code: 999, Reason: "x"}, "x"},
		{"long reason cut at a rune", Refusal{RefuseFailed, long}, long[:MaxReasonLen]},
		{"odd cut", Refusal{RefuseFailed, "a" + long}, ("a" + long)[:MaxReasonLen-1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRefusal(EncodeRefusal(tc.in))
			if err != nil || got.Code != tc.in.Code || got.Reason != tc.want {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}

func TestRefusalErrors(t *testing.T) {
	r := &Refusal{Code: RefuseUnknownShuffle, Reason: "shuffle s9"}
	err := fmt.Errorf("send task 3 to node b: %w", r)
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrBusy) {
		t.Fatalf("errors.Is wrong for %v", err)
	}
	if code, ok := RefusalCodeOf(err); !ok || code != RefuseUnknownShuffle {
		t.Fatalf("code %v %v", code, ok)
	}
	if _, ok := RefusalCodeOf(errors.New("other")); ok {
		t.Fatal("code of a plain error")
	}
	if want := "wire: request refused (unknown shuffle): shuffle s9"; r.Error() != want {
		t.Fatalf("%q", r.Error())
	}
}

func TestDecodeRefusalMalformed(t *testing.T) {
	var over Encoder
	over.Uvarint(math.MaxUint16 + 1)
	over.String("")
	var tooLong Encoder
	tooLong.Uvarint(1)
	tooLong.String(strings.Repeat("x", MaxReasonLen+1))
	cases := map[string][]byte{
		"empty":        nil,
		"no reason":    {1},
		"trailing":     append(EncodeRefusal(Refusal{Code: 1}), 0),
		"code too big": over.Bytes(),
		"reason long":  tooLong.Bytes(),
		"short reason": {1, 5, 'a'},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeRefusal(b); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestBusy(t *testing.T) {
	cases := []struct {
		name string
		in   time.Duration
		want time.Duration
	}{
		{"zero", 0, 0},
		{"negative", -time.Second, 0},
		{"rounds up", time.Nanosecond, time.Millisecond},
		{"exact", 250 * time.Millisecond, 250 * time.Millisecond},
		{"fraction", 1500 * time.Microsecond, 2 * time.Millisecond},
		{"clamped", math.MaxInt64, math.MaxUint32 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeBusy(EncodeBusy(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, b := range [][]byte{nil, {1, 2, 3}, {1, 2, 3, 4, 5}} {
		if _, err := DecodeBusy(b); !errors.Is(err, ErrMalformed) {
			t.Fatalf("DecodeBusy(% x): %v", b, err)
		}
	}
}

func TestReplyError(t *testing.T) {
	refused := Frame{Type: TypeRefused, Payload: EncodeRefusal(Refusal{RefuseSealed, "s"})}
	cases := []struct {
		name  string
		f     Frame
		want  error
		retry time.Duration
		code  RefusalCode
	}{
		{"ack", Frame{Type: TypeAck, Payload: []byte("body")}, nil, 0, 0},
		{"busy", Frame{Type: TypeBusy, Payload: EncodeBusy(40 * time.Millisecond)}, ErrBusy, 40 * time.Millisecond, 0},
		{"refused", refused, ErrRefused, 0, RefuseSealed},
		{"bad busy", Frame{Type: TypeBusy, Payload: []byte{1}}, ErrMalformed, 0, 0},
		{"bad refusal", Frame{Type: TypeRefused}, ErrMalformed, 0, 0},
		{"request as reply", Frame{Type: TypeShards}, ErrUnexpectedReply, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ReplyError(tc.f)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			retry, _ := RetryAfterOf(err)
			code, _ := RefusalCodeOf(err)
			if retry != tc.retry || code != tc.code {
				t.Fatalf("retry %v code %v", retry, code)
			}
		})
	}
}

func TestRefusalCodeNames(t *testing.T) {
	for code, want := range map[RefusalCode]string{RefuseStaleEpoch: "stale epoch", RefuseClosing: "closing", 500: "code(500)"} {
		if code.String() != want {
			t.Errorf("%d: %q, want %q", uint16(code), code.String(), want)
		}
	}
}
