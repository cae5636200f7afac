package update

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzVanilla: any bytes, bincode or JSON, decode or fail with an error —
// never a panic — and whatever decodes goes through FromVanilla and the
// native checks of the 2 KiB vector's public inputs without panicking.
// Seeded with the vector's bincode and JSON partition proofs.
//
//	go test -run '^$' -fuzz FuzzVanilla -fuzztime 30s ./update
func FuzzVanilla(f *testing.F) {
	m, dir, s, pub, _ := refgenVector(f)
	b, err := os.ReadFile(filepath.Join(dir, m.VanillaBincode[0]))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	j, err := os.ReadFile(filepath.Join(dir, "vanilla.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(j[1 : len(j)-1]) // the one object inside the array
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeVanilla(data)
		if err != nil {
			if p != nil {
				t.Fatal("a proof and an error")
			}
			return
		}
		if _, err := s.FromVanilla(p, ""); err != nil {
			return
		}
		_ = s.Verify(pub, p, 0, "")
	})
}
