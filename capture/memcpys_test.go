package capture

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// TestMemcpys: the columns give back every field of every copy, sort as
// Capture.Sort sorted the list (by start, then correlation id, ties in
// their order), and read and write the JSON of the list.
func TestMemcpys(t *testing.T) {
	in := []Memcpy{
		{Kind: vocab.CopyHtoD, Src: vocab.MemPageable, Dst: vocab.MemDevice, Bytes: 4096, Start: 30, End: 40, CorrelationID: 7, Stream: 7, Device: 0, PID: 22},
		{Kind: vocab.CopyDtoH, Src: vocab.MemDevice, Dst: vocab.MemPinned, Bytes: 1 << 28, Start: 10, End: 20, CorrelationID: 9, Stream: 13, Device: 1, PID: 22},
		{Kind: vocab.CopyHtoD, Src: vocab.MemPinned, Dst: vocab.MemDevice, Bytes: 1, Start: 10, End: 11, CorrelationID: 8, Stream: 7, Device: 0, PID: 23},
		{Kind: vocab.CopyHtoD, Src: vocab.MemPageable, Dst: vocab.MemDevice, Bytes: 4096, Start: 30, End: 41, CorrelationID: 7, Stream: 7, Device: 0, PID: 24},
	}
	m := MemcpysOf(in...)
	if m.Len() != len(in) || !reflect.DeepEqual(m.Slice(), in) {
		t.Fatalf("columns give back %+v", m.Slice())
	}
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m)
	if err != nil || string(got) != string(want) {
		t.Fatalf("JSON %s, %v; the list's %s", got, err, want)
	}
	var back Memcpys
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back.Slice(), in) {
		t.Fatalf("read back %+v, %v", back.Slice(), err)
	}
	m.sort()
	order := []int{2, 1, 0, 3} // start 10 (corr 8, 9), then start 30: corr 7 twice, in their order
	for i, k := range order {
		if m.At(i) != in[k] || m.CorrelationID(i) != in[k].CorrelationID {
			t.Errorf("sorted %d: %+v, want %+v", i, m.At(i), in[k])
		}
	}
	c := Capture{Path: "x"}
	if b, _ := json.Marshal(c); string(b) != `{"path":"x","format":"","meta":{}}` {
		t.Errorf("a capture without copies: %s", b)
	}
}
