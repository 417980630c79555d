package limits

import "testing"

func TestMemorySplit(t *testing.T) {
	for _, tc := range []struct {
		name                                   string
		m                                      Memory
		send, store, buf, input, inbound, outp int64
	}{
		{"1 GiB, 4 MiB buffers", Memory{Limit: 1 << 30, BufferBytes: 4 << 20}, 1 << 28, 3 << 28, 4 << 20, 1 << 27, 1 << 28, 1 << 27},
		{"buffer bounded by the send budget", Memory{Limit: 64 << 20, BufferBytes: 4 << 20}, 16 << 20, 48 << 20, 2 << 20, 8 << 20, 16 << 20, 8 << 20},
		{"tiny: two buffers at least", Memory{Limit: 64, BufferBytes: 1 << 20}, 16, 48, 2, 8, 16, 8},
		{"tinier still", Memory{Limit: 8, BufferBytes: 1 << 20}, 2, 6, 1, 2, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			got := []int64{m.Send(), m.Store(), m.SendBuffer(), m.Input(), m.Inbound(), m.Output()}
			want := []int64{tc.send, tc.store, tc.buf, tc.input, tc.inbound, tc.outp}
			for i, name := range []string{"Send", "Store", "SendBuffer", "Input", "Inbound", "Output"} {
				if got[i] != want[i] {
					t.Errorf("%s = %d, want %d", name, got[i], want[i])
				}
			}
			if m.Send()+m.Store() != m.Limit {
				t.Errorf("send %d + store %d != limit %d", m.Send(), m.Store(), m.Limit)
			}
		})
	}
}
