package post

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzVanilla: any bytes, bincode or JSON, decode as one sector's PoSt
// vanilla proof or fail with an error — never a panic — and whatever
// decodes goes, beside the 2 KiB Window vector's other sectors, through
// Partitions and the native verification of every partition without
// panicking. Seeded with the vector's bincode and JSON sector proofs.
//
//	go test -run '^$' -fuzz FuzzVanilla -fuzztime 30s ./post
func FuzzVanilla(f *testing.F) {
	const name = "window-2k-v1_2"
	_, dir := loadPoSt(f, name)
	s, raw, proofs, rnd := loadVanilla(f, name)
	var objs []json.RawMessage
	if err := json.Unmarshal(raw, &objs); err != nil {
		f.Fatal(err)
	}
	for _, o := range objs {
		f.Add([]byte(o))
	}
	bins, err := filepath.Glob(filepath.Join(dir, "vanilla-*.bin"))
	if err != nil || len(bins) == 0 {
		f.Fatalf("no bincode proofs in %s: %v", dir, err)
	}
	for _, bin := range bins {
		b, err := os.ReadFile(bin)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeSectorProof(data)
		if (p == nil) == (err == nil) {
			t.Fatalf("bincode: want a proof or an error, got %v and %v", p != nil, err)
		}
		if err != nil {
			if p, err = DecodeSectorProofJSON(data); (p == nil) == (err == nil) {
				t.Fatalf("JSON: want a proof or an error, got %v and %v", p != nil, err)
			}
		}
		if err != nil {
			return
		}
		all := append([]SectorProof{*p}, proofs[1:]...)
		parts, pub, err := Partitions(s, all)
		if err != nil {
			return
		}
		for k, part := range parts {
			_ = s.verify(rnd, pub, part, k)
		}
	})
}
